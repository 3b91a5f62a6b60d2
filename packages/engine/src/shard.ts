/**
 * One shard copy: a classic-level database holding its documents, #docid map,
 * counters and operation log (key spaces: store/keys.ts), with
 *
 * - per-document serialisation: `mutate` reads the current document, lets the
 *   caller decide, and stores the result; writes to one document run one after
 *   another (a Map of in-flight promise chains, an entry per document with work
 *   in flight, removed when done);
 * - group commit (store/group-commit.ts): every change goes into the next
 *   LevelDB batch, together with its oplog entry and the counters, so a batch
 *   is all-or-nothing and the counters are exact after any crash; concurrent
 *   `commit` writes share one fsync;
 * - a document cache (documents/document-cache.ts) updated only once a batch
 *   is in LevelDB, so a GET never shows an unacknowledged write;
 * - replication (replication/): the primary term this copy has seen (older
 *   ones refused), `applyReplicated` for a replica — a primary's changes
 *   stored only when newer by origin (term, primary seq), with tombstones for
 *   deletions — and the copy's checkpoint, persisted with the batches.
 *
 * A write's promise resolves once its batch is in LevelDB's log: without
 * `commit` it survives a process kill, with `commit` (sync) a power loss.
 *
 * The search engine (schema, terms, postings, segments) will hang off the same
 * change stream; it is not built yet.
 */
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { TesseraError } from '@tessera/errors';
import { DocumentCache, estimateDocumentBytes } from './documents/document-cache.js';
import { documentIdKey, validateDocumentId } from './documents/document-id.js';
import { isPlainObject } from './documents/plain-object.js';
import type {
  ContentLink, DocumentBody, DocumentId, DocumentLengths, Mutation, OplogEntry, ShardMetrics, ShardStats, StoredDocument, WriteRequest, WriteResult,
} from './documents/types.js';
import { ContentVolumes, type BlobLocation, type ContentVolumesOptions } from './content/volumes.js';
import { decideWrite, validateWriteRequest } from './documents/write.js';
import { engineErrors } from './errors.js';
import { GetCoalescer } from './store/get-coalescer.js';
import { GroupCommit, type BatchOutcome } from './store/group-commit.js';
import { LatencyHistogram } from './store/latency-histogram.js';
import {
  decodeIdTag, docidKey, DOCID_MAX, documentKey, encodeIdTag, META_COUNTERS, META_FORMAT, META_REPLICATION, META_SCHEMA, oplogKey, PREFIX_DOCUMENTS, spaceRange,
} from './store/keys.js';
import { ShardIndex, type ShardIndexOptions } from './indexing/index.js';
import { startTextWorker } from './indexing/text-analysis.js';
import type { ScriptRunner } from '@tessera/scripting';
import type { IndexableDocument } from './segments/index.js';
import { SegmentView } from './indexing/index-view.js';
import { planAggregations } from './collect/index.js';
import { search, type SearchReader } from './search/index.js';
import type { AggregationRequest, AggregationsPartial, Query, SortKey } from '@tessera/search-model';
import { Oplog, OPLOG_READ_ENTRIES_MAX, type ShardDatabase } from './store/oplog.js';
import {
  decodeCounters, decodeDocumentRecord, decodeFormat, decodeReplicationState, encodeBody, encodeCounters, encodeDocumentRecord, encodeFormat,
  encodeOplogEntry, encodeReplicationState, SHARD_FORMAT, type ShardCounters,
} from './store/records.js';
import {
  INITIAL_REPLICATION_STATE, isNewer, originOf, ReplicaPosition, Tombstones, validateReplicatedChanges, validateTerm,
  type Origin, type ReplicatedChange, type ReplicateOutcome, type ReplicationState,
} from './replication/index.js';

export interface ShardOptions {
  /** Directory of the shard copy's LevelDB database (created if missing). */
  path: string;
  /** Budget of the decoded-document cache, estimated bytes. Default 64 MiB; 0 disables it. */
  documentCacheBytesMax?: number | undefined;
  /** How long the first write of an idle shard waits for others to share its batch, ms. Default 0 (next event-loop turn). */
  groupCommitWindowMs?: number | undefined;
  /** Document changes per LevelDB batch at most; writers beyond wait for the next batch. Default 1,000. */
  batchEntriesMax?: number | undefined;
  /** Operation-log entries kept (older ones are trimmed in the background). Default 100,000; at least `batchEntriesMax`. */
  oplogEntriesMax?: number | undefined;
  /**
   * LevelDB's in-memory write buffer (memtable) of the shard's database, bytes. Default 32 MiB (LevelDB's own is
   * 4 MiB): a bulk load then writes fewer, larger level-0 tables and compaction rewrites far less (RESTORE of the
   * Debian corpus: 3.6 s of compaction CPU at 4 MiB, under 1 s at 32). Up to twice this is held while one is written out.
   */
  storeWriteBufferBytes?: number | undefined;
  /**
   * Analyse the text of bulk writes (WriteRequest.bulk) on the process's analysis thread, overlapping the LevelDB
   * write (indexing/text-analysis.ts). Default true; false analyses on the event loop. The terms are the same.
   */
  analysisThread?: boolean | undefined;
  /** Options of the search index (write buffer budget, merge policy). */
  index?: ShardIndexOptions | undefined;
  /** Runs the `_script` of writes (API.md §11; one runner per process); without it such a write is a 503. */
  scripts?: ScriptRunner | undefined;
  /** Stored content volumes (API.md §6), in `<path>/content`. */
  content?: ContentVolumesOptions | undefined;
}

/** ShardOptions with every default applied and checked. */
interface ShardSettings {
  documentCacheBytesMax: number;
  groupCommitWindowMs: number;
  batchEntriesMax: number;
  oplogEntriesMax: number;
  storeWriteBufferBytes: number;
  analysisThread: boolean;
}

export const SHARD_DEFAULTS = {
  documentCacheBytesMax: 64 * 1024 * 1024,
  groupCommitWindowMs: 0,
  batchEntriesMax: 1_000,
  oplogEntriesMax: 100_000,
  storeWriteBufferBytes: 32 * 1024 * 1024,
} as const;

export const STORE_WRITE_BUFFER_BYTES_MIN = 64 * 1024;
export const STORE_WRITE_BUFFER_BYTES_MAX = 1024 * 1024 * 1024;

/** Documents per `scan` page at most (the caller picks the page size below it). */
export const SCAN_DOCUMENTS_MAX = 10_000;
/** Encoded bytes after which a `scan` page ends early: pages of large documents stay small. */
export const SCAN_PAGE_BYTES_MAX = 4 * 1024 * 1024;

/** A group-commit window beyond this is a configuration mistake, not a tuning. */
const GROUP_COMMIT_WINDOW_MS_MAX = 1_000;
/** A LevelDB batch is built and held in memory whole: bound it. */
const BATCH_ENTRIES_MAX_LIMIT = 100_000;
/** A search without a query matches every document. */
const ALL_QUERY: Query = { kind: 'all' };

export interface ShardSearchRequest {
  /** The parsed query (@tessera/search-model `parseQuery`…: the coordinator parses it once); absent = everything. */
  query?: Query | undefined;
  /** Parsed sort keys (§9.5); absent = by relevance. */
  sort?: readonly SortKey[] | undefined;
  /** Best hits wanted (offset + limit); 0 counts only. */
  k: number;
  countOnly?: boolean | undefined;
  schema?: Record<string, unknown> | undefined;
  /** Parsed `_aggs` (API.md §10, `parseAggregations`): bound to the schema here, aggregated over every match. */
  aggs?: readonly AggregationRequest[] | undefined;
}

export interface ShardSearchResult {
  total: number;
  hits: Array<{ id: DocumentId; docid: number; version: number; body: DocumentBody; score: number; sortValues?: Array<number | string | null> }>;
  sortOrders: Array<'asc' | 'desc'>;
  /** This shard's partial of `aggs`, for the coordinator to merge. */
  aggregations?: AggregationsPartial;
}

export interface MutateOptions {
  /** Resolve only once the change is durable (its batch is a sync write). */
  commit?: boolean | undefined;
  /** The index schema to index the document with (sent by the coordinator with each write). */
  schema?: Record<string, unknown> | undefined;
  /** The primary term the write is made under; refused (503 stale_primary_term) when older than one this copy has seen. */
  term?: number | undefined;
  /** Part of a bulk load: the document written is not cached (WriteRequest.bulk). */
  bulk?: boolean | undefined;
}

/** A copy's replication position (replication/position.ts) and how far back its operation log reaches. */
export interface ShardReplicationState extends ReplicationState {
  /** Lowest seq the operation log may still hold: catch-up from below it needs a full copy. */
  oplogFirstSeq: number;
}

/** What one write hands to the batch writer; `barrier` carries no change (commit(), recovery). */
interface Change {
  readonly kind: 'put' | 'delete' | 'barrier';
  /** In-memory ID key (documents/document-id.ts). */
  readonly key: string;
  readonly id: DocumentId;
  readonly documentKey: Buffer;
  /** The new version (a delete's too: replicas apply only newer versions). */
  readonly version: number;
  /** The document's #docid; 0 for a put that creates it (assigned in the batch). */
  readonly docid: number;
  /** The primary term the version is written in. */
  readonly originTerm: number;
  /** The primary's seq, for a replicated change (a copy's own writes take the seq the batch assigns). */
  readonly originSeq?: number | undefined;
  readonly body: DocumentBody | undefined;
  readonly bodyBytes: Uint8Array | undefined;
  /** A put's stored content entries (undefined or empty: none). */
  readonly content?: readonly ContentLink[] | undefined;
  /** A put's indexed form, when `_store: false` fields make it differ from `body`. */
  readonly indexed?: DocumentBody | undefined;
  /** `stateEpoch` when the current document was read (see `recover`). */
  readonly epoch: number;
  /** A put's terms and values, computed before the write is queued (a schema 400 writes nothing). */
  terms?: IndexableDocument | null;
  /** The schema the terms were computed with, as JSON, when it is newer than the stored one. */
  schemaJson?: string;
  /** A bulk load's: not put in the document cache once written, text analysed on the analysis thread. */
  uncached?: boolean;
}

interface ReadFlight {
  /** A write to this document completed after the read began: don't cache what it returns. */
  stale: boolean;
  promise: Promise<StoredDocument | undefined>;
}

const BARRIER: Change = {
  kind: 'barrier', key: '', id: '', documentKey: Buffer.alloc(0), version: 0, docid: 0, originTerm: 0, body: undefined, bodyBytes: undefined, epoch: -1,
};

const noop = (): void => {};

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** What the writes of one `writeMany` share. */
export interface BulkWriteOptions {
  /** Answer once durable (one sync batch). */
  commit?: boolean;
  /** The index schema to index the results with. */
  schema?: Record<string, unknown>;
  /** The primary term the coordinator writes under. */
  term?: number;
}

export class Shard {
  private counters: ShardCounters;
  private readonly cache: DocumentCache;
  private readonly writer: GroupCommit<Change, WriteResult | null>;
  private readonly oplog: Oplog;
  private readonly reader: GetCoalescer;
  /** Per-document write chains: the tail of each chain (never rejects). */
  private readonly locks = new Map<string, Promise<void>>();
  /** Document reads in flight, one per ID (concurrent misses share one LevelDB get). */
  private readonly reads = new Map<string, ReadFlight>();
  /** Bumped when a reopen finds that a failed batch did reach the disk: decisions made before are void. */
  private stateEpoch = 0;
  private recoveryNeeded = false;
  /** A barrier is queued to run the recovery (at most one at a time). */
  private recoveryRequested = false;
  /** The reopen in progress: reads that hit the closing database wait for it and retry once. */
  private recovering: Promise<void> | undefined;
  private closing = false;
  private closed: Promise<void> | undefined;
  private readonly counts = { batchesWritten: 0, batchesSynced: 0, batchesFailed: 0, changesWritten: 0, recoveries: 0 };
  /** Time of each successful LevelDB batch write, buffered and synced (fsync) apart: they differ by orders of magnitude. */
  private readonly commitSeconds = { buffered: new LatencyHistogram(), synced: new LatencyHistogram() };
  /** The searchable index: write buffer, segments, merges. */
  private index!: ShardIndex;
  /** The index schema the shard indexes with (cluster state, sent with each write) and its JSON. */
  private schema: Record<string, unknown> = {};
  private schemaJson = '{}';
  /** Runs the scripts of writes on this copy when it is the primary (ShardOptions.scripts). */
  private scripts: ScriptRunner | undefined;
  /** Primary term seen and replication checkpoint, persisted with the batches (META_REPLICATION). */
  private readonly position: ReplicaPosition;
  /** Origins of documents deleted by replication, so a late older put does not bring them back. */
  private readonly tombstones = new Tombstones();
  /** Stored content volumes (API.md §6), opened with the shard. */
  private content!: ContentVolumes;

  /** Whether puts analyse their text on the analysis thread (ShardOptions.analysisThread). */
  private readonly analysisThread: boolean;

  private constructor(
    private readonly db: ShardDatabase,
    readonly path: string,
    settings: ShardSettings,
    counters: ShardCounters,
    oplogFirstSeq: number,
    replication: ReplicationState,
  ) {
    this.counters = counters;
    this.analysisThread = settings.analysisThread;
    this.position = new ReplicaPosition(replication);
    this.cache = new DocumentCache(settings.documentCacheBytesMax);
    this.oplog = new Oplog(db, settings.oplogEntriesMax, oplogFirstSeq);
    this.reader = new GetCoalescer(db);
    this.writer = new GroupCommit((changes, sync) => this.commitBatch(changes, sync), {
      windowMs: settings.groupCommitWindowMs,
      entriesMax: settings.batchEntriesMax,
    });
  }

  /**
   * Open the search index and bring it up to the document store: replay the
   * op-log entries its segments and buffer do not cover yet (crash recovery),
   * with the schema stored beside them.
   */
  private async openIndex(options: ShardIndexOptions): Promise<void> {
    const stored = await this.readKey(META_SCHEMA);
    if (stored !== undefined) {
      this.schemaJson = stored.toString('utf8');
      this.schema = JSON.parse(this.schemaJson) as Record<string, unknown>;
    }
    this.index = await ShardIndex.open(this.db, {
      ...options,
      onPersisted: () => {
        options.onPersisted?.();
        this.trimOplog();
      },
    });
    for (let after = this.index.appliedSeq; after < this.counters.seq;) {
      const entries = await this.oplog.read(after, OPLOG_READ_ENTRIES_MAX);
      if (entries.length === 0) break;
      this.index.replay(entries, this.schema);
      after = (entries[entries.length - 1] as { seq: number }).seq;
    }
  }

  /**
   * The readers a search uses now: segments, frozen and current write
   * buffers, each with its deletions applied. Synchronous use only: the
   * current buffer's views are valid until the next write.
   */
  searchReaders(): SearchReader[] {
    return this.index.snapshot().views.map((v) => (v instanceof SegmentView ? v.reader : (v as unknown as { buffer: SearchReader }).buffer));
  }

  /** The schema the shard indexes with. */
  get indexSchema(): Record<string, unknown> {
    return this.schema;
  }

  /**
   * SEARCH on this shard (API.md §9): run the parsed query and sort over a
   * snapshot of the index, and fetch the best `k` documents. Totals are
   * exact. Every acknowledged write is visible (no refresh interval).
   */
  async search(request: ShardSearchRequest): Promise<ShardSearchResult> {
    if (this.closing) throw engineErrors.shardClosed();
    const query: Query = request.query ?? ALL_QUERY;
    const sort: readonly SortKey[] = request.sort ?? [];
    // The coordinator's schema is the newest; the shard's own covers what it has indexed.
    const schema = request.schema ?? this.schema;
    // Bound before the search starts, so a bad `_aggs` is a 400 even on a shard without documents.
    const aggregations = request.aggs === undefined ? undefined : planAggregations(request.aggs, schema);
    const result = search(this.searchReaders(), { query, sort, k: request.k, countOnly: request.countOnly, ...(aggregations === undefined ? {} : { aggregations }) }, schema);
    const docs = await Promise.all(result.hits.map((h) => this.getByDocid(h.docid)));
    const hits: ShardSearchResult['hits'] = [];
    result.hits.forEach((h, i) => {
      const doc = docs[i];
      // A document deleted since the snapshot is left out of the page (the total was exact at the snapshot).
      if (doc === undefined) return;
      const hit: ShardSearchResult['hits'][number] = { id: doc.id, docid: doc.docid, version: doc.version, body: doc.body, score: h.score };
      if (h.sortValues !== undefined) hit.sortValues = h.sortValues;
      hits.push(hit);
    });
    const reply: ShardSearchResult = { total: result.total, hits, sortOrders: sort.map((k) => k.order) };
    if (result.aggregations !== undefined) reply.aggregations = result.aggregations;
    return reply;
  }

  /** Open (creating if missing) the shard copy in `options.path`. */
  static async open(options: ShardOptions): Promise<Shard> {
    const resolved = resolveOptions(options);
    const path = options.path;
    try {
      await mkdir(path, { recursive: true });
    } catch (err) {
      throw engineErrors.storageUnavailable(err);
    }
    const db: ShardDatabase = new ClassicLevel<Buffer, Buffer>(path, {
      keyEncoding: 'buffer', valueEncoding: 'buffer', writeBufferSize: resolved.storeWriteBufferBytes,
    });
    try {
      await db.open();
    } catch (err) {
      throw engineErrors.storageUnavailable(err);
    }
    try {
      const counters = await loadCounters(db, path);
      const firstSeq = await Oplog.bounds(db, counters.seq);
      const [replication] = await db.getMany([META_REPLICATION]);
      const shard = new Shard(db, path, resolved, counters, firstSeq,
        replication === undefined ? INITIAL_REPLICATION_STATE : decodeReplicationState(replication));
      // Bulk writes analyse text on the analysis thread: started now, so it is ready when they come.
      if (resolved.analysisThread) void startTextWorker();
      await shard.openIndex(options.index ?? {});
      shard.content = await ContentVolumes.open(join(path, 'content'), options.content);
      shard.scripts = options.scripts;
      return shard;
    } catch (err) {
      await db.close().catch(noop);
      throw err instanceof TesseraError || err instanceof assert.AssertionError ? err : engineErrors.storageUnavailable(err);
    }
  }

  /**
   * The current document, or undefined. Served from the cache when hot.
   * The returned object is shared (cache): never mutate it.
   */
  async get(id: DocumentId): Promise<StoredDocument | undefined> {
    validateDocumentId(id);
    if (this.closing) throw engineErrors.shardClosed();
    const key = documentIdKey(id);
    return this.cache.get(key) ?? this.readDocument(id, key);
  }

  /**
   * The current document when the cache holds it, else undefined (also while
   * closing): `get` then reads it (and counts the miss). Synchronous, for
   * reads answered without a promise. Shared object: never mutate it.
   */
  cached(id: DocumentId): StoredDocument | undefined {
    validateDocumentId(id);
    if (this.closing) return undefined;
    return this.cache.find(documentIdKey(id));
  }

  /** The current document with this #docid, or undefined. Shared object: never mutate it. */
  async getByDocid(docid: number): Promise<StoredDocument | undefined> {
    if (this.closing) throw engineErrors.shardClosed();
    if (!Number.isSafeInteger(docid) || docid < 1 || docid > DOCID_MAX) return undefined;
    const cached = this.cache.getByDocid(docid);
    if (cached !== undefined) return cached;
    const tag = await this.readKey(docidKey(docid));
    if (tag === undefined) return undefined;
    const doc = await this.get(decodeIdTag(tag));
    return doc?.docid === docid ? doc : undefined;
  }

  /**
   * Read-modify-write of one document, serialised with every other write to
   * it. `decide` sees the current document (undefined when absent) and returns
   * the Mutation to store, or throws (a TesseraError: nothing is written and
   * the error propagates). The store assigns the version (current + 1, or 1),
   * the #docid (kept across updates, the next one for a new document) and the
   * seq. Resolves once the change is in LevelDB (durable with `commit`).
   *
   * A put's body becomes the stored document: the caller must not modify it
   * afterwards.
   */
  mutate(id: DocumentId, decide: (current: StoredDocument | undefined) => Mutation, options: MutateOptions = {}): Promise<WriteResult> {
    try {
      validateDocumentId(id);
      if (options.term !== undefined) validateTerm(options.term);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.closing) return Promise.reject(engineErrors.shardClosed());
    const key = documentIdKey(id);
    const commit = options.commit === true;
    const bulk = options.bulk === true;
    const { schema, term } = options;
    if (term === undefined || term === this.position.term) {
      return this.locked(key, () => this.mutateLocked(id, key, decide, commit, schema, term, bulk));
    }
    return this.acceptTerm(term).then(() => this.locked(key, () => this.mutateLocked(id, key, decide, commit, schema, term, bulk)));
  }

  /**
   * A document write with API.md §5 semantics (index, update, patch, delete;
   * expected versions; upsert), or a stored-content write (§6): its blob is
   * appended to a volume first (synced with `commit`), outside the document's
   * lock, and linked by the write. A write that then fails (409, 404) leaves
   * the blob unlinked: volumes are append-only.
   */
  async write(req: WriteRequest): Promise<WriteResult> {
    validateWriteRequest(req);
    if (this.closing) throw engineErrors.shardClosed();
    let stored: ContentLink | undefined;
    if (req.content !== undefined && req.content.bytes.length > 0) {
      const where = await this.content.append(req.content.bytes, req.commit === true);
      stored = { type: req.content.type, volume: where.volume, offset: where.offset, size: where.size, crc: where.crc };
    }
    return this.mutate(req.id, (current) => decideWrite(req, current, { scripts: this.scripts, schema: req.schema ?? this.schema }, stored),
      { commit: req.commit, schema: req.schema, term: req.term, bulk: req.bulk });
  }

  /**
   * Bulk writes (RESTORE), each as `write` with `bulk` would make it, in
   * order, answered in place (a result or the write's error). A write whose
   * current document is known without a read (cached, or an ID the shard
   * never wrote) and that no earlier write of its document precedes, here or
   * in flight, is decided now and queued with the others as one group: no
   * promise per document. The rest (a read, stored content, a later write of
   * a document already in the call) go through `write`, after those.
   */
  async writeMany(reqs: readonly WriteRequest[], options: BulkWriteOptions = {}): Promise<Array<BatchOutcome<WriteResult>>> {
    const { commit = false, schema, term } = options;
    try {
      if (term !== undefined) validateTerm(term);
      if (this.closing) throw engineErrors.shardClosed();
      if (term !== undefined && term !== this.position.term) await this.acceptTerm(term);
    } catch (err) {
      // Every write is refused as `write` would refuse it.
      return reqs.map(() => ({ ok: false, error: asError(err) }));
    }
    const outcomes = new Array<BatchOutcome<WriteResult>>(reqs.length);
    const grouped: Change[] = [];
    const groupedSlots: number[] = [];
    const later: number[] = [];
    // Documents an earlier write of this call goes to.
    const met = new Set<string>();
    const decideContext = { scripts: this.scripts, schema: schema ?? this.schema };
    for (let i = 0; i < reqs.length; i++) {
      const req = reqs[i] as WriteRequest;
      let key: string;
      try {
        validateWriteRequest(req);
        validateDocumentId(req.id);
        key = documentIdKey(req.id);
      } catch (err) {
        outcomes[i] = { ok: false, error: asError(err) };
        continue;
      }
      const current = req.content === undefined && !met.has(key) && !this.locks.has(key)
        ? this.cache.get(key) ?? (this.neverWritten(req.id) ? null : undefined) : undefined;
      if (current === undefined) {
        met.add(key);
        later.push(i);
        continue;
      }
      try {
        const known = current ?? undefined;
        const change = prepareChange(req.id, key, known, decideWrite(req, known, decideContext, undefined), this.stateEpoch, this.position.term);
        change.uncached = true;
        this.prepareTerms(change, schema);
        met.add(key);
        grouped.push(change);
        groupedSlots.push(i);
      } catch (err) {
        // Nothing written: a later write of the document sees what this one saw.
        outcomes[i] = { ok: false, error: asError(err) };
      }
    }
    const committed = this.writer.submitMany(grouped, commit);
    if (grouped.length > 0) {
      // The group holds its documents' locks until written, so `write`s of them (below, or other callers') follow it.
      const tail = committed.then(noop, noop);
      for (const change of grouped) this.locks.set(change.key, tail);
      void tail.then(() => {
        for (const change of grouped) if (this.locks.get(change.key) === tail) this.locks.delete(change.key);
      });
    }
    const written = later.map((i) => this.write({ ...(reqs[i] as WriteRequest), bulk: true, commit, schema, term }).then(
      (value): BatchOutcome<WriteResult> => ({ ok: true, value }),
      (err: unknown): BatchOutcome<WriteResult> => ({ ok: false, error: asError(err) })));
    const groupOutcomes = await committed;
    for (let k = 0; k < groupOutcomes.length; k++) {
      const outcome = groupOutcomes[k] as BatchOutcome<WriteResult | null>;
      assert.ok(!outcome.ok || outcome.value !== null, 'a document change has a result');
      outcomes[groupedSlots[k] as number] = outcome as BatchOutcome<WriteResult>;
    }
    const laterOutcomes = await Promise.all(written);
    for (let k = 0; k < later.length; k++) outcomes[later[k] as number] = laterOutcomes[k] as BatchOutcome<WriteResult>;
    return outcomes;
  }

  /**
   * Bytes [from, from + length) of a stored blob; with `verify` the whole
   * blob's checksum is checked first (a streamed answer's first read).
   * 500 `content_corrupted` for a torn or damaged blob.
   */
  readContent(where: BlobLocation, from: number, length: number, verify: boolean): Promise<Buffer> {
    if (this.closing) return Promise.reject(engineErrors.shardClosed());
    return this.content.readRange(where, from, length, verify);
  }

  /** A whole stored blob, checked (replication sends it to copies that lack it). */
  readBlob(where: BlobLocation): Promise<Buffer> {
    if (this.closing) return Promise.reject(engineErrors.shardClosed());
    return this.content.read(where);
  }

  /**
   * Apply changes a primary made (DESIGN.md "Writes, versions, replication"):
   * each is stored only if its origin is newer than the version this copy
   * holds — or than the deletion it remembers — so a change arriving twice
   * or late changes nothing. Changes of one document apply in the order
   * given; the call resolves once every applied change is in LevelDB (sync
   * with `commit`), and each change's `seq` then counts towards the copy's
   * checkpoint. Refused as a whole when `term` is older than one seen.
   */
  async applyReplicated(term: number, changes: readonly ReplicatedChange[], options: Omit<MutateOptions, 'term'> = {}): Promise<ReplicateOutcome> {
    validateTerm(term);
    validateReplicatedChanges(changes);
    if (this.closing) throw engineErrors.shardClosed();
    await this.acceptTerm(term);
    const commit = options.commit === true;
    const settled = await Promise.allSettled(changes.map((change) => {
      const key = documentIdKey(change.id);
      return this.locked(key, () => this.replicateLocked(term, change, key, commit, options.schema));
    }));
    const outcome: ReplicateOutcome = { applied: 0, discarded: 0 };
    for (const result of settled) {
      if (result.status === 'rejected') throw result.reason;
      if (result.value) outcome.applied++;
      else outcome.discarded++;
    }
    return outcome;
  }

  /**
   * The coordinator vouches that this copy holds every change the primary of
   * `term` numbered up to `checkpoint` (a promotion: the copies in sync hold
   * what the new primary holds; the end of a full copy). Persisted (sync)
   * before it resolves.
   */
  async follow(term: number, checkpoint: number): Promise<ShardReplicationState> {
    validateTerm(term);
    if (!Number.isSafeInteger(checkpoint) || checkpoint < 0) throw engineErrors.invalidWrite('checkpoint must be a non-negative integer');
    if (this.closing) throw engineErrors.shardClosed();
    if (term < this.position.term) throw engineErrors.stalePrimaryTerm(term, this.position.term);
    this.position.follow(term, checkpoint);
    await this.writer.submit(BARRIER, true);
    return this.replicationState();
  }

  /** The copy's replication position. */
  replicationState(): ShardReplicationState {
    return { ...this.position.snapshot(), oplogFirstSeq: this.oplog.firstSeq };
  }

  /** Run `work` after every earlier write to the document (per-document chain; the entry goes once the chain is idle). */
  private locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key);
    const run = previous === undefined ? work() : previous.then(work);
    const tail = run.then(noop, noop);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  /**
   * A call carries `term`: refuse it if older than the term seen, adopt it
   * (persisted, sync) if newer, before anything of the call is applied. A
   * restarted copy still refuses a demoted primary's term.
   */
  private async acceptTerm(term: number): Promise<void> {
    if (term < this.position.term) throw engineErrors.stalePrimaryTerm(term, this.position.term);
    if (this.position.raiseTerm(term)) await this.writer.submit(BARRIER, true);
  }

  /** One replicated change, inside the document's lock: true if stored, false if older than what the copy holds. */
  private async replicateLocked(term: number, change: ReplicatedChange, key: string, commit: boolean,
    schema: Record<string, unknown> | undefined): Promise<boolean> {
    // Checked again under the lock: a newer term may have arrived while the change waited.
    if (term < this.position.term) throw engineErrors.stalePrimaryTerm(term, this.position.term);
    const epoch = this.stateEpoch;
    const current = this.cache.get(key) ?? (this.neverWritten(change.id) ? undefined : await this.readDocument(change.id, key));
    const origin: Origin = { term: change.originTerm, seq: change.originSeq };
    const held = current !== undefined ? originOf(current) : this.tombstones.get(key, Date.now());
    if (held !== undefined && !isNewer(origin, held)) {
      this.observeReplicated(term, change);
      return false;
    }
    if (change.deleted) {
      if (current !== undefined) {
        await this.writer.submit({
          kind: 'delete', key, id: current.id, documentKey: documentKey(current.id), version: change.version, docid: current.docid,
          originTerm: origin.term, originSeq: origin.seq, body: undefined, bodyBytes: undefined, epoch,
        }, commit);
      }
      this.tombstones.set(key, origin, Date.now());
      this.observeReplicated(term, change);
      return true;
    }
    const body = change.body as DocumentBody;
    let bodyBytes: Uint8Array;
    try {
      bodyBytes = encodeBody(body);
    } catch (err) {
      throw engineErrors.invalidDocument(`Document cannot be stored: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    const content = change.content === undefined ? undefined : await this.linkReplicatedContent(change, current, commit);
    const storedId = current?.id ?? (change.id === 0 ? 0 : change.id);
    const put: Change = {
      kind: 'put', key, id: storedId, documentKey: documentKey(storedId), version: change.version, docid: current?.docid ?? 0,
      originTerm: origin.term, originSeq: origin.seq, body, bodyBytes, content, indexed: change.indexed, epoch,
    };
    this.prepareTerms(put, schema);
    await this.writer.submit(put, commit);
    this.tombstones.delete(key);
    this.observeReplicated(term, change);
    return true;
  }

  /**
   * A replicated change's content entries as links into this copy's own
   * volumes: a blob the copy's current version already links (same size and
   * checksum) is reused, any other is appended from the bytes the change
   * carries. A change naming a blob it neither holds nor carries is refused:
   * the relay fails and the copy catches up from the primary's log, whose
   * entries carry their blobs.
   */
  private async linkReplicatedContent(change: ReplicatedChange, current: StoredDocument | undefined, commit: boolean): Promise<ContentLink[]> {
    const links: ContentLink[] = [];
    for (const entry of change.content ?? []) {
      const held = current?.content?.find((link) => link.size === entry.size && link.crc === entry.crc);
      if (held !== undefined) {
        links.push({ type: entry.type, volume: held.volume, offset: held.offset, size: held.size, crc: held.crc });
        continue;
      }
      if (entry.bytes === undefined) throw engineErrors.contentMissing(change.id, entry.type);
      const where = await this.content.append(entry.bytes, commit);
      if (where.crc !== entry.crc || where.size !== entry.size) throw engineErrors.invalidWrite(`replicated content '${entry.type}' does not match its checksum`);
      links.push({ type: entry.type, volume: where.volume, offset: where.offset, size: where.size, crc: where.crc });
    }
    return links;
  }

  private observeReplicated(term: number, change: ReplicatedChange): void {
    if (change.seq !== undefined) this.position.observe(term, change.seq);
  }

  /** Resolves once everything acknowledged so far is durable (one sync batch, shared with concurrent writers). */
  async commit(): Promise<void> {
    if (this.closing) throw engineErrors.shardClosed();
    await this.writer.submit(BARRIER, true);
  }

  /** Operation-log entries with seq > afterSeq (at most `limit`), for replica catch-up; 410 `oplog_trimmed` if they are gone. */
  async readOplog(afterSeq: number, limit: number = OPLOG_READ_ENTRIES_MAX): Promise<OplogEntry[]> {
    if (this.closing) throw engineErrors.shardClosed();
    try {
      return await this.oplog.read(afterSeq, limit);
    } catch (err) {
      throw err instanceof TesseraError || err instanceof assert.AssertionError ? err : this.readFailed(err);
    }
  }

  /** Every live document in ID order (numbers first), read from a LevelDB snapshot; not cached. */
  async *documents(): AsyncGenerator<StoredDocument> {
    if (this.closing) throw engineErrors.shardClosed();
    const iterator = this.db.values(spaceRange(PREFIX_DOCUMENTS));
    try {
      for await (const value of iterator) yield decodeDocumentRecord(value);
    } finally {
      await iterator.close();
    }
  }

  /**
   * One page of live documents in ID order (numbers first), for DUMP: those
   * after `after` (exclusive; from the first when undefined), at most `limit`
   * of them and about SCAN_PAGE_BYTES_MAX bytes (at least one document), so
   * paging through a shard holds one page in memory, never the shard. Each
   * page reads a LevelDB snapshot of its own: a document written between two
   * pages shows in a later page if its ID sorts after the cursor. `done` once
   * nothing follows the page. Not cached.
   */
  async scan(after: DocumentId | undefined, limit: number): Promise<{ documents: StoredDocument[]; done: boolean }> {
    assert.ok(Number.isInteger(limit) && limit >= 1 && limit <= SCAN_DOCUMENTS_MAX, 'scan limit out of range');
    if (after !== undefined) validateDocumentId(after);
    if (this.closing) throw engineErrors.shardClosed();
    const range = spaceRange(PREFIX_DOCUMENTS);
    const iterator = this.db.values(after === undefined ? { ...range, limit } : { gt: documentKey(after), lt: range.lt, limit });
    const documents: StoredDocument[] = [];
    let bytes = 0;
    try {
      for await (const value of iterator) {
        documents.push(decodeDocumentRecord(value));
        bytes += value.length;
        if (bytes >= SCAN_PAGE_BYTES_MAX && documents.length < limit) return { documents, done: false };
      }
    } catch (err) {
      throw err instanceof TesseraError || err instanceof assert.AssertionError ? err : this.readFailed(err);
    } finally {
      await iterator.close();
    }
    return { documents, done: documents.length < limit };
  }

  /** Document counters as of the last acknowledged write (kept in memory, persisted with every batch). */
  stats(): ShardStats {
    const c = this.counters;
    return { documents: c.documents, lastDocid: c.lastDocid, seq: c.seq, maxNumericId: c.maxNumericId };
  }

  /** Terms per live document (INFO /idx/): a walk of the index's norms. */
  documentLengths(): DocumentLengths {
    return this.index.documentLengths();
  }

  metrics(): ShardMetrics {
    return {
      ...this.counts,
      changesQueued: this.writer.queued,
      documentCacheEntries: this.cache.size,
      documentCacheBytes: this.cache.bytes,
      documentCacheHits: this.cache.hits,
      documentCacheMisses: this.cache.misses,
      oplogFirstSeq: this.oplog.firstSeq,
      oplogTrims: this.oplog.trims,
      commitSeconds: { buffered: this.commitSeconds.buffered.snapshot(), synced: this.commitSeconds.synced.snapshot() },
    };
  }

  /** Stop accepting calls, finish the writes already accepted, close the database. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  /** Close and delete the shard copy's directory. */
  async destroy(): Promise<void> {
    await this.close();
    await rm(this.path, { recursive: true, force: true });
  }

  private async closeNow(): Promise<void> {
    this.closing = true;
    while (this.locks.size > 0) await Promise.all(this.locks.values());
    // The checkpoint lags one batch behind the changes it covers: write it down before closing.
    if (this.position.dirty) await this.writer.submit(BARRIER, false).catch(noop);
    await this.writer.idle();
    while (this.reads.size > 0) await Promise.allSettled([...this.reads.values()].map((flight) => flight.promise));
    await this.oplog.settled();
    this.cache.clear();
    await this.index.close();
    // A flush that finished while closing may have started a trim.
    await this.oplog.settled();
    await this.content.close();
    if (this.db.status !== 'closed') await this.db.close();
  }

  private async mutateLocked(id: DocumentId, key: string, decide: (current: StoredDocument | undefined) => Mutation,
    commit: boolean, schema: Record<string, unknown> | undefined, term: number | undefined, bulk: boolean): Promise<WriteResult> {
    // Checked again under the lock: a newer term may have arrived while the write waited.
    if (term !== undefined && term < this.position.term) throw engineErrors.stalePrimaryTerm(term, this.position.term);
    const epoch = this.stateEpoch;
    const current = this.cache.get(key) ?? (this.neverWritten(id) ? undefined : await this.readDocument(id, key));
    const change = prepareChange(id, key, current, decide(current), epoch, this.position.term);
    if (bulk) change.uncached = true;
    this.prepareTerms(change, schema);
    const result = await this.writer.submit(change, commit);
    assert.ok(result !== null, 'a document change has a result');
    return result;
  }

  /**
   * The schema a change is indexed with (recorded when newer than the stored
   * one) and a put's terms, computed before the change is queued: a body the
   * schema refuses (e.g. a patch giving a field another type) writes nothing.
   */
  private prepareTerms(change: Change, schema: Record<string, unknown> | undefined): void {
    if (schema !== undefined && schema !== this.schema) {
      const json = JSON.stringify(schema);
      if (json !== this.schemaJson) change.schemaJson = json;
      // The same schema in the caller's object (schemas are values, never mutated): keep that one, so
      // the next writes skip this comparison and indexing finds the caller's fold (indexedValues).
      else this.schema = schema;
    }
    if (change.kind === 'put') {
      const indexSchema = change.schemaJson === undefined ? this.schema : (schema as Record<string, unknown>);
      // A bulk write's text is analysed on the analysis thread while the batch is written (commitBatch waits for
      // it); a single write's here, where it costs less than the hop to the thread and back.
      change.terms = this.index.prepare({ seq: 0, docid: 1, id: change.id, body: change.indexed ?? change.body, version: change.version }, indexSchema,
        this.analysisThread && change.uncached === true).document;
    }
  }

  /**
   * Let the op log drop what it no longer needs: entries the index has
   * persisted, beyond the log's bound. After each batch, and after each flush
   * (so the log converges when writes stop before the index catches up).
   */
  private trimOplog(): void {
    this.oplog.retainFrom = this.index.persistedSeq + 1;
    this.oplog.afterAppend(this.counters.seq);
  }

  /**
   * No document has this ID: the shard never assigned a docid, or the ID is a number above every one it ever
   * wrote. No LevelDB read is needed then (a bulk load of ascending numeric IDs reads nothing). The counters only
   * grow and are written in the batch of the change that raised them, and a document's earlier writes finish
   * (under its lock) before the next one looks.
   */
  private neverWritten(id: DocumentId): boolean {
    return this.counters.lastDocid === 0 || (typeof id === 'number' && id > this.counters.maxNumericId);
  }

  /** A document from LevelDB; concurrent misses of one ID share the get unless a write made it stale. */
  private readDocument(id: DocumentId, key: string): Promise<StoredDocument | undefined> {
    const existing = this.reads.get(key);
    if (existing !== undefined && !existing.stale) return existing.promise;
    const flight: ReadFlight = { stale: false, promise: Promise.resolve(undefined) };
    this.reads.set(key, flight);
    flight.promise = this.readFromDisk(id, key, flight);
    return flight.promise;
  }

  private async readFromDisk(id: DocumentId, key: string, flight: ReadFlight): Promise<StoredDocument | undefined> {
    try {
      const bytes = await this.readKey(documentKey(id));
      if (bytes === undefined) return undefined;
      const doc = decodeDocumentRecord(bytes);
      assert.equal(documentIdKey(doc.id), key, 'the document record holds another ID');
      if (!flight.stale) this.cache.set(key, doc, estimateDocumentBytes(bytes.length));
      return doc;
    } finally {
      if (this.reads.get(key) === flight) this.reads.delete(key);
    }
  }

  /**
   * One LevelDB value (coalesced with the other reads of this tick). A read
   * that met the database closed by a reopen waits for the reopen and retries
   * once; other LevelDB errors become 503s.
   */
  private async readKey(key: Buffer): Promise<Buffer | undefined> {
    try {
      return await this.reader.get(key);
    } catch (err) {
      const recovering = this.recovering;
      if (recovering !== undefined) await recovering.catch(noop);
      else if (this.db.status !== 'open') throw this.readFailed(err);
    }
    try {
      return await this.reader.get(key);
    } catch (err) {
      throw this.readFailed(err);
    }
  }

  /** A read hit a LevelDB error; if the database was closed under us, reopen it. */
  private readFailed(err: unknown): TesseraError {
    if (this.db.status === 'closed') this.requestRecovery();
    return engineErrors.storageUnavailable(err);
  }

  /**
   * Reopen the database soon, through the writer (so no batch runs meanwhile):
   * queue a barrier whose batch starts with `recover`. One at a time, and
   * only on demand (a failed batch, a read on a closed database), so a broken
   * disk is retried by the next request, never in a loop.
   */
  private requestRecovery(): void {
    this.recoveryNeeded = true;
    if (this.recoveryRequested || this.closing) return;
    this.recoveryRequested = true;
    this.writer.submit(BARRIER, false).catch(noop);
  }

  private markStale(key: string): void {
    const flight = this.reads.get(key);
    if (flight !== undefined) flight.stale = true;
  }

  /**
   * Writes one batch: every change with its document record, #docid map entry
   * and oplog entry, then the counters. Counters, cache and metrics change only
   * once LevelDB has the batch; if it fails, nothing in memory changes and the
   * next batch first reopens the database (`recover`).
   */
  private async commitBatch(changes: Change[], sync: boolean): Promise<BatchOutcome<WriteResult | null>[]> {
    if (this.recoveryNeeded) {
      this.recoveryRequested = false;
      try {
        await this.recover();
      } catch (err) {
        this.counts.batchesFailed++;
        throw engineErrors.storageUnavailable(err);
      }
    }
    const outcomes = new Array<BatchOutcome<WriteResult | null>>(changes.length);
    const applied: { change: Change; doc: StoredDocument | undefined; bytes: number; seq: number; docid: number }[] = [];
    let newSchemaJson: string | undefined;
    const counters = { ...this.counters };
    const seen = new Set<string>();
    let batch: ReturnType<ShardDatabase['batch']> | undefined;
    let writing = false;
    let positionWritten = false;
    try {
      batch = this.db.batch();
      for (let i = 0; i < changes.length; i++) {
        const change = changes[i];
        if (change.kind === 'barrier') {
          outcomes[i] = { ok: true, value: null };
          continue;
        }
        if (change.epoch !== this.stateEpoch) {
          outcomes[i] = { ok: false, error: engineErrors.storageUnavailable('a failed batch reached the disk after this write read the document; retry') };
          continue;
        }
        assert.ok(!seen.has(change.key), 'one change per document per batch (per-document lock)');
        seen.add(change.key);
        const { id, version } = change;
        if (change.kind === 'put') {
          let docid = change.docid;
          if (docid === 0) {
            if (counters.lastDocid >= DOCID_MAX) {
              outcomes[i] = { ok: false, error: engineErrors.docidsExhausted() };
              continue;
            }
            docid = ++counters.lastDocid;
            counters.documents++;
            batch.put(docidKey(docid), encodeIdTag(id));
          }
          const seq = ++counters.seq;
          const bodyBytes = change.bodyBytes;
          const body = change.body;
          assert.ok(bodyBytes !== undefined && body !== undefined);
          const doc: StoredDocument = withExtras(withOrigin({ id, docid, version, seq, body }, change), change);
          const record = encodeDocumentRecord(doc, bodyBytes);
          batch.put(change.documentKey, record);
          batch.put(oplogKey(seq), encodeOplogEntry(withExtras(withOrigin({ seq, id, docid, version, op: 'put' as const }, change), change), bodyBytes));
          applied.push({ change, doc, bytes: estimateDocumentBytes(record.length), seq, docid });
          outcomes[i] = { ok: true, value: withExtras({ id, docid, version, seq, body, deleted: false }, change) };
        } else {
          const seq = ++counters.seq;
          const docid = change.docid;
          batch.del(change.documentKey);
          batch.del(docidKey(docid));
          counters.documents--;
          assert.ok(counters.documents >= 0, 'document count must not go negative');
          batch.put(oplogKey(seq), encodeOplogEntry(withOrigin({ seq, id, docid, version, op: 'delete' as const }, change), undefined));
          applied.push({ change, doc: undefined, bytes: 0, seq, docid });
          outcomes[i] = { ok: true, value: { id, docid, version, seq, deleted: true } };
        }
        if (typeof id === 'number' && id > counters.maxNumericId) counters.maxNumericId = id;
        if (change.schemaJson !== undefined) newSchemaJson = change.schemaJson;
      }
      if (newSchemaJson !== undefined) batch.put(META_SCHEMA, Buffer.from(newSchemaJson, 'utf8'));
      batch.put(META_COUNTERS, encodeCounters(counters));
      // The position as of changes already durable: it never claims one this batch may lose.
      if (this.position.dirty) {
        batch.put(META_REPLICATION, encodeReplicationState(this.position.snapshot()));
        this.position.dirty = false;
        positionWritten = true;
      }
      writing = true;
      const writeStartedMs = performance.now();
      await batch.write({ sync });
      (sync ? this.commitSeconds.synced : this.commitSeconds.buffered).observe((performance.now() - writeStartedMs) / 1000);
    } catch (err) {
      if (batch !== undefined) await batch.close().catch(noop);
      if (positionWritten) this.position.dirty = true;
      this.counts.batchesFailed++;
      // The outcome on disk is unknown until the reopen: make readers go to LevelDB for these documents.
      for (const change of changes) {
        if (change.kind === 'barrier') continue;
        this.markStale(change.key);
        this.cache.delete(change.key);
      }
      if (err instanceof assert.AssertionError && !writing) throw err;
      this.requestRecovery();
      throw engineErrors.storageUnavailable(err);
    }
    this.counters = counters;
    if (newSchemaJson !== undefined) {
      this.schemaJson = newSchemaJson;
      this.schema = JSON.parse(newSchemaJson) as Record<string, unknown>;
    }
    await textAnalysed(applied);
    // Searchable as soon as acknowledged: index in seq order before the writers are answered.
    for (const { change, seq, docid } of applied) {
      this.index.applyPrepared({ seq, docid, document: change.kind === 'put' ? (change.terms ?? null) : null });
    }
    this.counts.batchesWritten++;
    if (sync) this.counts.batchesSynced++;
    this.counts.changesWritten += applied.length;
    for (const { change, doc, bytes } of applied) {
      this.markStale(change.key);
      if (doc === undefined || change.uncached === true) this.cache.delete(change.key);
      else this.cache.set(change.key, doc, bytes);
    }
    this.trimOplog();
    return outcomes;
  }

  /**
   * After a failed batch: reopen the database (LevelDB refuses every write
   * after a log write error until reopened) and take the counters from disk.
   * If they moved, the failed batch did reach the log after all ("may or may
   * not show up when reopened", LevelDB's log writer): clear the cache and void
   * every write decided before, since it may have read an older document.
   */
  private async recover(): Promise<void> {
    this.recovering = this.reopen();
    try {
      await this.recovering;
    } finally {
      this.recovering = undefined;
    }
  }

  private async reopen(): Promise<void> {
    await this.oplog.settled();
    if (this.db.status !== 'closed') await this.db.close();
    await this.db.open();
    const counters = await loadCounters(this.db, this.path);
    const before = this.counters;
    if (counters.seq !== before.seq || counters.lastDocid !== before.lastDocid || counters.documents !== before.documents) {
      this.stateEpoch++;
      this.cache.clear();
      for (const flight of this.reads.values()) flight.stale = true;
      this.counters = counters;
    }
    this.oplog.reset(await Oplog.bounds(this.db, this.counters.seq), this.counters.seq);
    this.recoveryNeeded = false;
    this.counts.recoveries++;
  }
}

/** Wait until the text of every put is analysed (one batch of the analysis thread, or a few). */
async function textAnalysed(applied: readonly { change: Change }[]): Promise<void> {
  let waits: Set<Promise<void>> | undefined;
  for (const { change } of applied) {
    const text = change.kind === 'put' ? change.terms?.text : undefined;
    if (text !== undefined && !text.resolved) (waits ??= new Set()).add(text.ready);
  }
  if (waits !== undefined) await Promise.all(waits);
}

function prepareChange(id: DocumentId, key: string, current: StoredDocument | undefined, mutation: Mutation, epoch: number, term: number): Change {
  if (mutation.kind === 'delete') {
    if (current === undefined) throw engineErrors.documentNotFound();
    return {
      kind: 'delete', key, id: current.id, documentKey: documentKey(current.id), version: current.version + 1, docid: current.docid,
      originTerm: term, body: undefined, bodyBytes: undefined, epoch,
    };
  }
  if (mutation.kind !== 'put') throw engineErrors.invalidWrite(`unknown mutation '${String((mutation as { kind: unknown }).kind)}'`);
  if (!isPlainObject(mutation.body)) throw engineErrors.invalidDocument('A document must be an object');
  let bodyBytes: Uint8Array;
  try {
    bodyBytes = encodeBody(mutation.body);
  } catch (err) {
    throw engineErrors.invalidDocument(`Document cannot be stored: ${err instanceof Error ? err.message : String(err)}`, err);
  }
  // -0 and 0 are one document (one key); store the canonical one.
  const storedId = current?.id ?? (id === 0 ? 0 : id);
  const version = (current?.version ?? 0) + 1;
  return {
    kind: 'put', key, id: storedId, documentKey: documentKey(storedId), version, docid: current?.docid ?? 0,
    originTerm: term, body: mutation.body, bodyBytes, content: mutation.content, indexed: mutation.indexed, epoch,
  };
}

/**
 * `fields` with a put's content entries and indexed form, where there are
 * any (a plain document's records, results and log entries keep their shape).
 */
function withExtras<T extends object>(fields: T, change: Change): T & { content?: readonly ContentLink[]; indexed?: DocumentBody } {
  const out: T & { content?: readonly ContentLink[]; indexed?: DocumentBody } = fields;
  if (change.content !== undefined && change.content.length > 0) out.content = change.content;
  if (change.indexed !== undefined) out.indexed = change.indexed;
  return out;
}

/** A record or oplog entry with the change's origin, where it is not the default (store/records.ts). */
function withOrigin<T extends { seq: number }>(fields: T, change: Change): T & { term?: number; originSeq?: number } {
  const out: T & { term?: number; originSeq?: number } = fields;
  if (change.originTerm !== 1) out.term = change.originTerm;
  if (change.originSeq !== undefined && change.originSeq !== fields.seq) out.originSeq = change.originSeq;
  return out;
}

function resolveOptions(options: ShardOptions): ShardSettings {
  if (typeof options.path !== 'string' || options.path.length === 0) throw engineErrors.invalidOption('path', 'must be a directory');
  const documentCacheBytesMax = options.documentCacheBytesMax ?? SHARD_DEFAULTS.documentCacheBytesMax;
  const groupCommitWindowMs = options.groupCommitWindowMs ?? SHARD_DEFAULTS.groupCommitWindowMs;
  const batchEntriesMax = options.batchEntriesMax ?? SHARD_DEFAULTS.batchEntriesMax;
  const oplogEntriesMax = options.oplogEntriesMax ?? SHARD_DEFAULTS.oplogEntriesMax;
  const storeWriteBufferBytes = options.storeWriteBufferBytes ?? SHARD_DEFAULTS.storeWriteBufferBytes;
  if (!Number.isSafeInteger(documentCacheBytesMax) || documentCacheBytesMax < 0) {
    throw engineErrors.invalidOption('documentCacheBytesMax', 'must be a non-negative integer');
  }
  if (!Number.isFinite(groupCommitWindowMs) || groupCommitWindowMs < 0 || groupCommitWindowMs > GROUP_COMMIT_WINDOW_MS_MAX) {
    throw engineErrors.invalidOption('groupCommitWindowMs', `must be between 0 and ${GROUP_COMMIT_WINDOW_MS_MAX}`);
  }
  if (!Number.isInteger(batchEntriesMax) || batchEntriesMax < 1 || batchEntriesMax > BATCH_ENTRIES_MAX_LIMIT) {
    throw engineErrors.invalidOption('batchEntriesMax', `must be an integer between 1 and ${BATCH_ENTRIES_MAX_LIMIT}`);
  }
  // A replica one batch behind must still find its entries in the log.
  if (!Number.isSafeInteger(oplogEntriesMax) || oplogEntriesMax < batchEntriesMax) {
    throw engineErrors.invalidOption('oplogEntriesMax', `must be an integer of at least batchEntriesMax (${batchEntriesMax})`);
  }
  // LevelDB clamps the write buffer to 64 KiB–1 GiB; refuse what it would silently change.
  if (!Number.isSafeInteger(storeWriteBufferBytes) || storeWriteBufferBytes < STORE_WRITE_BUFFER_BYTES_MIN || storeWriteBufferBytes > STORE_WRITE_BUFFER_BYTES_MAX) {
    throw engineErrors.invalidOption('storeWriteBufferBytes', `must be an integer between ${STORE_WRITE_BUFFER_BYTES_MIN} and ${STORE_WRITE_BUFFER_BYTES_MAX}`);
  }
  return { documentCacheBytesMax, groupCommitWindowMs, batchEntriesMax, oplogEntriesMax, storeWriteBufferBytes, analysisThread: options.analysisThread ?? true };
}

/** The counters of an existing shard, or those of a new one (written, with the format, before first use). */
async function loadCounters(db: ShardDatabase, path: string): Promise<ShardCounters> {
  const [format, counters] = await db.getMany([META_FORMAT, META_COUNTERS]);
  if (format === undefined) {
    assert.equal(counters, undefined, 'shard counters without a format marker');
    const fresh: ShardCounters = { lastDocid: 0, seq: 0, documents: 0, maxNumericId: 0 };
    await db.batch([
      { type: 'put', key: META_FORMAT, value: encodeFormat() },
      { type: 'put', key: META_COUNTERS, value: encodeCounters(fresh) },
    ], { sync: true });
    return fresh;
  }
  const version = decodeFormat(format);
  if (version !== SHARD_FORMAT) throw engineErrors.formatUnsupported(path, version);
  assert.ok(counters !== undefined, 'shard format marker without counters');
  return decodeCounters(counters);
}
