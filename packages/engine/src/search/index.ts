/**
 * Search of one shard (API.md §9): a parsed Query (@tessera/search-model),
 * sort keys and k over the readers of a snapshot (segments and the write
 * buffer) → exact total and the best k docids with weights and sort values.
 * Here the Query is bound to the shard (Tantivy's `Weight`: compile.ts,
 * weight.ts, casts, fuzzy, geo, synonyms, elite sets, sort plans); the
 * weights make scorers (scorers/) whose matches collectors keep (collect/).
 */
export { liveDocumentFields, liveDocumentId, search, sortPlan, type SearchHit, type SearchRequest, type SearchResult } from './search.js';
export type { SearchReader, SearchPostings, SegmentSearchReader, BufferSearchReader, TermsCursor } from './reader.js';
export { QueryCompiler, idTerm, ID_SLOT, PREFIX_EXPANSIONS_MAX, WILDCARD_EXPANSIONS_MAX } from './compile.js';
export { Statistics, type Weight } from './weight.js';
export { distanceSortPlan, StringValueDistance } from './distance-sort.js';
export { ELITE_SET_SIZE } from './elite-set.js';
export { expandFuzzy, FUZZY_EXPANSIONS_MAX, type FuzzyExpansion } from './fuzzy.js';
export { stringDistance, type StringMetricName } from './string-metrics.js';
