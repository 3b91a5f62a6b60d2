/**
 * One shard copy: a classic-level database holding its documents, #docid map,
 * counters and operation log (key spaces: store/keys.ts), its search index
 * (indexing/shard-index.ts: write buffer, segments, flush and merge) and its
 * stored content volumes. `Shard` is the facade the node calls; the parts
 * sit in shard/, one responsibility each, over the state they share
 * (shard/state.ts: reads, per-document write chains):
 *
 * - shard/writes.ts: `mutate`, `write`, `writeMany` — decide on the current
 *   document, compute its terms, queue one change;
 * - shard/batch.ts: group commit — every change with its oplog entry and the
 *   counters in one LevelDB batch; the document cache and the index change
 *   only once LevelDB has it, so a GET or a search never shows an
 *   unacknowledged write, and every acknowledged one is searchable at once;
 * - shard/recovery.ts: crash replay of the op log into the index at open, and
 *   the reopen after a failed batch;
 * - shard/replication.ts: primary terms, replicated changes applied only when
 *   newer by origin, the checkpoint;
 * - shard/content.ts: stored content appended and linked;
 * - shard/search.ts: the search entry; shard/scan.ts: documents and op log in order.
 *
 * A write's promise resolves once its batch is in LevelDB's log: without
 * `commit` it survives a process kill, with `commit` (sync) a power loss.
 */
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { TesseraError } from '@tessera/errors';
import { ContentVolumes, type BlobLocation } from './content/volumes.js';
import { documentIdKey, validateDocumentId } from './documents/document-id.js';
import type {
  DocumentId, DocumentLengths, Mutation, OplogEntry, ShardMetrics, ShardStats, StoredDocument, WriteRequest, WriteResult,
} from './documents/types.js';
import { engineErrors } from './errors.js';
import { startTextWorker } from './indexing/text-analysis.js';
import { SILENT_LOGGER } from './logger.js';
import { INITIAL_REPLICATION_STATE, type ReplicatedChange, type ReplicateOutcome } from './replication/index.js';
import type { BatchOutcome } from './store/group-commit.js';
import { META_REPLICATION } from './store/keys.js';
import { checkLevelDbLogs } from './store/log-check.js';
import { checkLevelDbTables } from './store/table-check.js';
import { Oplog, OPLOG_READ_ENTRIES_MAX, type ShardDatabase } from './store/oplog.js';
import { decodeReplicationState } from './store/records.js';
import { commitBatch } from './shard/batch.js';
import { BARRIER, STORE_SYNC } from './shard/change.js';
import { resolveOptions, type ShardOptions } from './shard/options.js';
import { commitLogToken, loadCounters, openIndex } from './shard/recovery.js';
import { applyReplicated, follow, replicationState, type ShardReplicationState } from './shard/replication.js';
import { documents, readOplog, scan, ShardSnapshot } from './shard/scan.js';
import { searchShard, type ShardSearchRequest, type ShardSearchResult } from './shard/search.js';
import { noop, ShardState } from './shard/state.js';
import { STORE_BLOCK_CACHE_BYTES, StoreMemoryBudget } from './store/store-memory.js';
import { type BulkWriteOptions, mutate, type MutateOptions, write, writeMany } from './shard/writes.js';

export {
  SCAN_DOCUMENTS_MAX, SCAN_PAGE_BYTES_MAX, SHARD_DEFAULTS, type ShardOptions, STORE_WRITE_BUFFER_BYTES_MAX, STORE_WRITE_BUFFER_BYTES_MIN,
} from './shard/options.js';
export type { ShardReplicationState } from './shard/replication.js';
export type { ShardSnapshot } from './shard/scan.js';
export type { ShardSearchRequest, ShardSearchResult } from './shard/search.js';
export type { BulkWriteOptions, MutateOptions } from './shard/writes.js';

export class Shard {
  private closed: Promise<void> | undefined;

  private constructor(private readonly state: ShardState) {}

  /** Open (creating if missing) the shard copy in `options.path`. */
  static async open(options: ShardOptions): Promise<Shard> {
    const resolved = resolveOptions(options);
    const path = options.path;
    // Where the open's time goes (logged with 'shard copy opened'): R14 measures recovery by these.
    const openStartedMs = performance.now();
    let corruption;
    try {
      await mkdir(path, { recursive: true });
      corruption = (await checkLevelDbLogs(path)) ?? (await checkLevelDbTables(path));
    } catch (err) {
      throw engineErrors.storageUnavailable(err);
    }
    if (corruption !== null) throw engineErrors.storeCorrupted(`${corruption.file} at byte ${corruption.offset}`, corruption.why);
    const db: ShardDatabase = new ClassicLevel<Buffer, Buffer>(path, {
      keyEncoding: 'buffer', valueEncoding: 'buffer', writeBufferSize: resolved.storeWriteBufferBytes, cacheSize: STORE_BLOCK_CACHE_BYTES,
    });
    const logCheckedMs = performance.now();
    try {
      await db.open();
    } catch (err) {
      // What the checks above do not read (CURRENT, say) LevelDB may still find corrupt.
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      if (cause?.code === 'LEVEL_CORRUPTION') throw engineErrors.storeCorrupted(`the LevelDB database in ${path}`, cause.message ?? 'corruption');
      throw engineErrors.storageUnavailable(err);
    }
    try {
      const counters = await loadCounters(db, path);
      const commitLog = resolved.commitLog;
      const token = commitLog === undefined ? undefined : await commitLogToken(db);
      const firstSeq = await Oplog.bounds(db, counters.seq);
      const [replication] = await db.getMany([META_REPLICATION]);
      const state = new ShardState(db, path, options.log ?? SILENT_LOGGER, resolved, counters, firstSeq,
        replication === undefined ? INITIAL_REPLICATION_STATE : decodeReplicationState(replication), commitBatch);
      if (commitLog !== undefined && token !== undefined) {
        state.commitLog = commitLog;
        state.commitLogToken = token;
        state.commitLogPath = commitLog.copyPath(path);
        state.durable = true;
        // Before the log deletes a file, this copy's records in it must be in its synced LevelDB.
        state.releaseCommitLog = commitLog.register(() => state.writer.submit(STORE_SYNC, true).then(noop));
      }
      // Bulk writes analyse text on the analysis thread: started now, so it is ready when they come.
      if (resolved.analysisThread) void startTextWorker();
      const storeOpenedMs = performance.now();
      const { segmentsMs, replayMs } = await openIndex(state, options.index ?? {});
      state.content = await ContentVolumes.open(join(path, 'content'), options.content);
      state.storeMemory = resolved.storeMemory ?? new StoreMemoryBudget();
      state.releaseStoreMemory = state.storeMemory.add(db);
      state.scripts = options.scripts;
      const { segments, replayedEntries } = state.index.metrics();
      state.log.info({
        documents: counters.documents, seq: counters.seq, segments, replayedEntries, ms: Math.round(performance.now() - openStartedMs),
        logCheckMs: Math.round(logCheckedMs - openStartedMs), storeOpenMs: Math.round(storeOpenedMs - logCheckedMs), segmentsMs, replayMs,
      }, 'shard copy opened');
      state.fillIds();
      return new Shard(state);
    } catch (err) {
      await db.close().catch(noop);
      throw err instanceof TesseraError || err instanceof assert.AssertionError ? err : engineErrors.storageUnavailable(err);
    }
  }

  get path(): string {
    return this.state.path;
  }

  /** The schema the shard indexes with. */
  get indexSchema(): Record<string, unknown> {
    return this.state.schema;
  }

  /**
   * SEARCH on this shard (API.md §9): parse the query and the sort, run them
   * over the index as it is now, and fetch the best `k` documents. Totals
   * are exact. Every acknowledged write is visible (no refresh interval).
   */
  search(request: ShardSearchRequest): Promise<ShardSearchResult> {
    return searchShard(this.state, request);
  }

  /**
   * The current document, or undefined. Served from the cache when hot.
   * The returned object is shared (cache): never mutate it.
   */
  get(id: DocumentId): Promise<StoredDocument | undefined> {
    return this.state.get(id);
  }

  /**
   * The current document when the cache holds it, else undefined (also while
   * closing): `get` then reads it (and counts the miss). Synchronous, for
   * reads answered without a promise. Shared object: never mutate it.
   */
  cached(id: DocumentId): StoredDocument | undefined {
    validateDocumentId(id);
    if (this.state.closing) return undefined;
    return this.state.cache.find(documentIdKey(id));
  }

  /** The current document with this #docid, or undefined. Shared object: never mutate it. */
  getByDocid(docid: number): Promise<StoredDocument | undefined> {
    return this.state.getByDocid(docid);
  }

  /**
   * Read-modify-write of one document, serialised with every other write to
   * it (shard/writes.ts). `decide` sees the current document and returns the
   * Mutation to store, or throws (nothing is written). Resolves once the
   * change is in LevelDB (durable with `commit`).
   */
  mutate(id: DocumentId, decide: (current: StoredDocument | undefined) => Mutation, options: MutateOptions = {}): Promise<WriteResult> {
    return mutate(this.state, id, decide, options);
  }

  /** A document write with API.md §5 semantics, or a stored-content write (§6). */
  write(req: WriteRequest): Promise<WriteResult> {
    return write(this.state, req);
  }

  /** Bulk writes (RESTORE), each as `write` with `bulk` would make it, answered in place. */
  writeMany(reqs: readonly WriteRequest[], options: BulkWriteOptions = {}): Promise<Array<BatchOutcome<WriteResult>>> {
    return writeMany(this.state, reqs, options);
  }

  /**
   * Bytes [from, from + length) of a stored blob; with `verify` the whole
   * blob's checksum is checked first (a streamed answer's first read).
   * 500 `content_corrupted` for a torn or damaged blob.
   */
  readContent(where: BlobLocation, from: number, length: number, verify: boolean): Promise<Buffer> {
    if (this.state.closing) return Promise.reject(engineErrors.shardClosed());
    return this.state.content.readRange(where, from, length, verify);
  }

  /** A whole stored blob, checked (replication sends it to copies that lack it). */
  readBlob(where: BlobLocation): Promise<Buffer> {
    if (this.state.closing) return Promise.reject(engineErrors.shardClosed());
    return this.state.content.read(where);
  }

  /** Apply changes a primary made, each only if newer than what this copy holds (shard/replication.ts). */
  applyReplicated(term: number, changes: readonly ReplicatedChange[], options: Omit<MutateOptions, 'term'> = {}): Promise<ReplicateOutcome> {
    return applyReplicated(this.state, term, changes, options);
  }

  /** The coordinator vouches that this copy holds every change of `term` up to `checkpoint`; persisted (sync). */
  follow(term: number, checkpoint: number): Promise<ShardReplicationState> {
    return follow(this.state, term, checkpoint);
  }

  /** The copy's replication position. */
  replicationState(): ShardReplicationState {
    return replicationState(this.state);
  }

  /** Resolves once everything acknowledged so far is durable (one sync batch, shared with concurrent writers). */
  async commit(): Promise<void> {
    this.state.checkOpen();
    await this.state.writer.submit(BARRIER, true);
  }

  /** Operation-log entries with seq > afterSeq (at most `limit`), for replica catch-up; 410 `oplog_trimmed` if they are gone. */
  readOplog(afterSeq: number, limit: number = OPLOG_READ_ENTRIES_MAX): Promise<OplogEntry[]> {
    return readOplog(this.state, afterSeq, limit);
  }

  /** Every live document in ID order (numbers first), read from a LevelDB snapshot; not cached. */
  documents(): AsyncGenerator<StoredDocument> {
    return documents(this.state);
  }

  /** One page of live documents in ID order after `after`, for DUMP (shard/scan.ts). */
  scan(after: DocumentId | undefined, limit: number): Promise<{ documents: StoredDocument[]; done: boolean }> {
    return scan(this.state, after, limit);
  }

  /** A point-in-time view of the copy's documents, paged like `scan` (shard/scan.ts); close it when done. */
  snapshot(): Promise<ShardSnapshot> {
    return ShardSnapshot.take(this.state);
  }

  /** Document counters as of the last acknowledged write (kept in memory, persisted with every batch). */
  stats(): ShardStats {
    const c = this.state.counters;
    return { documents: c.documents, lastDocid: c.lastDocid, seq: c.seq, maxNumericId: c.maxNumericId };
  }

  /** Terms per live document (INFO /idx/): a walk of the index's norms. */
  documentLengths(): DocumentLengths {
    return this.state.index.documentLengths();
  }

  metrics(): ShardMetrics {
    const s = this.state;
    return {
      ...s.counts,
      changesQueued: s.writer.queued,
      documentCacheEntries: s.cache.size,
      documentCacheBytes: s.cache.bytes,
      documentCacheHits: s.cache.hits,
      documentCacheMisses: s.cache.misses,
      oplogFirstSeq: s.oplog.firstSeq,
      oplogTrims: s.oplog.trims,
      commitSeconds: { buffered: s.commitSeconds.buffered.snapshot(), synced: s.commitSeconds.synced.snapshot() },
      index: s.index.metrics(),
      flushFailure: s.index.flushFailure(),
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
    const s = this.state;
    s.closing = true;
    while (s.locks.size > 0) await Promise.all(s.locks.values());
    // The checkpoint lags one batch behind the changes it covers: write it down before closing.
    if (s.position.dirty) await s.writer.submit(BARRIER, false).catch(noop);
    // The commit log may delete its files once the copies it holds records of are synced: this one is, closed.
    if (s.commitLog !== undefined) await s.writer.submit(STORE_SYNC, true).catch(noop);
    await s.writer.idle();
    s.releaseCommitLog();
    while (s.reads.size > 0) await Promise.allSettled([...s.reads.values()].map((flight) => flight.promise));
    await s.idsFilled;
    await s.oplog.settled();
    s.cache.clear();
    await s.index.close();
    // A flush that finished while closing may have started a trim.
    await s.oplog.settled();
    await s.content.close();
    await s.releaseStoreMemory();
    if (s.db.status !== 'closed') await s.db.close();
  }
}
