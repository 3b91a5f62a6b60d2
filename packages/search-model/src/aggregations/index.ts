/**
 * Aggregations (API.md §10) as both sides see them: `_aggs` parsed and
 * validated into a request tree (request.ts), the per-shard partial each
 * shard answers (partial.ts, exact sums in exact-sum.ts), and their merge
 * and rendering at the coordinator (merge.ts).
 */
export { aggregationErrors } from './errors.js';
export { addExact, addProduct, addSquareExact, roundExact } from './exact-sum.js';
export { compareKeys, renderAggregations } from './merge.js';
export type {
  AggregationPartial, AggregationSpec, AggregationsPartial, AggregationType, BucketOrder, BucketType, FilterPartial,
  KeyedBucketsPartial, MetricPartial, MetricType, RangesPartial,
} from './partial.js';
export {
  AGGREGATION_BUCKETS_DEFAULT_LIMIT, AGGREGATION_DEPTH_MAX, AGGREGATION_FILTER_VALUES_MAX, AGGREGATION_RANGES_MAX,
  AGGREGATIONS_MAX, type AggregationRequest, DEFAULT_SIGMA, isMetricType, METRIC_OUTPUTS, parseAggregations, type RangeRequest,
} from './request.js';
