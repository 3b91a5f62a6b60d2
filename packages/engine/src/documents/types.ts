/** Public shapes of a shard's document store. */
import type { BlobLocation } from '../content/volumes.js';
import type { FlushFailure, ShardIndexMetrics } from '../indexing/shard-index.js';
import type { LatencyHistogramSnapshot } from '../store/latency-histogram.js';

/** A document ID in its index's `_id` type (integer IDs are numbers). */
export type DocumentId = string | number;

/** A plain JSON-like document body (null prototype not required). */
export type DocumentBody = Record<string, unknown>;

/**
 * A stored content entry (API.md §6): a blob in the shard's content volumes,
 * linked under a media type (`type`, as the client's Content-Type gave it).
 */
export interface ContentLink extends BlobLocation {
  type: string;
}

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
  /** Stored content entries, in order of last storing (the last is the default); absent when none. */
  readonly content?: readonly ContentLink[];
  /**
   * The form indexed, when `_store: false` fields make it differ from `body`
   * (kept for re-indexing by replay and replication; never returned as the document).
   */
  readonly indexed?: DocumentBody;
}

/** The outcome a write decides, given the current document. */
export type Mutation =
  | { kind: 'put'; body: DocumentBody; content?: readonly ContentLink[] | undefined; indexed?: DocumentBody | undefined }
  | { kind: 'delete' };

/** High-level document write, as the coordinator routes it to the primary copy. */
export interface WriteRequest {
  op: 'index' | 'update' | 'patch' | 'delete';
  id: DocumentId;
  /** index: the new body; update: partial body merged recursively; patch: ignored (see `patch`). */
  body?: DocumentBody;
  /** `body` with its `_store: false` fields kept (the coordinator's fold): indexed instead of `body`. */
  indexed?: DocumentBody;
  /** patch: RFC 6902 operations plus `incr`/`decr` (API.md §5.4). */
  patch?: unknown[];
  /** Each given expected version must equal the current one (0 = must not exist). */
  expectedVersions?: number[];
  /** update/patch: create when absent. */
  upsert?: boolean;
  /** Reply only once durable (sync write). */
  commit?: boolean;
  /**
   * Part of a bulk load (RESTORE): the written document is not put in the document cache, where it would push out
   * documents being read, and its text is analysed on the analysis thread while its batch is written.
   */
  bulk?: boolean;
  /** The index schema (cluster state) to index the result with. */
  schema?: Record<string, unknown>;
  /** The shard's primary term the coordinator writes under: refused when older than one this copy has seen. */
  term?: number;
  /** A script to run after the merge and before indexing (API.md §11), resolved by the coordinator. */
  script?: WriteScript;
  /**
   * Stored content (API.md §6), with op `index` (the document becomes `{}`
   * plus this one entry) or `update` (the entry of that type is replaced or
   * added, the body and other entries kept; empty `bytes` unlinks the type).
   */
  content?: ContentWrite;
}

/** A blob to store under a media type; empty bytes on an update unlink that type. */
export interface ContentWrite {
  type: string;
  bytes: Uint8Array;
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
  /** The content entries after the write, when the document has any. */
  content?: readonly ContentLink[];
  /** The form indexed, when it differs from `body` (`_store: false` fields). */
  indexed?: DocumentBody;
  deleted: boolean;
}

/** Terms per live document, every field counted (Xapian's document length): INFO's av_length, doc_len_lower, doc_len_upper. */
export interface DocumentLengths {
  documents: number;
  sum: number;
  /** Smallest and largest (0 without documents). */
  lower: number;
  upper: number;
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
  /** The content entries after the change (puts of documents with content). */
  content?: readonly ContentLink[];
  /** The form indexed, when it differs from `body` (`_store: false` fields). */
  indexed?: DocumentBody;
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
  /** The search index: segments, write buffers, flushes, merges and their failures (indexing/shard-index.ts). */
  index: ShardIndexMetrics;
  /** The flush failing now, or null: the copy cannot turn its write buffers into segments (`/readyz` says so). */
  flushFailure: FlushFailure | null;
}
