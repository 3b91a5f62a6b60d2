/**
 * The calls a coordinator makes to a shard node, and their shapes. Plain data
 * only (msgpack-able), so the same calls cross the in-process and the
 * WebSocket transport. A shard copy is named by its index path and 1-based
 * shard number.
 */
export type DocumentId = string | number;
export type DocumentBody = Record<string, unknown>;

export interface ShardRef {
  /** Index path, with leading and trailing slash: `/blog/`. */
  index: string;
  /** 1-based shard number. */
  shard: number;
}

export interface DocumentReply {
  id: DocumentId;
  docid: number;
  version: number;
  body: DocumentBody;
  /** `body` as compact JSON (the stored source, encoded once per cached version), when the node has it. */
  bodyJson?: string;
}

export interface WriteCall extends ShardRef {
  op: 'index' | 'update' | 'patch' | 'delete';
  id: DocumentId;
  body?: DocumentBody;
  patch?: unknown[];
  expectedVersions?: number[];
  upsert?: boolean;
  commit?: boolean;
  /** The index schema (cluster state) the shard indexes the result with. */
  schema?: Record<string, unknown>;
}

export interface WriteReply {
  id: DocumentId;
  docid: number;
  version: number;
  seq: number;
  body?: DocumentBody;
  deleted: boolean;
}

/** Many writes to one shard in one call (RESTORE): one LevelDB batch when they fit. */
export interface WriteManyCall extends ShardRef {
  writes: Array<Omit<WriteCall, 'index' | 'shard' | 'commit' | 'schema'>>;
  commit?: boolean;
  schema?: Record<string, unknown>;
}

/** One answer per write of a WriteManyCall, in order: the reply, or the error it failed with. */
export type WriteManyReply = Array<WriteReply | { error: { code: string; status: number; message: string } }>;

/**
 * A search on one shard copy: the raw `_query` (or query strings) and `_sort`
 * are parsed on the shard, which returns its best `k` hits (k = offset +
 * limit) with their documents, the sort values the coordinator merges on,
 * and the exact number of matches.
 */
export interface SearchCall extends ShardRef {
  query?: unknown;
  queryStrings?: string[];
  sort?: unknown;
  sortStrings?: string[];
  k: number;
  countOnly?: boolean;
  /** The index schema (cluster state), to resolve fields. */
  schema: Record<string, unknown>;
  /** The raw `_aggs` (API.md §10), parsed and validated on the shard. */
  aggs?: unknown;
}

export interface SearchHitReply {
  id: DocumentId;
  docid: number;
  version: number;
  body: DocumentBody;
  score: number;
  sortValues?: Array<number | string | null>;
}

export interface SearchReply {
  total: number;
  hits: SearchHitReply[];
  /** Direction of each sort key, in order (empty: by relevance). */
  sortOrders: Array<'asc' | 'desc'>;
  /** The shard's partial aggregations, when `aggs` was asked. */
  aggregations?: AggregationsReply;
}

/**
 * A shard's aggregations (mirror of the engine's aggregations/partial.ts,
 * which documents how shards' partials merge exactly): the normalised
 * request once, and one partial per aggregation.
 */
export interface AggregationsReply {
  spec: AggregationSpecReply[];
  partials: AggregationPartialReply[];
}

export interface AggregationSpecReply {
  name: string;
  type: string;
  sigma?: number;
  order?: { by: '_doc_count' | '_key' | 'listed' | 'sub'; desc: boolean; sub?: number; metric?: string };
  limit?: number;
  minDocCount?: number;
  keyed?: boolean;
  aggs?: AggregationSpecReply[];
}

export type AggregationPartialReply =
  | {
    kind: 'metric'; count: number; min: number | null; max: number | null;
    sum?: number[]; squares?: number[]; values?: number[]; valueCounts?: number[];
  }
  | { kind: 'buckets' | 'ranges'; keys: string[]; counts: number[]; subs: AggregationPartialReply[][] }
  | { kind: 'filter'; count: number; subs: AggregationPartialReply[] };

/**
 * One page of a shard's documents in ID order (DUMP): those after `after`
 * (exclusive; from the first when absent), at most `limit`; `done` when
 * nothing follows. The caller pages with the last ID it got.
 */
export interface ScanCall extends ShardRef {
  after?: DocumentId;
  limit: number;
}

export interface ScanReply {
  documents: Array<{ id: DocumentId; version: number; body: DocumentBody }>;
  done: boolean;
}

export interface ShardStatsReply {
  documents: number;
  lastDocid: number;
  seq: number;
  maxNumericId: number;
}

/** Method name → [params, result]. */
export interface ShardCalls {
  'shard.open': [ShardRef, ShardStatsReply];
  'shard.drop': [ShardRef, null];
  'shard.stats': [ShardRef, ShardStatsReply];
  'shard.commit': [ShardRef, null];
  'doc.get': [ShardRef & { id: DocumentId }, DocumentReply | null];
  'doc.write': [WriteCall, WriteReply];
  'doc.writeMany': [WriteManyCall, WriteManyReply];
  'shard.search': [SearchCall, SearchReply];
  'shard.scan': [ScanCall, ScanReply];
  'node.info': [Record<string, never>, NodeInfoReply];
}

export interface NodeInfoReply {
  name: string;
  shards: Array<ShardRef & { seq: number; documents: number }>;
}

export type ShardCallName = keyof ShardCalls;
