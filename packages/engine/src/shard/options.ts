/**
 * A shard copy's options (ShardOptions), their defaults and limits, and the
 * check that turns them into ShardSettings before anything is opened.
 */
import type { CommitLog } from '../store/commit-log.js';
import type { ScriptRunner } from '@tessera/scripting';
import type { ContentVolumesOptions } from '../content/volumes.js';
import type { DocumentCacheBudget } from '../documents/document-cache.js';
import { engineErrors } from '../errors.js';
import type { ShardIndexOptions } from '../indexing/index.js';
import type { EngineLogger } from '../logger.js';
import type { StoreMemoryBudget } from '../store/store-memory.js';

export interface ShardOptions {
  /** Directory of the shard copy's LevelDB database (created if missing). */
  path: string;
  /** Budget of the decoded-document cache, estimated bytes. Default 64 MiB; 0 disables it. */
  documentCacheBytesMax?: number | undefined;
  /**
   * A decoded-document budget shared with other shard copies (a node's: ShardNode makes one from its
   * `documentCacheBytesMax`); when given, `documentCacheBytesMax` is ignored and this copy's cache competes
   * with the others for one bound. Default: a budget of this copy's own.
   */
  documentCache?: DocumentCacheBudget | undefined;
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
   * The bound on what the LevelDB databases hold in memory (memtables, block caches), shared with other shard
   * copies (a node's: ShardNode makes one from its `storeMemoryBytesMax`). Default: a budget of this copy's own.
   */
  storeMemory?: StoreMemoryBudget | undefined;
  /**
   * The node's commit log (store/commit-log.ts), shared by its copies: `commit` batches are made durable there,
   * one fsync per round for every copy, and re-applied from it at open. Default none: each copy syncs its LevelDB.
   */
  commitLog?: CommitLog | undefined;
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
  /** Where the copy logs (its open, failed batches, failed flushes and merges); a child with the copy's bindings. Default: silent. */
  log?: EngineLogger | undefined;
}

/** ShardOptions with every default applied and checked. */
export interface ShardSettings {
  documentCacheBytesMax: number;
  documentCache: DocumentCacheBudget | undefined;
  groupCommitWindowMs: number;
  batchEntriesMax: number;
  oplogEntriesMax: number;
  storeWriteBufferBytes: number;
  storeMemory: StoreMemoryBudget | undefined;
  commitLog: CommitLog | undefined;
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

export function resolveOptions(options: ShardOptions): ShardSettings {
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
  return { documentCacheBytesMax, documentCache: options.documentCache, groupCommitWindowMs, batchEntriesMax, oplogEntriesMax, storeWriteBufferBytes, storeMemory: options.storeMemory, commitLog: options.commitLog, analysisThread: options.analysisThread ?? true };
}
