/**
 * Public shapes of a shard's document store. The shapes the coordinator
 * shares (IDs, bodies, content links, writes and their results, figures)
 * are @tessera/documents', re-exported here under the same names.
 */
import type { ContentLink, DocumentBody, DocumentId } from '@tessera/documents';
import type { FlushFailure, ShardIndexMetrics } from '../indexing/shard-index.js';
import type { LatencyHistogramSnapshot } from '../store/latency-histogram.js';

export type {
  ContentLink, ContentWrite, DocumentBody, DocumentId, DocumentLengths, ShardStats, WriteRequest, WriteResult, WriteScript,
} from '@tessera/documents';

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
   * `body` as compact JSON, when JSON.parse of it gives `body` back exactly:
   * set on the form the document cache keeps (documents/document-cache.ts
   * `cachedForm`), whose `body` is parsed from it on each use.
   */
  readonly bodyJson?: string;
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
