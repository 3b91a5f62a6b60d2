/** Matching: document-at-a-time iterators, boolean combinations, BM25, top-k. */
export { NO_MORE_DOCS, ArrayScorer, EmptyScorer, type DocIterator, type Scorer } from './doc-iterator.js';
export { AndMaybeScorer, ConjunctionScorer, ConstantWeightScorer, DisjunctionScorer, ExclusionScorer } from './boolean.js';
export { BM25_DEFAULTS, Bm25Weight, type Bm25Params, type TermStatistics } from './bm25.js';
export { countMatches, TopKCollector, type Hit } from './top-k.js';
