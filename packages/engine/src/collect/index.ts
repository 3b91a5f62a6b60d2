/**
 * Collectors (Tantivy's `Collector`): what a search keeps of the documents
 * its scorer matches. top-k.ts keeps the best k by weight (and counts);
 * sort-collector.ts the best k by sort values; the aggregation collectors
 * keep per-shard partials of `_aggs` (API.md §10): parsed requests
 * (@tessera/search-model) bound to the schema (aggregation-plan.ts),
 * collected from doc values over every match (aggregator.ts with
 * metric-, filter-, range-collector.ts and the keyed buckets) into the
 * partials the coordinator merges exactly (search-model's merge.ts).
 */
export { countMatches, TopKCollector, type Hit } from './top-k.js';
export { SortCollector, type ReaderDistance, type SortPlan, type SortValue, type ValueDistance } from './sort-collector.js';
export { Aggregator } from './aggregator.js';
export { AGGREGATION_PARTIAL_ENTRIES_MAX, EntryBudget } from './aggregation-collector.js';
export { type AggregationPlan, formatFloat, keyFormat, planAggregations } from './aggregation-plan.js';
