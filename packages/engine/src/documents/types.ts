/** Public shapes of a shard's document store. */

/** A document ID in its index's `_id` type (integer IDs are numbers). */
export type DocumentId = string | number;

/** A plain JSON-like document body (null prototype not required). */
export type DocumentBody = Record<string, unknown>;

/** What the store holds for one live document. Treat as immutable: it may be shared with the cache. */
export interface StoredDocument {
  readonly id: DocumentId;
  /** Shard-local number, assigned in order at creation, stable across updates (#docid). */
  readonly docid: number;
  /** 1 at creation, +1 per change (_version). */
  readonly version: number;
  /** Per-shard sequence number of the change that produced this version. */
  readonly seq: number;
  readonly body: DocumentBody;
}

/** The outcome a write decides, given the current document. */
export type Mutation =
  | { kind: 'put'; body: DocumentBody }
  | { kind: 'delete' };

/** High-level document write, as the coordinator routes it to the primary copy. */
export interface WriteRequest {
  op: 'index' | 'update' | 'patch' | 'delete';
  id: DocumentId;
  /** index: the new body; update: partial body merged recursively; patch: ignored (see `patch`). */
  body?: DocumentBody;
  /** patch: RFC 6902 operations plus `incr`/`decr` (API.md §5.4). */
  patch?: unknown[];
  /** Each given expected version must equal the current one (0 = must not exist). */
  expectedVersions?: number[];
  /** update/patch: create when absent. */
  upsert?: boolean;
  /** Reply only once durable (sync write). */
  commit?: boolean;
  /** The index schema (cluster state) to index the result with. */
  schema?: Record<string, unknown>;
}

export interface WriteResult {
  id: DocumentId;
  docid: number;
  version: number;
  seq: number;
  /** The stored body after the write (absent for deletes). Shared with the document cache: never mutate it. */
  body?: DocumentBody;
  deleted: boolean;
}

export interface ShardStats {
  /** Live documents. */
  documents: number;
  /** Highest #docid ever assigned (0 when none). */
  lastDocid: number;
  /** Last sequence number assigned. */
  seq: number;
  /** Largest numeric document ID ever written (0 when none) — for POST ID generation. */
  maxNumericId: number;
}

/**
 * One operation-log entry: the result of one change, enough for a replica to
 * apply it (it applies a change only if `version` is newer than what it holds)
 * and for crash replay into the search engine's write buffer. `docid` is the
 * primary's #docid, so every copy of a shard can use the same one.
 */
export interface OplogEntry {
  seq: number;
  id: DocumentId;
  docid: number;
  version: number;
  op: 'put' | 'delete';
  /** The stored body after the change (puts only). */
  body?: DocumentBody;
}

/** Counters for `/:metrics` and benchmarks; cheap to read (kept in memory). */
export interface ShardMetrics {
  /** LevelDB batches written successfully, and how many of them were `sync`. */
  batchesWritten: number;
  batchesSynced: number;
  /** Batches that failed (every write in them got `storage_unavailable`). */
  batchesFailed: number;
  /** Document changes acknowledged (puts and deletes). */
  changesWritten: number;
  /** Changes decided and waiting for a batch (in flight excluded). */
  changesQueued: number;
  documentCacheEntries: number;
  documentCacheBytes: number;
  documentCacheHits: number;
  documentCacheMisses: number;
  /** Lowest seq the operation log may still hold (entries below were trimmed). */
  oplogFirstSeq: number;
  oplogTrims: number;
  /** Times the LevelDB database was reopened after a failed batch. */
  recoveries: number;
}
