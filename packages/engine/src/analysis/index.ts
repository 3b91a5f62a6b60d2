/** Text analysis (API.md §8.4): tokenizer, stemming, stop words. */
export { tokenize, tokens, startsWithLetter } from './tokenize.js';
export type { TokenSink } from './tokenize.js';
export { Analyzer, analyzerFor, analyzeQueryTerm, NO_POSITION, TOKEN_BYTES_MAX } from './analyzer.js';
export type { AnalyzedTerm, AnalyzerOptions, QueryTerm, QueryTermOptions, StemStrategy, StopStrategy, TermSink } from './analyzer.js';
export { resolveLanguage, snowballLanguages, stemmerFor, stopWordsFor } from './languages.js';
export { StemCache, STEM_CACHE_ENTRIES_MAX } from './stem-cache.js';
export { analysisErrors } from './errors.js';
