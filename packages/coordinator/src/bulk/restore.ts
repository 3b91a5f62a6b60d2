/**
 * RESTORE /idx/ (API.md §7.7): a JSON array, NDJSON or MessagePack sequence
 * of documents, decoded item by item from the (streamed) body, prepared like
 * PUT (typed, ID generated when absent), and sent in batches: one
 * `doc.writeMany` per shard per batch to its primary, which writes it as one
 * LevelDB batch, then one `doc.replicate` of its results per replica
 * (replication/replicator.ts). The next batch is prepared while one is written. A failing item is reported in its place and
 * does not stop the rest.
 */
import { errorBody, TesseraError, toTesseraError } from '@tessera/errors';
import { decodeSequence, sequenceFormatOf, type DecodeLimits } from '@tessera/http';
import { isPlainObject } from '@tessera/schema';
import type { WriteManyCall, WriteManyReply } from '@tessera/rpc';
import type { DocumentHandlers, Prepared, Target } from '../documents/handlers.js';
import type { IndexMeta } from '../state/cluster-state.js';
import type { Replicator } from '../replication/replicator.js';
import { apiErrors } from '../errors.js';
import type { RequestContext } from '../request/context.js';
import { isInternalIndex } from '../request/path.js';
import { isContentBody } from '../documents/content.js';
import { duration } from '../response/human.js';
import type { Reply } from '../response/respond.js';

export interface RestoreOptions {
  /** Items per batch sent to the shards. */
  batchItems: number;
  /** Largest single item, bytes. */
  itemBytesMax: number;
  decodeLimits: DecodeLimits;
}

type Write = WriteManyCall['writes'][number];

interface Pending {
  position: number;
  target: Target;
  write: Write;
  /** `_data`: stored content, linked once the document is written, in the order given. */
  content?: Array<{ type: string; bytes: Uint8Array }>;
}

export class RestoreHandler {
  constructor(private readonly documents: DocumentHandlers, private readonly options: RestoreOptions) {}

  private get replication(): Replicator {
    return this.documents.replication;
  }

  async restore(ctx: RequestContext): Promise<Reply> {
    const started = process.hrtime.bigint();
    const index = ctx.singleIndex();
    if (isInternalIndex(index)) throw apiErrors.internalIndex(index);
    const format = sequenceFormatOf(ctx.req.headers['content-type']);
    if (format === undefined) throw apiErrors.unsupportedMediaType(ctx.req.headers['content-type'] ?? '');
    const commit = ctx.options.commit;
    const items: unknown[] = [];
    const counts = { prepared: 0, processed: 0, indexed: 0, total: 0 };
    let batch: Pending[] = [];
    // Batches are written while the next is decoded and prepared (the shard's LevelDB write and analysis
    // thread overlap this thread's work), BATCHES_IN_FLIGHT at most.
    const inflight = new InFlight();
    // Streamed when the HTTP server was told to (RESTORE bodies may be GiBs).
    const chunks = ctx.req.bodyStream ?? [ctx.req.body];
    try {
      for await (const decoded of decodeSequence(chunks, format, this.options.decodeLimits, this.options.itemBytesMax)) {
        for (const item of decoded) {
          counts.total++;
          if (item.error) {
            items[item.index] = errorBody(item.error);
            continue;
          }
          try {
            // Most items prepare without a promise (handlers.ts `prepare`): only those that wait are awaited.
            const prepared = this.prepare(index, item.index, item.value);
            batch.push(prepared instanceof Promise ? await prepared : prepared);
            counts.prepared++;
          } catch (err) {
            items[item.index] = errorBody(toTesseraError(err));
            continue;
          }
          if (batch.length >= this.options.batchItems) {
            await inflight.before(batch);
            inflight.add(batch, this.send(batch, items, counts, commit));
            batch = [];
          }
        }
      }
    } catch (err) {
      // The body failed mid-stream: what was sent finishes before the error is answered.
      await inflight.all().catch(() => undefined);
      throw err;
    }
    await inflight.all();
    await this.send(batch, items, counts, commit);
    if (!ctx.options.echo) return { status: 200 };
    const took = Number(process.hrtime.bigint() - started) / 1e9;
    return { status: 200, value: { ...counts, items, took: duration(took, ctx.options.human) } };
  }

  /** Item `position` into a write for its shard. */
  private prepare(index: string, position: number, value: unknown): Pending | Promise<Pending> {
    if (!isPlainObject(value)) throw apiErrors.badBody('A RESTORE item must be an object');
    const { _op_type: opType, _patch: patch, _data: data, ...raw } = value;
    const content = data === undefined ? undefined : parseData(data);
    const op = opType === undefined || opType === 'index' ? 'index'
      : opType === 'update' || opType === 'merge' ? 'update'
        : opType === 'patch' ? 'patch' : undefined;
    if (op === undefined) throw apiErrors.badBody(`Unknown _op_type ${JSON.stringify(opType)}: use index, update, merge or patch`);
    if (op === 'patch' && !Array.isArray(patch)) throw apiErrors.badBody("A patch item needs '_patch': an array of JSON Patch operations");
    // An update, merge or patch of a document that does not exist indexes it as new, as Xapiand's RESTORE does.
    const pending = (prepared: Prepared): Pending => {
      const write: Write = op === 'patch'
        ? { op, id: prepared.target.id, patch: patch as unknown[], upsert: true, expectedVersions: prepared.expected }
        : op === 'update'
          ? { op, id: prepared.target.id, body: prepared.body, indexed: prepared.indexed, upsert: true, expectedVersions: prepared.expected }
          : { op, id: prepared.target.id, body: prepared.body, indexed: prepared.indexed, expectedVersions: prepared.expected };
      return content === undefined || content.length === 0 ? { position, target: prepared.target, write } : { position, target: prepared.target, write, content };
    };
    const prepared = this.documents.prepare(index, raw, undefined, undefined);
    return prepared instanceof Promise ? prepared.then(pending) : pending(prepared);
  }

  /** One `doc.writeMany` per shard, all shards at once. */
  private async send(batch: Pending[], items: unknown[], counts: { processed: number; indexed: number }, commit: boolean): Promise<void> {
    if (batch.length === 0) return;
    const byShard = new Map<string, { meta: IndexMeta; index: string; shard: number; pending: Pending[]; schema: Record<string, unknown> }>();
    for (const p of batch) {
      const key = `${p.target.shard}${p.target.meta.path}`;
      let group = byShard.get(key);
      if (!group) byShard.set(key, group = { meta: p.target.meta, index: p.target.meta.path, shard: p.target.shard, pending: [], schema: p.target.meta.schema });
      group.pending.push(p);
      // Items may have grown the schema: send the newest one the batch saw.
      if (p.target.meta.schema !== group.schema) group.schema = p.target.meta.schema;
    }
    await Promise.all([...byShard.values()].map(async (group) => {
      const call: WriteManyCall = { index: group.index, shard: group.shard, commit, schema: group.schema, writes: group.pending.map((p) => p.write) };
      let replies: WriteManyReply;
      try {
        replies = await this.replication.writeMany(group.meta, group.shard, call);
      } catch (err) {
        const body = errorBody(toTesseraError(err));
        replies = group.pending.map(() => ({ error: { code: 'shard_failed', status: body.status as number, message: String(body.message) } }));
      }
      for (let i = 0; i < group.pending.length; i++) {
        const p = group.pending[i] as Pending;
        counts.processed++;
        let reply = replies[i];
        if (reply !== undefined && 'error' in reply && reply.error.code === 'script_schema_change') {
          // A patch item that adds fields: folded into the schema and written again, as a single PATCH is.
          try {
            reply = await this.documents.send(p.target, commit, p.write);
          } catch (err) {
            items[p.position] = errorBody(toTesseraError(err));
            continue;
          }
        }
        if (reply !== undefined && !('error' in reply) && p.content !== undefined) {
          // Each blob is one more write of the document (API.md §6), made once its body is stored.
          try {
            for (const entry of p.content) {
              reply = await this.replication.write(group.meta, group.shard, {
                index: group.index, shard: group.shard, op: 'update', id: reply.id, upsert: true, commit, schema: group.schema, content: entry,
              });
            }
          } catch (err) {
            items[p.position] = errorBody(toTesseraError(err));
            continue;
          }
        }
        if (reply === undefined || 'error' in reply) {
          items[p.position] = errorBody(TesseraError.fromJSON(reply?.error));
          continue;
        }
        counts.indexed++;
        items[p.position] = { _id: reply.id, _version: reply.version, '#docid': reply.docid, '#shard': group.shard };
      }
    }));
  }
}

/** RESTORE batches written at once at most. */
const BATCHES_IN_FLIGHT = 2;

/**
 * The batches being written. A batch waits, before it is sent, for any in
 * flight that writes one of its documents (a document's writes apply in
 * item order) and for a free place.
 */
class InFlight {
  private readonly batches: Array<{ keys: Set<string>; done: Promise<void> }> = [];

  async before(batch: readonly Pending[]): Promise<void> {
    for (;;) {
      const blocking = this.batches.find((b, i) => i <= this.batches.length - BATCHES_IN_FLIGHT || batch.some((p) => b.keys.has(keyOf(p))));
      if (blocking === undefined) return;
      await blocking.done;
    }
  }

  add(batch: readonly Pending[], sent: Promise<void>): void {
    const entry = { keys: new Set(batch.map(keyOf)), done: sent };
    this.batches.push(entry);
    void sent.then(() => this.batches.splice(this.batches.indexOf(entry), 1), () => undefined);
  }

  async all(): Promise<void> {
    await Promise.all(this.batches.map((b) => b.done));
  }
}

function keyOf(p: Pending): string {
  return `${p.target.meta.path}\0${String(p.target.id)}`;
}

/**
 * `_data` of a RESTORE item (§7.6, §7.7): `[{"_content_type", "_type":
 * "stored", "_blob"}]`, the blob binary (MessagePack) or base64 (JSON,
 * YAML); `inplace` entries stand for the body itself and are skipped.
 */
function parseData(data: unknown): Array<{ type: string; bytes: Uint8Array }> {
  if (!Array.isArray(data)) throw apiErrors.badBody("'_data' must be an array of stored content entries");
  const out: Array<{ type: string; bytes: Uint8Array }> = [];
  for (const entry of data as unknown[]) {
    if (!isPlainObject(entry)) throw apiErrors.badBody("a '_data' entry must be an object");
    if (entry._type === 'inplace') continue;
    if (entry._type !== undefined && entry._type !== 'stored') throw apiErrors.badBody("a '_data' entry's '_type' must be 'stored' or 'inplace'");
    const type = entry._content_type;
    if (typeof type !== 'string' || type.length === 0 || !isContentBody(type)) {
      throw apiErrors.badBody("a '_data' entry needs '_content_type': a media type that is not a document codec");
    }
    const blob = entry._blob;
    let bytes: Uint8Array;
    if (blob instanceof Uint8Array) bytes = blob;
    else if (typeof blob === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(blob) && blob.length % 4 === 0) bytes = Buffer.from(blob, 'base64');
    else throw apiErrors.badBody("a '_data' entry's '_blob' must be binary or base64 text");
    if (bytes.length === 0) throw apiErrors.badBody("a '_data' entry's '_blob' must not be empty");
    out.push({ type, bytes });
  }
  return out;
}
