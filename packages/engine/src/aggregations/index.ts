/**
 * Aggregations (API.md §10) on one shard: parsed `_aggs`
 * (@tessera/search-model) bound to the schema (plan.ts), collected from doc
 * values over every matching document (aggregator.ts and the collectors),
 * answered as the partial the coordinator merges.
 */
export { Aggregator } from './aggregator.js';
export { AGGREGATION_PARTIAL_ENTRIES_MAX, EntryBudget } from './collector.js';
export { type AggregationPlan, formatFloat, keyFormat, planAggregations } from './plan.js';
