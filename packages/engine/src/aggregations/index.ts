/**
 * Aggregations (API.md §10): `_aggs` parsed and bound to the schema
 * (request.ts, plan.ts), collected from doc values over every matching
 * document of a shard (aggregator.ts and the collectors), answered as a
 * partial (partial.ts) that the coordinator merges across shards.
 */
export { Aggregator } from './aggregator.js';
export { AGGREGATION_PARTIAL_ENTRIES_MAX, EntryBudget } from './collector.js';
export { aggregationErrors } from './errors.js';
export { addExact, addSquareExact } from './exact-sum.js';
export type {
  AggregationPartial, AggregationSpec, AggregationsPartial, AggregationType, BucketOrder, BucketType, FilterPartial,
  KeyedBucketsPartial, MetricPartial, MetricType, RangesPartial,
} from './partial.js';
export { type AggregationPlan, formatFloat, keyFormat, planAggregations } from './plan.js';
export {
  AGGREGATION_BUCKETS_DEFAULT_LIMIT, AGGREGATION_DEPTH_MAX, AGGREGATION_FILTER_VALUES_MAX, AGGREGATION_RANGES_MAX,
  AGGREGATIONS_MAX, DEFAULT_SIGMA, METRIC_OUTPUTS, parseAggregations,
} from './request.js';
