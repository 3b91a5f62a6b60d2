/**
 * Bringing a shard copy back to a consistent state: at open, the counters
 * (written with every batch, so exact after any crash) and the search index
 * caught up with the document store by replaying the op-log entries its
 * segments and buffers do not cover (ENGINE.md "Write path" step 5); after
 * a failed batch, the database reopened (LevelDB refuses every write after a
 * log write error until then) and the counters taken from disk again.
 */
import assert from 'node:assert/strict';
import { statfs } from 'node:fs/promises';
import { ShardIndex, type ShardIndexOptions } from '../indexing/index.js';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { CommitLog, type CommitLogOptions, type CommitLogRecord } from '../store/commit-log.js';
import { checkLevelDbLogs } from '../store/log-check.js';
import { META_COMMIT_LOG_TOKEN, META_COUNTERS, META_FORMAT } from '../store/keys.js';
import { Oplog, OPLOG_READ_ENTRIES_MAX, type ShardDatabase } from '../store/oplog.js';
import { decodeCounters, decodeFormat, encodeCounters, encodeFormat, SHARD_FORMAT, type ShardCounters } from '../store/records.js';
import { readStoredSchema } from '../store/stored-schema.js';
import { engineErrors, storageFull } from '../errors.js';
import type { ShardState } from './state.js';

/** The counters of an existing shard, or those of a new one (written, with the format, before first use). */
export async function loadCounters(db: ShardDatabase, path: string): Promise<ShardCounters> {
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

/**
 * The copy's ID in the node's commit log (made at its first open with the
 * log), with LevelDB synced: what it holds unsynced from before a crash of
 * the process is then durable, so its next `commit` batch may go to the log
 * (store/commit-log.ts: a record never follows a batch that could be lost).
 */
export async function commitLogToken(db: ShardDatabase): Promise<Buffer> {
  const [stored] = await db.getMany([META_COMMIT_LOG_TOKEN]);
  const token = stored ?? randomBytes(16);
  await db.put(META_COMMIT_LOG_TOKEN, token, { sync: true });
  return token;
}

/**
 * Re-apply to the copy in `path` the commit log's records of its batches
 * past the end of its LevelDB, in order, then sync it (the node's log calls
 * this at open, before any copy opens). LevelDB holds a prefix of the copy's
 * batches, and a batch went to the log only while every earlier one was
 * durable, so the first record past that prefix starts where it ends; one
 * that does not means the two disagree, and this throws rather than guess.
 * Records of another token are an earlier copy's in the same directory.
 */
export async function replayCommitLog(path: string, records: readonly CommitLogRecord[]): Promise<number> {
  // A copy deleted since, or never written beyond its creation: nothing to bring back.
  if (!existsSync(join(path, 'CURRENT'))) return 0;
  const corruption = await checkLevelDbLogs(path);
  if (corruption !== null) throw engineErrors.storeCorrupted(`${corruption.file} at byte ${corruption.offset}`, corruption.why);
  const db: ShardDatabase = new ClassicLevel<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false });
  await db.open();
  try {
    const [token, counters] = await db.getMany([META_COMMIT_LOG_TOKEN, META_COUNTERS]);
    if (token === undefined || counters === undefined) return 0;
    let seq = decodeCounters(counters).seq;
    let replayed = 0;
    for (const record of records) {
      if (!record.token.equals(token) || record.seq <= seq) continue;
      if (record.prevSeq > seq) {
        throw engineErrors.storeCorrupted(`the commit log's records of ${path}`, `the next record follows seq ${record.prevSeq}, the database ends at seq ${seq}`);
      }
      await db.batch(record.operations);
      seq = record.seq;
      replayed++;
    }
    if (replayed > 0) await db.put(META_COMMIT_LOG_TOKEN, token, { sync: true });
    return replayed;
  } finally {
    await db.close();
  }
}

/** The node's commit log in `dir`, the files left there replayed into their copies first (store/commit-log.ts). */
export function openCommitLog(dir: string, options?: CommitLogOptions): ReturnType<typeof CommitLog.open> {
  return CommitLog.open(dir, replayCommitLog, options);
}

/**
 * Open the search index and bring it up to the document store: replay the
 * op-log entries its segments and buffer do not cover yet (crash recovery),
 * with the schema stored beside them. Resolves with the ms spent loading
 * the segments and replaying (the open's log line).
 */
export async function openIndex(state: ShardState, options: ShardIndexOptions): Promise<{ segmentsMs: number; replayMs: number }> {
  const startedMs = performance.now();
  await loadSchema(state);
  state.index = await ShardIndex.open(state.db, {
    ...options,
    onPersisted: () => {
      options.onPersisted?.();
      state.trimOplog();
    },
    onBackgroundError: (err, task) => {
      options.onBackgroundError?.(err, task);
      logBackgroundError(state, err, task);
    },
  });
  const segmentsLoadedMs = performance.now();
  for (let after = state.index.appliedSeq; after < state.counters.seq;) {
    const entries = await state.oplog.read(after, OPLOG_READ_ENTRIES_MAX);
    if (entries.length === 0) break;
    state.index.replay(entries, state.schema);
    after = (entries[entries.length - 1] as { seq: number }).seq;
  }
  return { segmentsMs: Math.round(segmentsLoadedMs - startedMs), replayMs: Math.round(performance.now() - segmentsLoadedMs) };
}

/** The stored schema (base and deltas) into the state: at open, and at a reopen, where a failed batch may have changed it after all. */
async function loadSchema(state: ShardState): Promise<void> {
  const stored = await readStoredSchema(state.db);
  state.schema = stored.schema;
  state.schemaStorage = stored.storage;
}

/**
 * A flush or merge failed (ShardIndex counts it and retries): an error in the
 * copy's log. A failing flush also shows in the node's stats, whence the
 * coordinator's `/readyz` and `/:metrics` take it.
 */
function logBackgroundError(state: ShardState, err: unknown, task: 'flush' | 'merge'): void {
  if (task === 'merge') {
    state.log.error({ err, task }, 'segment merge failed; retried after the next flush');
    return;
  }
  const failure = state.index.flushFailure();
  state.log.error({ err, task, failures: failure?.failures ?? 1, persistedSeq: state.index.persistedSeq, appliedSeq: state.index.appliedSeq },
    'segment flush failed; the write buffer stays in memory and the flush is retried');
}

/**
 * After a failed batch: reopen the database and take the counters from disk.
 * If they moved, the failed batch did reach the log after all ("may or may
 * not show up when reopened", LevelDB's log writer): clear the cache and void
 * every write decided before, since it may have read an older document.
 */
export async function recover(state: ShardState): Promise<void> {
  state.recovering = reopen(state);
  try {
    await state.recovering;
  } finally {
    state.recovering = undefined;
  }
}

async function reopen(state: ShardState): Promise<void> {
  if (state.diskFull && state.db.status === 'open') {
    const { bavail, bsize } = await statfs(state.path);
    if (bavail * bsize < state.reopenBytesMin) {
      throw storageFull(Object.assign(new Error(`No space left on device: ${bavail * bsize} bytes free in ${state.path}, `
        + `${state.reopenBytesMin} needed to reopen the database after a failed write`), { code: 'ENOSPC' }));
    }
  }
  await state.oplog.settled();
  if (state.db.status !== 'closed') await state.db.close();
  await state.db.open();
  const counters = await loadCounters(state.db, state.path);
  await loadSchema(state);
  const before = state.counters;
  const landed = counters.seq !== before.seq || counters.lastDocid !== before.lastDocid || counters.documents !== before.documents;
  if (landed) {
    state.stateEpoch++;
    state.cache.clear();
    for (const flight of state.reads.values()) flight.stale = true;
    state.counters = counters;
  }
  state.oplog.reset(await Oplog.bounds(state.db, state.counters.seq), state.counters.seq);
  state.recoveryNeeded = false;
  state.diskFull = false;
  state.counts.recoveries++;
  state.log.warn({ seq: state.counters.seq, failedBatchLanded: landed }, 'database reopened after a failed batch');
}
