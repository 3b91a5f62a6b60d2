/** Indexing: stored documents → terms (document-terms.ts), and the shard's write buffer, segments, flush and merge (shard-index.ts). */
export {
  documentTerms, type DocumentTermsOptions, GLOBAL_VALUE_SLOTS, globalValueSlot, ID_SLOT, idTerm, POSITION_GAP, VERSION_SLOT,
} from './document-terms.js';
export { type DocumentInfo, documentInfo, type TermInfo } from './document-info.js';
export {
  FLUSH_RETRY_MS_MAX, type FlushFailure, type IndexChange, type PreparedChange, SHARD_INDEX_DEFAULTS, ShardIndex, type ShardIndexMetrics,
  type ShardIndexOptions,
} from './shard-index.js';
