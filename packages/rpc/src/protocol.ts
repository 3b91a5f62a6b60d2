/**
 * The calls a coordinator makes to a shard node, and their shapes. Plain data
 * only (msgpack-able), so the same calls cross the in-process and the
 * WebSocket transport. A shard copy is named by its index path and 1-based
 * shard number.
 */
import type { AggregationRequest, AggregationsPartial, Query, SortKey } from '@tessera/search-model';

export type DocumentId = string | number;
export type DocumentBody = Record<string, unknown>;

export interface ShardRef {
  /** Index path, with leading and trailing slash: `/blog/`. */
  index: string;
  /** 1-based shard number. */
  shard: number;
}

/** A stored content entry (API.md §6): the media type it was stored under and where its blob is. */
export interface ContentEntry {
  type: string;
  volume: number;
  offset: number;
  size: number;
  crc: number;
}

export interface DocumentReply {
  id: DocumentId;
  docid: number;
  version: number;
  body: DocumentBody;
  /** Stored content entries in order of last storing (the last is the default), when the document has any. */
  content?: ContentEntry[];
  /** `body` as compact JSON (the stored source, encoded once per cached version), when the node has it. */
  bodyJson?: string;
}

export interface WriteCall extends ShardRef {
  op: 'index' | 'update' | 'patch' | 'delete';
  id: DocumentId;
  body?: DocumentBody;
  /** `body` with its `_store: false` fields kept: what the shard indexes, when it differs from what it stores. */
  indexed?: DocumentBody;
  patch?: unknown[];
  expectedVersions?: number[];
  upsert?: boolean;
  commit?: boolean;
  /** The index schema (cluster state) the shard indexes the result with. */
  schema?: Record<string, unknown>;
  /** The shard's primary term (cluster state): a copy that has seen a newer one refuses the write (503 stale_primary_term). */
  term?: number;
  /** The script the primary runs after the merge, before indexing (API.md §11), resolved by the coordinator. */
  script?: WriteScript;
  /** Stored content (API.md §6) with op index or update; empty bytes on an update unlink the type. */
  content?: { type: string; bytes: Uint8Array };
}

/** A resolved script: its source, parameters and name, and the request's method (`_method`). */
export interface WriteScript {
  body: string;
  params?: Record<string, unknown>;
  name?: string;
  method: string;
}

export interface WriteReply {
  id: DocumentId;
  docid: number;
  version: number;
  seq: number;
  body?: DocumentBody;
  /** The form indexed, when `_store: false` fields make it differ from `body`. */
  indexed?: DocumentBody;
  /** The document's content entries after the write, when it has any. */
  content?: ContentEntry[];
  deleted: boolean;
}

/** Many writes to one shard in one call (RESTORE): one LevelDB batch when they fit. */
export interface WriteManyCall extends ShardRef {
  writes: Array<Omit<WriteCall, 'index' | 'shard' | 'commit' | 'schema' | 'term'>>;
  commit?: boolean;
  schema?: Record<string, unknown>;
  term?: number;
}

/**
 * A change as a replica receives it (engine `ReplicatedChange`): the result
 * of a write on the primary, or one document of a full copy. `originTerm` and
 * `originSeq` place the version in the shard's history; a replica keeps the
 * newest. `seq` is the primary's seq, counted towards the replica's
 * checkpoint (absent for a full copy's documents).
 */
export interface ReplicatedChangeMessage {
  seq?: number;
  id: DocumentId;
  version: number;
  deleted: boolean;
  body?: DocumentBody;
  /** The form indexed, when `_store: false` fields make it differ from `body`. */
  indexed?: DocumentBody;
  originTerm: number;
  originSeq: number;
  /** The put's content entries; `bytes` is the blob, absent when the replica is expected to hold it already. */
  content?: ReplicatedContentMessage[];
}

export interface ReplicatedContentMessage {
  type: string;
  size: number;
  crc: number;
  bytes?: Uint8Array;
}

/** `doc.info`: a document's INFO (API.md §5.8): its place and content entries, and the terms and values it is indexed with. */
export interface DocumentInfoReply {
  id: DocumentId;
  docid: number;
  version: number;
  content?: ContentEntry[];
  /** Term names split on `.` into nested keys, leaves `{wdf, pos?}`. */
  terms: Record<string, unknown>;
  /** Value slot (decimal) → value. */
  values: Record<string, unknown>;
}

/**
 * `doc.content`: bytes [from, from + length) of a stored blob, named by its
 * entry (blobs are never rewritten, so the entry read with the document stays
 * valid after the document changes). `verify` checks the whole blob's
 * checksum first: set on a streamed answer's first read.
 */
export interface ContentReadCall extends ShardRef, ContentEntry {
  from: number;
  length: number;
  verify?: boolean;
}

/** `doc.replicate`: changes for a replica copy, under the shard's primary term. */
export interface ReplicateCall extends ShardRef {
  term: number;
  changes: ReplicatedChangeMessage[];
  /** Durable (sync) before the reply, as `?commit` asks of every in-sync copy. */
  commit?: boolean;
  schema?: Record<string, unknown>;
}

/**
 * A copy's replication position: the highest primary term it has seen, and
 * its checkpoint (every change the primary of `checkpointTerm` numbered up
 * to `checkpoint` is applied), its own last seq, and how far back its
 * operation log reaches.
 */
export interface ReplicationPositionReply {
  term: number;
  checkpointTerm: number;
  checkpoint: number;
  seq: number;
  oplogFirstSeq: number;
}

export interface ReplicateReply {
  applied: number;
  discarded: number;
  position: ReplicationPositionReply;
}

/** `shard.changes`: a primary's operation-log entries after `afterSeq` (410 `oplog_trimmed` when gone: a full copy is needed). */
export interface ChangesCall extends ShardRef {
  afterSeq: number;
  limit: number;
}

export interface ChangesReply {
  changes: ReplicatedChangeMessage[];
  /** The copy's last seq when the page was read. */
  seq: number;
}

/** `shard.follow`: the coordinator tells a copy it holds every change of `term` up to `checkpoint` (promotion, end of a full copy). */
export interface FollowCall extends ShardRef {
  term: number;
  checkpoint: number;
}

/** One answer per write of a WriteManyCall, in order: the reply, or the error it failed with. */
export type WriteManyReply = Array<WriteReply | { error: { code: string; status: number; message: string } }>;

/**
 * A search on one shard copy: the query, sort and `_aggs` as the
 * coordinator parsed and validated them once (@tessera/search-model), which
 * the shard binds to its schema and statistics. It returns its best `k` hits
 * (k = offset + limit) with their documents, the sort values the coordinator
 * merges on, and the exact number of matches.
 */
export interface SearchCall extends ShardRef {
  /** Absent: every document. */
  query?: Query;
  /** Absent: by relevance. */
  sort?: SortKey[];
  k: number;
  countOnly?: boolean;
  /** The index schema (cluster state), to resolve fields. */
  schema: Record<string, unknown>;
  /** Parsed `_aggs` (API.md §10), bound to the schema on the shard. */
  aggs?: AggregationRequest[];
}

export interface SearchHitReply {
  id: DocumentId;
  docid: number;
  version: number;
  body: DocumentBody;
  /** `body` as compact JSON (as DocumentReply.bodyJson), when the node has it. */
  bodyJson?: string;
  score: number;
  sortValues?: Array<number | string | null>;
}

export interface SearchReply {
  total: number;
  hits: SearchHitReply[];
  /** Direction of each sort key, in order (empty: by relevance). */
  sortOrders: Array<'asc' | 'desc'>;
  /** The shard's partial aggregations, when `aggs` was asked (merged by search-model's `renderAggregations`). */
  aggregations?: AggregationsPartial;
}

/**
 * One page of a shard's documents in ID order (DUMP): those after `after`
 * (exclusive; from the first when absent), at most `limit`; `done` when
 * nothing follows. The caller pages with the last ID it got.
 */
export interface ScanCall extends ShardRef {
  after?: DocumentId;
  limit: number;
  /** Also give each document's origin and its content with the blobs (a full copy for a replica). */
  origins?: boolean;
  /** Also give each document's content with the blobs (DUMP). */
  content?: boolean;
}

export interface ScanReply {
  documents: Array<{
    id: DocumentId; version: number; body: DocumentBody; indexed?: DocumentBody; originTerm?: number; originSeq?: number; content?: ReplicatedContentMessage[];
  }>;
  done: boolean;
}

export interface ShardStatsReply {
  documents: number;
  lastDocid: number;
  seq: number;
  maxNumericId: number;
  /** The copy's replication position (nodes that replicate always give it). */
  replication?: ReplicationPositionReply;
  /** Terms per live document, when asked for (`lengths: true`: a walk of the norms). */
  lengths?: { documents: number; sum: number; lower: number; upper: number };
}

/** Method name → [params, result]. */
export interface ShardCalls {
  'shard.open': [ShardRef, ShardStatsReply];
  'shard.drop': [ShardRef, null];
  'shard.stats': [ShardRef & { lengths?: boolean }, ShardStatsReply];
  'shard.commit': [ShardRef, null];
  'doc.get': [ShardRef & { id: DocumentId }, DocumentReply | null];
  'doc.write': [WriteCall, WriteReply];
  'doc.writeMany': [WriteManyCall, WriteManyReply];
  'doc.replicate': [ReplicateCall, ReplicateReply];
  'shard.changes': [ChangesCall, ChangesReply];
  'shard.follow': [FollowCall, ReplicationPositionReply];
  'shard.search': [SearchCall, SearchReply];
  'shard.scan': [ScanCall, ScanReply];
  'doc.content': [ContentReadCall, Uint8Array];
  'doc.info': [ShardRef & { id: DocumentId; schema?: Record<string, unknown> }, DocumentInfoReply | null];
  'node.info': [Record<string, never>, NodeInfoReply];
  'node.stats': [Record<string, never>, NodeStatsReply];
}

export interface NodeInfoReply {
  name: string;
  shards: Array<ShardRef & { seq: number; documents: number }>;
}

/**
 * A latency histogram as plain numbers: `counts[i]` observations at most
 * `bounds[i]` seconds (and above the previous bound), the last entry above
 * every bound; `count` and `sum` since the shard copy was opened.
 */
export interface LatencyHistogramReply {
  bounds: readonly number[];
  counts: number[];
  count: number;
  sum: number;
}

/** What `/:metrics` gathers from a node at scrape time: figures of each open shard copy. */
export interface NodeStatsReply {
  name: string;
  /** The node's Lua script runner (absent until it has started): compiled-chunk cache and runs. */
  scripts?: { cacheHits: number; cacheMisses: number; compiles: number; runs: number; failures: number };
  shards: Array<ShardRef & {
    documents: number;
    seq: number;
    /** Bytes of the copy's directory on disk (measured at most every few seconds). */
    bytes: number;
    /** LevelDB batch writes, buffered and synced (`commit`). */
    commitSeconds: { buffered: LatencyHistogramReply; synced: LatencyHistogramReply };
  }>;
}

export type ShardCallName = keyof ShardCalls;
