/**
 * The batch writer behind the shard's group commit (store/group-commit.ts):
 * every change of a batch goes into one LevelDB batch together with its
 * #docid map entry, its oplog entry, the counters and the replication
 * position, so a batch is all-or-nothing and the counters are exact after
 * any crash; concurrent `commit` writes share one fsync — of the node's
 * commit log (store/commit-log.ts) when the node has one, so the `commit`
 * writes of all its shards share it. The document cache
 * and the search index change only once LevelDB has the batch, so a GET or
 * a search never shows an unacknowledged write.
 */
import assert from 'node:assert/strict';
import { TesseraError } from '@tessera/errors';
import type { StoredDocument, WriteResult } from '../documents/types.js';
import { engineErrors, isDiskFull } from '../errors.js';
import type { CommitLog, CommitLogOperation, CommitLogRecord } from '../store/commit-log.js';
import type { BatchOutcome, PendingBatch } from '../store/group-commit.js';
import { docidKey, DOCID_MAX, encodeIdTag, META_COMMIT_LOG_TOKEN, META_COUNTERS, META_REPLICATION, oplogKey } from '../store/keys.js';
import type { ShardDatabase } from '../store/oplog.js';
import { encodeCounters, encodeDocumentRecord, encodeOplogEntry, encodeReplicationState } from '../store/records.js';
import { type BatchWriter, type SchemaStorage, writeSchemaChange } from '../store/stored-schema.js';
import { type Change, withExtras, withOrigin } from './change.js';
import { recover } from './recovery.js';
import { noop, type ShardState } from './state.js';

/**
 * Writes one batch: every change with its document record, #docid map entry
 * and oplog entry, then the counters. Counters, cache and metrics change only
 * once LevelDB has the batch; if it fails, nothing in memory changes and the
 * next batch first reopens the database (`recover`).
 */
export async function commitBatch(state: ShardState, changes: Change[], sync: boolean): Promise<BatchOutcome<WriteResult | null>[] | PendingBatch<WriteResult | null>> {
  if (state.recoveryNeeded) {
    state.recoveryRequested = false;
    try {
      await recover(state);
    } catch (err) {
      state.counts.batchesFailed++;
      state.log.error({ err }, 'could not reopen the database after a failed batch; the next write tries again');
      throw err instanceof TesseraError ? err : engineErrors.storageUnavailable(err);
    }
  }
  const outcomes = new Array<BatchOutcome<WriteResult | null>>(changes.length);
  const applied: { change: Change; doc: StoredDocument | undefined; recordBytes: number; seq: number; docid: number }[] = [];
  /** The schema this batch stores (the last change's), and what LevelDB holds of it once the batch is written. */
  let changedSchema: Record<string, unknown> | undefined;
  let newSchema: { schema: Record<string, unknown>; storage: SchemaStorage } | undefined;
  const counters = { ...state.counters };
  const seen = new Set<string>();
  const log = state.commitLog;
  // Made durable in the node's commit log: a synced batch while every earlier batch of the copy is durable (store/commit-log.ts).
  const logged = log !== undefined && sync && state.durable && !changes.some((change) => change.storeSync === true);
  const operations: CommitLogOperation[] | undefined = logged ? [] : undefined;
  const prevSeq = state.counters.seq;
  let batch: ReturnType<ShardDatabase['batch']> | undefined;
  let writing = false;
  let positionWritten = false;
  let writeStartedMs = 0;
  try {
    batch = state.db.batch();
    const writer = recording(batch, operations);
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i];
      if (change.kind === 'barrier') {
        outcomes[i] = { ok: true, value: null };
        continue;
      }
      if (change.epoch !== state.stateEpoch) {
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
          writer.put(docidKey(docid), encodeIdTag(id));
        }
        const seq = ++counters.seq;
        const bodyBytes = change.bodyBytes;
        const body = change.body;
        assert.ok(bodyBytes !== undefined && body !== undefined);
        const doc: StoredDocument = withExtras(withOrigin({ id, docid, version, seq, body }, change), change);
        const record = encodeDocumentRecord(doc, bodyBytes);
        // Before LevelDB has it: the ID filter never answers "no" for a stored document.
        state.ids.add(change.key);
        writer.put(change.documentKey, record);
        writer.put(oplogKey(seq), encodeOplogEntry(withExtras(withOrigin({ seq, id, docid, version, op: 'put' as const }, change), change), bodyBytes));
        applied.push({ change, doc, recordBytes: record.length, seq, docid });
        outcomes[i] = { ok: true, value: withExtras({ id, docid, version, seq, body, deleted: false }, change) };
      } else {
        const seq = ++counters.seq;
        const docid = change.docid;
        writer.del(change.documentKey);
        writer.del(docidKey(docid));
        counters.documents--;
        assert.ok(counters.documents >= 0, 'document count must not go negative');
        writer.put(oplogKey(seq), encodeOplogEntry(withOrigin({ seq, id, docid, version, op: 'delete' as const }, change), undefined));
        applied.push({ change, doc: undefined, recordBytes: 0, seq, docid });
        outcomes[i] = { ok: true, value: { id, docid, version, seq, deleted: true } };
      }
      if (typeof id === 'number' && id > counters.maxNumericId) counters.maxNumericId = id;
      if (change.schema !== undefined) changedSchema = change.schema;
    }
    if (changedSchema !== undefined) {
      newSchema = { schema: changedSchema, storage: writeSchemaChange(writer, state.schemaStorage, state.schema, changedSchema) };
    }
    writer.put(META_COUNTERS, encodeCounters(counters));
    // The position as of changes already durable: it never claims one this batch may lose.
    if (state.position.dirty) {
      writer.put(META_REPLICATION, encodeReplicationState(state.position.snapshot()));
      state.position.dirty = false;
      positionWritten = true;
    }
    // Held back while the search index holds as many unpersisted changes as a crash may leave to replay (ShardIndex.admit).
    for (let held = state.index.admit(); held !== undefined; held = state.index.admit()) await held;
    // Held back while the node's LevelDB memtables wait to be written out (store/store-memory.ts).
    const stalled = state.storeMemory?.admit();
    if (stalled !== undefined) await stalled;
    writing = true;
    writeStartedMs = performance.now();
    await batch.write({ sync: sync && !logged });
  } catch (err) {
    if (batch !== undefined) await batch.close().catch(noop);
    if (positionWritten) state.position.dirty = true;
    if (err instanceof assert.AssertionError && !writing) {
      batchFailed(state, changes);
      throw err;
    }
    throw reopenAfter(state, changes, err, sync);
  }
  state.counters = counters;
  state.durable = sync;
  if (newSchema !== undefined) {
    state.schema = newSchema.schema;
    state.schemaStorage = newSchema.storage;
  }
  // A batch in the commit log is answered once its round is synced, but the copy's next batch need not wait for
  // that: its record follows this one's in the log. Batches are applied (index, cache) in seq order all the same.
  const durable = log !== undefined && operations !== undefined
    ? logDurably(state, log, { token: state.commitLogToken, path: state.commitLogPath, prevSeq, seq: counters.seq, operations })
    : undefined;
  const finished = state.applying.then(() => finishBatch(state, changes, applied, outcomes, sync, durable, writeStartedMs));
  state.applying = finished.then(noop, noop);
  return durable === undefined ? finished : { outcomes: finished };
}

/**
 * The rest of a batch LevelDB has: once durable (its commit-log round), the
 * search index, the cache and the counts; resolves with the writers' outcomes.
 */
async function finishBatch(state: ShardState, changes: Change[], applied: { change: Change; doc: StoredDocument | undefined; recordBytes: number; seq: number; docid: number }[],
  outcomes: BatchOutcome<WriteResult | null>[], sync: boolean, durable: Promise<void> | undefined, writeStartedMs: number): Promise<BatchOutcome<WriteResult | null>[]> {
  if (durable !== undefined) {
    try {
      await durable;
    } catch (err) {
      state.durable = false;
      throw reopenAfter(state, changes, err, sync);
    }
  }
  (sync ? state.commitSeconds.synced : state.commitSeconds.buffered).observe((performance.now() - writeStartedMs) / 1000);
  await textAnalysed(applied);
  // Searchable as soon as acknowledged: index in seq order before the writers are answered.
  for (const { change, seq, docid } of applied) {
    state.index.applyPrepared({ seq, docid, document: change.kind === 'put' ? (change.terms ?? null) : null });
  }
  state.counts.batchesWritten++;
  if (sync) state.counts.batchesSynced++;
  state.counts.changesWritten += applied.length;
  for (const { change, doc, recordBytes } of applied) {
    state.markStale(change.key);
    if (doc === undefined || change.uncached === true) {
      state.cache.delete(change.key);
    } else {
      state.cachedDocument(change.key, doc, recordBytes);
    }
  }
  state.trimOplog();
  return outcomes;
}

/** A batch failed: counted, and readers sent to LevelDB for its documents (its outcome on disk is unknown until the reopen). */
function batchFailed(state: ShardState, changes: readonly Change[]): void {
  state.durable = false;
  state.counts.batchesFailed++;
  for (const change of changes) {
    if (change.kind === 'barrier') continue;
    state.markStale(change.key);
    state.cache.delete(change.key);
  }
}

/** A batch whose write (or sync) failed: the database is reopened before the next batch (shard/recovery.ts). */
function reopenAfter(state: ShardState, changes: readonly Change[], err: unknown, sync: boolean): TesseraError {
  batchFailed(state, changes);
  if (isDiskFull(err)) state.diskFull = true;
  state.log.error({ err, changes: changes.length, sync }, 'LevelDB batch failed; the database is reopened before the next batch');
  state.requestRecovery();
  return engineErrors.storageUnavailable(err);
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

/** `batch`, with every operation also recorded in `operations` when the batch goes to the commit log. */
function recording(batch: ReturnType<ShardDatabase['batch']>, operations: CommitLogOperation[] | undefined): BatchWriter {
  if (operations === undefined) return batch;
  return {
    put(key: Buffer, value: Buffer) {
      batch.put(key, value);
      operations.push({ type: 'put', key, value });
    },
    del(key: Buffer) {
      batch.del(key);
      operations.push({ type: 'del', key });
    },
  };
}

/**
 * Make a batch LevelDB has (unsynced) durable in the commit log; if the log
 * cannot take it, sync LevelDB instead: a synced write of a value that never
 * changes (the copy's token: later batches may be written already) makes
 * every earlier write durable with it.
 */
async function logDurably(state: ShardState, log: CommitLog, record: CommitLogRecord): Promise<void> {
  try {
    await log.append(record);
  } catch (err) {
    state.log.warn({ err }, 'the commit log refused a batch; it is synced in LevelDB instead');
    await state.db.put(META_COMMIT_LOG_TOKEN, state.commitLogToken, { sync: true });
  }
}
