/**
 * Scorers (Tantivy's `Scorer`): document-at-a-time iterators over one reader
 * with `docid`, `next()`, `advance(target)` and a score, ending at
 * NO_MORE_DOCS. Leaves walk postings (term-scorer.ts), positions
 * (positional-scorer.ts), bitsets and ordinals (ordinal-scorers.ts) or
 * precomputed weights (scored-docs-scorer.ts); boolean.ts combines them;
 * bm25.ts is the weight formula they score with. A Weight (search/) makes
 * them; a Collector (collect/) consumes them.
 */
export { NO_MORE_DOCS, ArrayScorer, EmptyScorer, type DocIterator, type Scorer } from './doc-iterator.js';
export { AndMaybeScorer, ConjunctionScorer, ConstantWeightScorer, DisjunctionScorer, ExclusionScorer } from './boolean.js';
export { BM25_DEFAULTS, Bm25Weight, type Bm25Params, type TermStatistics } from './bm25.js';
export { TermScorer } from './term-scorer.js';
export { PositionalScorer, PROXIMITY_WINDOW, type PositionalMode } from './positional-scorer.js';
export { allDocsScorer, bitsetScorer, OrderedBitsetScorer } from './ordinal-scorers.js';
export { ScoredDocsScorer } from './scored-docs-scorer.js';
