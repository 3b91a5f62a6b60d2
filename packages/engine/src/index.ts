/** @tessera/engine — one shard: document store with versions, and the search index over it. */
export { SCAN_DOCUMENTS_MAX, Shard, SHARD_DEFAULTS } from './shard.js';
export type { MutateOptions, ShardOptions, ShardSearchRequest, ShardSearchResult } from './shard.js';
export type {
  DocumentBody, DocumentId, Mutation, OplogEntry, ShardMetrics, ShardStats, StoredDocument, WriteRequest, WriteResult,
} from './documents/types.js';
export { mergeDocument } from './documents/merge.js';
export { applyDocumentPatch } from './documents/patch.js';
export { engineErrors } from './errors.js';
export { OPLOG_READ_ENTRIES_MAX } from './store/oplog.js';
export { AGGREGATION_DEPTH_MAX, AGGREGATION_PARTIAL_ENTRIES_MAX, aggregationErrors, planAggregations } from './aggregations/index.js';
export type { AggregationPartial, AggregationSpec, AggregationsPartial } from './aggregations/index.js';
