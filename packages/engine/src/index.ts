/** @tessera/engine — one shard: document store with versions, and the search index over it. */
export { SCAN_DOCUMENTS_MAX, Shard, SHARD_DEFAULTS, STORE_WRITE_BUFFER_BYTES_MAX, STORE_WRITE_BUFFER_BYTES_MIN } from './shard.js';
export type { MutateOptions, ShardOptions, ShardReplicationState, ShardSearchRequest, ShardSearchResult, ShardSnapshot } from './shard.js';
// The logger a shard copy writes to: a pino Logger satisfies it; the engine depends on no logging library.
export { type EngineLogger, SILENT_LOGGER } from './logger.js';
export { type FlushFailure, SHARD_INDEX_DEFAULTS, type ShardIndexMetrics } from './indexing/index.js';
export {
  FIRST_TERM, isNewer, originOf, REPLICATE_CHANGES_MAX, TOMBSTONE_TTL_MS,
  type Origin, type ReplicatedChange, type ReplicatedContent, type ReplicateOutcome, type ReplicationState,
} from './replication/index.js';
export { CONTENT_CHUNK_BYTES, CONTENT_DEFAULTS, type BlobLocation, type ContentVolumesOptions } from './content/volumes.js';
export { DocumentCacheBudget } from './documents/document-cache.js';
// Whether a body's compact JSON gives it back exactly (the node sends such bodies as their text).
export { jsonFaithful } from './documents/json-document.js';
export { STORE_MEMORY_DEFAULTS, StoreMemoryBudget, type StoreMemoryOptions, type StoreMemoryStats } from './store/store-memory.js';
export type {
  ContentLink, ContentWrite, DocumentBody, DocumentId, DocumentLengths, Mutation, OplogEntry, ShardMetrics, ShardStats, StoredDocument, WriteRequest, WriteResult, WriteScript,
} from './documents/types.js';
export { mergeDocument } from './documents/merge.js';
// INFO /idx/<id> (API.md §5.8): a stored body's terms and values, as indexing makes them.
export { type DocumentInfo, documentInfo, type TermInfo } from './indexing/document-info.js';
export { applyDocumentPatch } from './documents/patch.js';
export { engineErrors } from './errors.js';
export { type WriteContext } from './documents/write.js';
// The Lua runner a shard runs write scripts with: one per process, made by whoever hosts the shards.
export { SCRIPT_DEFAULTS, ScriptRunner, type ScriptRunnerOptions, type ScriptRunnerStats } from '@tessera/scripting';
export { OPLOG_READ_ENTRIES_MAX } from './store/oplog.js';
export { COMMIT_LOG_DEFAULTS, COMMIT_LOG_DIRECTORY, type CommitLog, type CommitLogOptions, type CommitLogRecovery } from './store/commit-log.js';
export { openCommitLog } from './shard/recovery.js';
// Taken by each server process on its data directory before it serves or writes anything.
export { directoryLocked, LOCK_DIRECTORY, lockDirectory, type DirectoryLock, type LockHolder } from './store/directory-lock.js';
export { AGGREGATION_PARTIAL_ENTRIES_MAX, planAggregations } from './collect/index.js';
