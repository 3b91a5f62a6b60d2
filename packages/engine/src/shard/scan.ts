/**
 * Reading a shard copy in order, not by key: its live documents in ID order
 * (all of them, or DUMP's pages from a cursor), its operation log from a
 * seq (replica catch-up), and a point-in-time view paged the same way
 * (`tessera snapshot`). Read from LevelDB snapshots, never cached.
 */
import assert from 'node:assert/strict';
import { TesseraError } from '@tessera/errors';
import { validateDocumentId } from '../documents/document-id.js';
import type { DocumentId, OplogEntry, StoredDocument } from '../documents/types.js';
import { documentKey, META_COUNTERS, PREFIX_DOCUMENTS, spaceRange } from '../store/keys.js';
import { OPLOG_READ_ENTRIES_MAX, type ShardDatabase } from '../store/oplog.js';
import { decodeCounters, decodeDocumentRecord } from '../store/records.js';
import { SCAN_DOCUMENTS_MAX, SCAN_PAGE_BYTES_MAX } from './options.js';
import type { ShardState } from './state.js';

type LevelSnapshot = ReturnType<ShardDatabase['snapshot']>;

/** Operation-log entries with seq > afterSeq (at most `limit`), for replica catch-up; 410 `oplog_trimmed` if they are gone. */
export async function readOplog(state: ShardState, afterSeq: number, limit: number = OPLOG_READ_ENTRIES_MAX): Promise<OplogEntry[]> {
  state.checkOpen();
  try {
    return await state.oplog.read(afterSeq, limit);
  } catch (err) {
    throw err instanceof TesseraError || err instanceof assert.AssertionError ? err : state.readFailed(err);
  }
}

/** Every live document in ID order (numbers first), read from a LevelDB snapshot; not cached. */
export async function* documents(state: ShardState): AsyncGenerator<StoredDocument> {
  state.checkOpen();
  const iterator = state.db.values(spaceRange(PREFIX_DOCUMENTS));
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
 * pages shows in a later page if its ID sorts after the cursor (unless every
 * page reads the same `snapshot`: ShardSnapshot). `done` once nothing
 * follows the page. Not cached.
 */
export async function scan(state: ShardState, after: DocumentId | undefined, limit: number,
  snapshot?: LevelSnapshot): Promise<{ documents: StoredDocument[]; done: boolean }> {
  assert.ok(Number.isInteger(limit) && limit >= 1 && limit <= SCAN_DOCUMENTS_MAX, 'scan limit out of range');
  if (after !== undefined) validateDocumentId(after);
  state.checkOpen();
  const range = spaceRange(PREFIX_DOCUMENTS);
  const bounds = after === undefined ? { ...range, limit } : { gt: documentKey(after), lt: range.lt, limit };
  const iterator = state.db.values(snapshot === undefined ? bounds : { ...bounds, snapshot });
  const documents: StoredDocument[] = [];
  let bytes = 0;
  try {
    for await (const value of iterator) {
      documents.push(decodeDocumentRecord(value));
      bytes += value.length;
      if (bytes >= SCAN_PAGE_BYTES_MAX && documents.length < limit) return { documents, done: false };
    }
  } catch (err) {
    throw err instanceof TesseraError || err instanceof assert.AssertionError ? err : state.readFailed(err);
  } finally {
    await iterator.close();
  }
  return { documents, done: documents.length < limit };
}

/**
 * A point-in-time view of a shard copy (one explicit LevelDB snapshot): its
 * documents paged as `scan` pages them, every page from the same instant,
 * and the counters of that instant. A write's document, op-log entry and
 * counters go in one LevelDB batch (shard/batch.ts), so the view holds each
 * acknowledged write whole or not at all; blobs are never rewritten
 * (content/volumes.ts), so those it links stay readable. Holding it keeps
 * LevelDB from dropping the old versions it sees: close it when done.
 */
export class ShardSnapshot {
  private constructor(private readonly state: ShardState, private readonly snapshot: LevelSnapshot,
    /** The seq of the last write the view holds. */
    readonly seq: number,
    /** Live documents in the view. */
    readonly documents: number) {}

  static async take(state: ShardState): Promise<ShardSnapshot> {
    state.checkOpen();
    const snapshot = state.db.snapshot();
    try {
      const counters = await state.db.get(META_COUNTERS, { snapshot });
      assert.ok(counters !== undefined, 'shard counters missing');
      const { seq, documents } = decodeCounters(counters);
      return new ShardSnapshot(state, snapshot, seq, documents);
    } catch (err) {
      await snapshot.close();
      throw err instanceof TesseraError || err instanceof assert.AssertionError ? err : state.readFailed(err);
    }
  }

  /** One page of the view's documents after `after`, as `scan` pages them. */
  scan(after: DocumentId | undefined, limit: number): Promise<{ documents: StoredDocument[]; done: boolean }> {
    return scan(this.state, after, limit, this.snapshot);
  }

  close(): Promise<void> {
    return this.snapshot.close();
  }
}
