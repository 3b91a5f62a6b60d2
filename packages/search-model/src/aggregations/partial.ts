/**
 * What one shard answers for `_aggs` (API.md §10): the normalised request
 * (`AggregationSpec`, the same from every shard) and per aggregation a
 * partial result that the coordinator merges with the other shards' into
 * exactly the answer a single shard holding every document would give.
 *
 * Plain objects, arrays, strings, numbers and null only, so a partial
 * crosses the RPC as msgpack unchanged (@tessera/rpc's SearchReply carries
 * these types; merge.ts merges them). Exactness across shards:
 * - counts add up;
 * - sums travel as the non-overlapping partials of an exact sum
 *   (exact-sum.ts), so the merged sum, the average and the variance are the
 *   correctly rounded results whatever the split of documents;
 * - `_median` and `_mode` need every value: each shard sends its distinct
 *   values ascending with their counts;
 * - bucket aggregations send every bucket with its key already formatted
 *   (the shard knows the field type), so merging is by key string.
 */

export type MetricType =
  | '_count' | '_sum' | '_avg' | '_min' | '_max' | '_median' | '_mode' | '_variance' | '_std_deviation'
  | '_stats' | '_extended_stats';

export type BucketType = '_values' | '_terms' | '_histogram' | '_range' | '_filter';

export type AggregationType = MetricType | BucketType;

/**
 * How a multi-bucket aggregation orders its buckets: by document count, by
 * key (byte order), as listed (`_range` default), or by a value of
 * sub-aggregation `aggs[sub]` (`metric`: one of its outputs, or `_doc_count`
 * of a `_filter`). Ties are broken by key in the same direction.
 */
export interface BucketOrder {
  by: '_doc_count' | '_key' | 'listed' | 'sub';
  desc: boolean;
  sub?: number;
  metric?: string;
}

/** The normalised request of one aggregation. */
export interface AggregationSpec {
  name: string;
  /** Canonical type (`_std` arrives as `_std_deviation`, `_value` as `_values`…). */
  type: AggregationType;
  /** `_std_deviation`, `_extended_stats`: bounds are avg ± sigma × std. */
  sigma?: number;
  /** Multi-bucket types only. */
  order?: BucketOrder;
  limit?: number;
  minDocCount?: number;
  keyed?: boolean;
  /** Bucket types: sub-aggregations, in request order. */
  aggs?: AggregationSpec[];
}

/** A metric's partial: what its type needs of count, min, max, exact sums and distinct values. */
export interface MetricPartial {
  kind: 'metric';
  /** Values seen (a document with three values counts three). */
  count: number;
  min: number | null;
  max: number | null;
  /** Partials of the exact sum of the values (their sum is the sum; empty = 0). */
  sum?: number[];
  /** Partials of the exact sum of the squares of the values. */
  squares?: number[];
  /** `_median`, `_mode`: distinct values ascending, and how often each occurred. */
  values?: number[];
  valueCounts?: number[];
}

/** `_values`, `_terms`, `_histogram`: every bucket the shard found, any order. */
export interface KeyedBucketsPartial {
  kind: 'buckets';
  keys: string[];
  counts: number[];
  /** Per bucket, one partial per sub-aggregation (empty arrays when there are none). */
  subs: AggregationPartial[][];
}

/** `_range`: one bucket per listed range, in the listed order, empty ones included. */
export interface RangesPartial {
  kind: 'ranges';
  keys: string[];
  counts: number[];
  subs: AggregationPartial[][];
}

/** `_filter`: the single bucket. */
export interface FilterPartial {
  kind: 'filter';
  count: number;
  subs: AggregationPartial[];
}

export type AggregationPartial = MetricPartial | KeyedBucketsPartial | RangesPartial | FilterPartial;

/** A shard's answer to `_aggs`: `partials[i]` answers `spec[i]`. */
export interface AggregationsPartial {
  spec: AggregationSpec[];
  partials: AggregationPartial[];
}
