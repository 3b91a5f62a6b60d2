/**
 * A shard node: hosts shard copies (one engine `Shard` each) and answers the
 * coordinator's calls (rpc `ShardCalls`). In the embedded server it is reached
 * through the in-process transport; as `tessera node` over WebSocket.
 */
import { join } from 'node:path';
import {
  type CommitLog, COMMIT_LOG_DIRECTORY, DocumentCacheBudget, documentInfo, jsonFaithful, openCommitLog, type EngineLogger, SCAN_DOCUMENTS_MAX, ScriptRunner, Shard, SHARD_DEFAULTS, SILENT_LOGGER, StoreMemoryBudget, type ScriptRunnerOptions, type ShardIndexMetrics, type ShardOptions,
  type StoredDocument, type WriteResult,
} from '@tessera/engine';
import { toTesseraError } from '@tessera/errors';
import { changeOf, DEFERRED, isBlobBytes } from '@tessera/rpc';
import type {
  DocumentBody, DocumentInfoReply, DocumentReply, NodeInfoReply, NodeStatsReply, ScanReply, SearchReply, ShardCallHandlers, ShardCallName, ShardCalls, ShardRef,
  ShardStatsReply, WriteReply,
} from '@tessera/rpc';
import { DirectorySizes } from './directory-bytes.js';
import { nodeErrors } from './errors.js';
import { HeldSchemas, type SchemaCall } from './held-schemas.js';
import { contentWithBlobs, changes, follow, positionOf, replicate } from './replication/calls.js';
import { shardDirectory } from './shard-paths.js';
import { SnapshotViews } from './snapshot-views.js';
import { DirectWrites, type RelayPeers } from './direct-writes.js';

export interface ShardNodeOptions {
  name: string;
  dataDir: string;
  /** Decoded-document cache bytes of the node: one budget shared by all its shard copies (engine default 48 MiB). */
  documentCacheBytesMax?: number;
  /** LevelDB write buffer (memtable) bytes per shard copy. */
  storeWriteBufferBytes?: number;
  /** What the LevelDB databases of all the node's copies may hold in memory together (their memtables; engine default 48 MiB). */
  storeMemoryBytesMax?: number;
  /** Stored-content volumes of every shard copy (roll-over size). */
  content?: ShardOptions['content'];
  /** Search-index options of every shard copy (write buffer budget before a flush, merge policy). */
  index?: ShardOptions['index'];
  /** Operation-log entries each shard copy keeps for replica catch-up (engine default 100,000). */
  oplogEntriesMax?: number;
  /** Budgets and cache of the Lua scripts this node's primaries run (API.md §11, §13). */
  scripts?: ScriptRunnerOptions;
  /** Runs before a write as primary (`doc.write`, `doc.writeMany`); throws to refuse it (primary-lease.ts). */
  primaryWriteGate?: (where: ShardRef) => void;
  /**
   * Make the `?commit` batches of the node's copies durable in one commit log (`<dataDir>/#commit-log`, engine
   * store/commit-log.ts), one fdatasync per round for all of them. Default true; false: each copy syncs its
   * LevelDB. The log must have one writer: the worker threads of `serve --shard-workers` share a data directory, so
   * theirs is off and the process replays what a run without them left (`replayCommitLog`) before they start.
   */
  commitLog?: boolean;
  /** How this node reaches other nodes to relay its direct writes as primary (the process's relay connections); without, it takes none that need a relay. */
  relayPeers?: RelayPeers;
  /** The node's logger (a child of the process's); each shard copy logs through a child bound to its index and shard. Default: silent. */
  log?: EngineLogger;
}

export class ShardNode {
  private readonly shards = new Map<string, Promise<Shard>>();
  /** The copies of `shards` that are open, for the calls answered without waiting (`handleNow`). */
  private readonly opened = new Map<string, Shard>();
  /** Copies being deleted: an open of the same copy waits, so it never races the directory's removal. */
  private readonly drops = new Map<string, Promise<void>>();
  private closing = false;
  private readonly sizes = new DirectorySizes();
  /** Point-in-time views open for snapshots (`shard.snapshot`). */
  private readonly views = new SnapshotViews();
  /** The schema each copy was last sent, for the calls that name it (`schemaId`) instead of carrying it. */
  private readonly schemas = new HeldSchemas();
  /** Which primaries take writes straight from any coordinator (`doc.write` with `direct`), and their relays to the replicas. */
  private readonly direct: DirectWrites;
  /** The process's one script runner, started by `warm` or with the first shard copy. */
  private scripts: Promise<ScriptRunner | undefined> | undefined;

  private readonly log: EngineLogger;
  /** One decoded-document budget for every copy of the node, so its memory does not grow with the number of shards. */
  private readonly documentCache: DocumentCacheBudget;
  /** One bound on the LevelDB memory of every copy of the node, likewise. */
  private readonly storeMemory: StoreMemoryBudget;
  /** The node's commit log, opened with the first copy: `?commit` writes of all its copies share its fsyncs. */
  private commitLog: Promise<CommitLog> | undefined;

  constructor(private readonly options: ShardNodeOptions) {
    this.log = options.log ?? SILENT_LOGGER;
    this.direct = new DirectWrites(options.relayPeers);
    this.documentCache = new DocumentCacheBudget(options.documentCacheBytesMax ?? SHARD_DEFAULTS.documentCacheBytesMax);
    this.storeMemory = new StoreMemoryBudget(options.storeMemoryBytesMax === undefined ? {} : { bytesMax: options.storeMemoryBytesMax });
  }

  get name(): string {
    return this.options.name;
  }

  /**
   * Start now what the first shard copy opened would otherwise wait for (the
   * script runner: a Lua sandbox, ~0.1 s), so that creating an index on a
   * fresh server does not. Server processes call it at startup.
   */
  warm(): void {
    void this.scriptRunner();
  }

  /**
   * The RPC handler: the method names one of ShardCalls' handlers, which
   * checks what it relies on of the params (the shard, IDs, limits) and
   * answers. Params arrive as the other side sent them: from a coordinator,
   * which calls through the same map. A call that names its schema
   * (`schemaId`) is given it first, for every method alike.
   */
  readonly handle = async (method: string, params: unknown): Promise<unknown> => {
    if (this.closing) throw nodeErrors.closing();
    if (!this.isShardCall(method)) throw nodeErrors.badCall(method, 'unknown method');
    return this.serve(method, this.withSchema(method, params) as ShardCalls[typeof method][0]);
  };

  private withSchema(method: string, params: unknown): unknown {
    if (params === null || typeof params !== 'object' || !Object.hasOwn(params, 'schemaId')) return params;
    return this.schemas.resolve(shardKey(ref(method, params)), method, params as SchemaCall);
  }

  private isShardCall(method: string): method is ShardCallName {
    return Object.hasOwn(this.handlers, method);
  }

  /** One call through its handler: params and result are the map's, for whichever method. */
  private serve<M extends ShardCallName>(method: M, params: ShardCalls[M][0]): Promise<ShardCalls[M][1]> {
    return this.handlers[method](params);
  }

  /** One handler per method of ShardCalls (rpc `protocol.ts`), checked by the compiler against it. */
  private readonly handlers: ShardCallHandlers = {
    'doc.get': async (p) => {
      const shard = await this.open(ref('doc.get', p));
      const doc = await shard.get(docId('doc.get', p.id));
      return doc === undefined ? null : documentReply(doc, p.bodiesAsJson === true);
    },
    'doc.write': async (call) => {
      const where = ref('doc.write', call);
      this.options.primaryWriteGate?.(where);
      const key = shardKey(where);
      const admitted = call.direct === true ? this.direct.admit(key, where, call.term) : undefined;
      try {
        const shard = await this.open(where);
        docId('doc.write', call.id);
        if (call.content !== undefined) checkContent('doc.write', call.content);
        let reply: WriteReply;
        try {
          reply = writeReplyOf(await shard.write(call));
        } finally {
          // Its seq is taken: a push that adds a replica waits no longer for it (direct-writes.ts).
          admitted?.ran();
        }
        if (admitted !== undefined && admitted.replicas.length > 0) {
          const term = call.term as number;
          const failed = await this.direct.relay(key, where, term, admitted.replicas, [changeOf(reply, term, call.content)], call.commit === true, call.schema);
          // A copy: the engine's result is its own.
          if (failed.length > 0) return { ...reply, relayFailed: failed };
        }
        return reply;
      } finally {
        admitted?.finished();
      }
    },
    'doc.info': async (p) => {
      const shard = await this.open(ref('doc.info', p));
      const doc = await shard.get(docId('doc.info', p.id));
      if (doc === undefined) return null;
      const schema = p.schema !== null && typeof p.schema === 'object' ? p.schema : shard.indexSchema;
      const { terms, values } = documentInfo(schema, doc.indexed ?? doc.body, doc.id, doc.version);
      const reply: DocumentInfoReply = { id: doc.id, docid: doc.docid, version: doc.version, terms, values };
      if (doc.content !== undefined) reply.content = doc.content.map((link) => ({ ...link }));
      return reply;
    },
    'doc.content': async (call) => {
      const shard = await this.open(ref('doc.content', call));
      return shard.readContent(call, call.from, call.length, call.verify === true);
    },
    'doc.writeMany': async (call) => {
      const method = 'doc.writeMany';
      if (!Array.isArray(call.writes)) throw nodeErrors.badCall(method, 'writes must be an array');
      const where = ref(method, call);
      this.options.primaryWriteGate?.(where);
      const shard = await this.open(where);
      // All at once: the shard's group commit turns them into one LevelDB batch.
      const outcomes = await shard.writeMany(call.writes.map((w) => ({
        op: w.op, id: docId(method, w.id), body: w.body, indexed: w.indexed, patch: w.patch, expectedVersions: w.expectedVersions, upsert: w.upsert,
      })), { commit: call.commit, schema: call.schema, term: call.term });
      return outcomes.map((outcome) => (outcome.ok ? writeReplyOf(outcome.value) : { error: toTesseraError(outcome.error).toJSON() }));
    },
    'shard.search': async (call) => {
      const shard = await this.open(ref('shard.search', call));
      const reply: SearchReply = await shard.search({
        query: call.query, sort: call.sort,
        k: typeof call.k === 'number' && call.k >= 0 ? call.k : 0, countOnly: call.countOnly, schema: call.schema, aggs: call.aggs, after: call.after, highlight: call.highlight,
        documents: call.documents !== false,
      });
      for (const hit of reply.hits) withSourceJson(hit, call.bodiesAsJson === true);
      return reply;
    },
    'shard.scan': async (call) => {
      const method = 'shard.scan';
      if (!Number.isInteger(call.limit) || call.limit < 1 || call.limit > SCAN_DOCUMENTS_MAX) {
        throw nodeErrors.badCall(method, `limit must be an integer from 1 to ${SCAN_DOCUMENTS_MAX}`);
      }
      const where = ref(method, call);
      const shard = await this.open(where);
      const after = call.after === undefined || call.after === null ? undefined : docId(method, call.after);
      if (call.snapshot !== undefined && typeof call.snapshot !== 'string') throw nodeErrors.badCall(method, 'snapshot must be a string');
      const source = call.snapshot === undefined ? shard : this.views.get(where, shardKey(where), call.snapshot);
      const page = await source.scan(after, call.limit);
      const reply: ScanReply = {
        documents: await Promise.all(page.documents.map(async (d) => {
          if (call.origins !== true) {
            const document: ScanReply['documents'][number] = { id: d.id, version: d.version, body: d.body };
            if (call.content === true && d.content !== undefined) document.content = await contentWithBlobs(shard, d.content);
            return document;
          }
          // A full copy for a replica or a snapshot: the blobs go with their documents.
          const document: ScanReply['documents'][number] = { id: d.id, version: d.version, body: d.body, originTerm: d.term ?? 1, originSeq: d.originSeq ?? d.seq };
          if (d.indexed !== undefined) document.indexed = d.indexed;
          if (d.content !== undefined) document.content = await contentWithBlobs(shard, d.content);
          return document;
        })),
        done: page.done,
      };
      return reply;
    },
    'shard.snapshot': async (p) => {
      const where = ref('shard.snapshot', p);
      return this.views.open(await this.open(where), shardKey(where));
    },
    'shard.release': async (p) => {
      ref('shard.release', p);
      if (typeof p.snapshot !== 'string') throw nodeErrors.badCall('shard.release', 'snapshot must be a string');
      await this.views.release(p.snapshot);
      return null;
    },
    'shard.open': (p) => this.shardStats('shard.open', p),
    'shard.stats': (p) => this.shardStats('shard.stats', p),
    'doc.replicate': async (call) => replicate(await this.open(ref('doc.replicate', call)), call),
    'shard.changes': async (call) => changes(await this.open(ref('shard.changes', call)), call),
    'shard.follow': async (call) => follow(await this.open(ref('shard.follow', call)), call),
    'shard.placement': async (call) => {
      const method = 'shard.placement';
      const where = ref(method, call);
      if (!Number.isSafeInteger(call.term) || !Number.isSafeInteger(call.revision) || typeof call.direct !== 'boolean' || !Array.isArray(call.replicas)
        || !call.replicas.every((r) => typeof r?.node === 'string' && typeof r.url === 'string')) {
        throw nodeErrors.badCall(method, 'term and revision must be integers, direct a boolean, replicas a list of {node, url}');
      }
      return { revision: await this.direct.place(shardKey(where), call) };
    },
    'shard.commit': async (p) => {
      await (await this.open(ref('shard.commit', p))).commit();
      return null;
    },
    'shard.drop': async (p) => {
      await this.drop(ref('shard.drop', p));
      return null;
    },
    'node.info': () => this.info(),
    'node.stats': () => this.stats(),
  };

  /** `shard.open` and `shard.stats`: the copy's figures and replication position (and its lengths, when asked). */
  private async shardStats(method: string, p: ShardRef & { lengths?: boolean }): Promise<ShardStatsReply> {
    const shard = await this.open(ref(method, p));
    const reply: ShardStatsReply = { ...shard.stats(), replication: positionOf(shard) };
    if (p.lengths === true) reply.lengths = shard.documentLengths();
    return reply;
  }

  /**
   * The calls answered without waiting (the in-process transport's
   * `callNow`): `doc.get` of a document in an open copy's cache. Anything
   * else — another method, a copy not open yet, a miss, a closing node — is
   * DEFERRED to `handle`, which answers it in full.
   */
  readonly handleNow = (method: string, params: unknown): unknown => {
    if (method !== 'doc.get' || this.closing) return DEFERRED;
    const p = params as ShardCalls['doc.get'][0];
    const shard = this.opened.get(shardKey(ref(method, p)));
    if (shard === undefined) return DEFERRED;
    const doc = shard.cached(docId(method, p.id));
    return doc === undefined ? DEFERRED : documentReply(doc, p.bodiesAsJson === true);
  };

  /** Open (creating if needed) a shard copy; concurrent opens share one. */
  open(where: ShardRef): Promise<Shard> {
    const key = shardKey(where);
    const existing = this.shards.get(key);
    if (existing) return existing;
    const options = {
      path: shardDirectory(this.options.dataDir, where.index, where.shard),
      documentCache: this.documentCache,
      storeWriteBufferBytes: this.options.storeWriteBufferBytes,
      storeMemory: this.storeMemory,
      content: this.options.content,
      index: this.options.index,
      oplogEntriesMax: this.options.oplogEntriesMax,
    };
    const dropping = this.drops.get(key);
    const log = this.log.child({ index: where.index, shard: where.shard });
    const start = async (): Promise<Shard> => {
      const [scripts, commitLog] = await Promise.all([this.scriptRunner(), this.options.commitLog === false ? undefined : this.openCommitLog()]);
      return Shard.open({ ...options, scripts, log, commitLog });
    };
    const opening = dropping === undefined ? start() : dropping.then(start);
    this.shards.set(key, opening);
    opening.then((shard) => {
      // Unless dropped or closed meanwhile.
      if (this.shards.get(key) === opening) this.opened.set(key, shard);
    }, (err: unknown) => {
      this.shards.delete(key);
      log.error({ err }, 'could not open the shard copy');
    });
    return opening;
  }

  async drop(where: ShardRef): Promise<void> {
    const key = shardKey(where);
    const opening = this.shards.get(key) ?? this.open(where);
    this.shards.delete(key);
    this.opened.delete(key);
    this.schemas.forget(key);
    this.direct.forget(key);
    const dropping = opening.then(async (shard) => {
      await this.views.releaseAll(key);
      this.sizes.forget(shard.path);
      await shard.destroy();
      this.log.info({ index: where.index, shard: where.shard }, 'shard copy dropped');
    });
    const settled = dropping.catch(() => undefined);
    this.drops.set(key, settled);
    void settled.then(() => {
      if (this.drops.get(key) === settled) this.drops.delete(key);
    });
    await dropping;
  }

  async info(): Promise<NodeInfoReply> {
    const shards: NodeInfoReply['shards'] = [];
    for (const [key, opening] of this.shards) {
      const shard = await opening.catch(() => undefined);
      if (!shard) continue;
      const stats = shard.stats();
      const [index, number] = splitKey(key);
      shards.push({ index, shard: number, seq: stats.seq, documents: stats.documents, checkpoint: shard.replicationState().checkpoint });
    }
    return { name: this.options.name, shards };
  }

  /**
   * Figures of every open shard copy for `/:metrics` and `/readyz`: documents, bytes on disk, LevelDB batch write
   * times, the search index's segments, flushes and merges, and a flush that keeps failing.
   */
  async stats(): Promise<NodeStatsReply> {
    const open = await Promise.all([...this.shards].map(async ([key, opening]) => {
      const shard = await opening.catch(() => undefined);
      if (shard === undefined) return undefined;
      const [index, number] = splitKey(key);
      const { documents, seq } = shard.stats();
      const metrics = shard.metrics();
      const copy: NodeStatsReply['shards'][number] = {
        index, shard: number, documents, seq, bytes: await this.sizes.bytes(shard.path), commitSeconds: metrics.commitSeconds, search: searchIndexStats(metrics.index),
      };
      if (metrics.flushFailure !== null) copy.flushFailure = metrics.flushFailure;
      return copy;
    }));
    const reply: NodeStatsReply = { name: this.options.name, shards: open.filter((s) => s !== undefined), store: this.storeMemory.stats() };
    const runner = await this.scripts;
    if (runner !== undefined) {
      const { cacheHits, cacheMisses, compiles, runs, failures } = runner.stats();
      reply.scripts = { cacheHits, cacheMisses, compiles, runs, failures };
    }
    return reply;
  }

  /** Stop answering and close every shard copy (flushing pending batches). */
  async close(): Promise<void> {
    this.closing = true;
    const all = [...this.shards.values()];
    this.shards.clear();
    this.opened.clear();
    this.schemas.clear();
    await this.views.releaseAll();
    await Promise.all(all.map(async (opening) => (await opening.catch(() => undefined))?.close()));
    await (await this.scripts)?.close();
    await (await this.commitLog?.catch(() => undefined))?.close();
  }

  /** Opened (the last process's files replayed) before the first copy opens; a failed open is retried with the next copy. */
  private openCommitLog(): Promise<CommitLog> {
    this.commitLog ??= replayCommitLog(this.options.dataDir, this.log).then((log) => log, (err: unknown) => {
      this.commitLog = undefined;
      throw err;
    });
    return this.commitLog;
  }

  /** The script runner (a failed start leaves scripted writes answering 503 and is retried with the next copy opened). */
  private scriptRunner(): Promise<ScriptRunner | undefined> {
    this.scripts ??= ScriptRunner.create(this.options.scripts).catch(() => {
      this.scripts = undefined;
      return undefined;
    });
    return this.scripts;
  }

}

/** The search index's figures a scrape sums per node and index. */
function searchIndexStats(m: ShardIndexMetrics): NodeStatsReply['shards'][number]['search'] {
  return {
    segments: m.segments, segmentBytes: m.segmentBytes, writeBufferBytes: m.writeBufferBytes, flushes: m.flushes, flushFailures: m.flushFailures,
    merges: m.merges, mergeFailures: m.mergeFailures, writeHolds: m.writeHolds,
  };
}

function shardKey(where: ShardRef): string {
  return `${where.shard}${where.index}`;
}

function splitKey(key: string): [string, number] {
  const slash = key.indexOf('/');
  return [key.slice(slash), Number(key.slice(0, slash))];
}

/** The call's shard copy, checked: everything else of a call is about a copy. */
function ref(method: string, p: { index?: unknown; shard?: unknown } | null | undefined): ShardRef {
  if (!p || typeof p.index !== 'string' || !p.index.startsWith('/') || !p.index.endsWith('/')) {
    throw nodeErrors.badCall(method, 'index must be an index path');
  }
  if (typeof p.shard !== 'number' || !Number.isInteger(p.shard) || p.shard < 1) {
    throw nodeErrors.badCall(method, 'shard must be a positive integer');
  }
  return { index: p.index, shard: p.shard };
}

/** A write's result as its reply; the common case (no content) is passed as is — no copy on the hot path. */
function writeReplyOf(result: WriteResult): WriteReply {
  if (result.content === undefined) return result;
  const reply: WriteReply = { id: result.id, docid: result.docid, version: result.version, seq: result.seq, body: result.body, deleted: result.deleted,
    content: result.content.map((link) => ({ ...link })) };
  if (result.indexed !== undefined) reply.indexed = result.indexed;
  return reply;
}

function checkContent(method: string, content: { type?: unknown; bytes?: unknown } | null): void {
  if (content === null || typeof content !== 'object' || typeof content.type !== 'string' || !isBlobBytes(content.bytes)) {
    throw nodeErrors.badCall(method, 'content must be { type: string, bytes: binary or an array of binary pieces }');
  }
}


function docId(method: string, id: unknown): string | number {
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id;
  throw nodeErrors.badCall(method, 'id must be a string or a number');
}

/**
 * A stored document as `doc.get` answers it: a cached document's JSON text
 * alone (StoredDocument.bodyJson; `bodyOf` parses it where a caller needs
 * the object); `bodiesAsJson`: any other body as its JSON alone when that
 * carries it exactly (GetCall).
 */
function documentReply(doc: StoredDocument, bodiesAsJson: boolean): DocumentReply {
  const reply: DocumentReply = { id: doc.id, docid: doc.docid, version: doc.version };
  if (doc.bodyJson === undefined) reply.body = doc.body;
  else reply.bodyJson = doc.bodyJson;
  if (doc.content !== undefined) reply.content = doc.content.map((link) => ({ ...link }));
  withSourceJson(reply, bodiesAsJson);
  return reply;
}

/**
 * A reply's `bodyJson`, from its body (none to make when the document gave
 * its text); with `jsonAlone` (the caller is across a wire:
 * GetCall/SearchCall.bodiesAsJson) the body is left out when that JSON
 * stands for it exactly: sent once, as text, not encoded and decoded a
 * second time.
 */
function withSourceJson(reply: { body?: DocumentBody; bodyJson?: string }, jsonAlone: boolean): void {
  const source = reply.body === undefined || reply.bodyJson !== undefined ? undefined : sourceJson(reply.body);
  if (source === undefined) return;
  reply.bodyJson = source.json;
  if (jsonAlone && source.faithful) reply.body = undefined;
}

/**
 * A stored document's compact JSON, encoded once per body object, for the
 * documents the cache keeps decoded (content entries, an indexed form, a
 * body JSON cannot carry exactly): stored bodies are never mutated (a write
 * makes a new one), and the cache hands out the same object until it
 * changes, so repeated GETs of a document reuse the text. Undefined for a
 * body JSON cannot carry at all (a BigInt).
 */
const SOURCE_JSON = new WeakMap<object, SourceJson | null>();
interface SourceJson {
  json: string;
  /** JSON.parse of `json` gives the body back exactly (jsonFaithful). */
  faithful: boolean;
}
function sourceJson(body: object): SourceJson | undefined {
  let source = SOURCE_JSON.get(body);
  if (source === undefined) {
    try {
      source = { json: JSON.stringify(body), faithful: jsonFaithful(body) };
    } catch {
      source = null;
    }
    SOURCE_JSON.set(body, source);
  }
  return source ?? undefined;
}

/**
 * Open the commit log of the node in `dataDir`, replaying into their copies
 * the files a crashed or powered-off run left there, and log what that found.
 */
export async function replayCommitLog(dataDir: string, log: EngineLogger): Promise<CommitLog> {
  const { log: commitLog, recovery } = await openCommitLog(join(dataDir, COMMIT_LOG_DIRECTORY));
  if (recovery.failed.length > 0) {
    log.error({ failed: recovery.failed.map(({ path, error }) => ({ path, err: error })) },
      'commit log: copies could not be brought up to date; their files stay for the next start');
  }
  if (recovery.records > 0) log.info({ files: recovery.files, records: recovery.records, replayed: recovery.replayed }, 'commit log replayed');
  return commitLog;
}
