/** Public shapes of a shard's document store. */
import type { LatencyHistogramSnapshot } from '../store/latency-histogram.js';

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
  /**
   * Primary term the version was written in (absent: 1). With `originSeq`,
   * the version's place in the shard's history, which orders the versions of
   * one document on every copy (replication/origin.ts).
   */
  readonly term?: number;
  /** The primary's seq of the change that wrote this version, when this copy received it by replication (absent: `seq`). */
  readonly originSeq?: number;
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
  /** The shard's primary term the coordinator writes under: refused when older than one this copy has seen. */
  term?: number;
  /** A script to run after the merge and before indexing (API.md §11), resolved by the coordinator. */
  script?: WriteScript;
}

/** A write's script: its source and parameters, as the coordinator resolved them (named, foreign, index default). */
export interface WriteScript {
  body: string;
  params?: Record<string, unknown>;
  /** Its name, when it has one (error messages). */
  name?: string;
  /** `_method`: the HTTP method of the request (PUT, POST, UPDATE, UPSERT, PATCH, DELETE). */
  method: string;
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
  /** Primary term of the change (absent: 1). */
  term?: number;
  /** The primary's seq of the change, when this copy applied it by replication (absent: `seq`). */
  originSeq?: number;
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
  /** Time of each successful LevelDB batch write, seconds: buffered, and synced (`commit`). */
  commitSeconds: { buffered: LatencyHistogramSnapshot; synced: LatencyHistogramSnapshot };
}
