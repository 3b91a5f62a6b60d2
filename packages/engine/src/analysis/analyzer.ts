/**
 * Text analysis of one field (API.md §8.4): the tokens of `tokenize.ts`, then
 * stemming and stop words by the field's `_stem_strategy` and
 * `_stop_strategy`, following Xapian's TermGenerator (index side) and
 * QueryParser (query side) so query terms meet indexed terms.
 *
 * Index side, per token (Xapian `TermGenerator::Internal::index_text`):
 *
 * | strategy     | unstemmed term            | stem                                         |
 * |--------------|---------------------------|----------------------------------------------|
 * | `stem_none`  | with position             | —                                            |
 * | `stem_some`  | with position             | `Z` term, no position; only for tokens starting with a letter; `stop_stemmed` skips it for stop words |
 * | `stem_all`   | —                         | plain term (no `Z`), with position           |
 * | `stem_all_z` | —                         | `Z` term, with position                      |
 *
 * `stop_all` drops stop words entirely; `stop_stemmed` only matters under
 * `stem_some`; `stop_none` keeps everything. Without a language there is no
 * stemmer and no stop list: every strategy indexes the unstemmed token with
 * its position (as `stem_none`, `stop_none`). Positions count only the terms
 * that carry one: a dropped stop word or an over-long token does not use a
 * position (Xapian increments `cur_pos` only when it adds a posting). A stem
 * with an empty result is skipped.
 *
 * The analyzer emits terms without any field prefix; the caller adds
 * `<prefix>` or, for `z` terms, `Z<prefix>`.
 */
import { analysisErrors } from './errors.js';
import { resolveLanguage, stemmerFor, stopWordsFor } from './languages.js';
import { StemCache } from './stem-cache.js';
import { startsWithLetter, tokenize } from './tokenize.js';

export type StemStrategy = 'stem_none' | 'stem_some' | 'stem_all' | 'stem_all_z';
export type StopStrategy = 'stop_none' | 'stop_all' | 'stop_stemmed';

export interface AnalyzerOptions {
  /** Snowball name (`english`) or ISO 639-1 code (`en`); none = no stemming, no stop words. */
  readonly language?: string | undefined;
  readonly stemStrategy: StemStrategy;
  readonly stopStrategy: StopStrategy;
}

/** Position of a term indexed without one (`stem_some` stems). */
export const NO_POSITION = -1;

/**
 * Longest token indexed, in UTF-8 bytes: Xapian's term limit (API.md §13,
 * "longer text tokens are skipped"). Longer tokens are skipped silently.
 */
export const TOKEN_BYTES_MAX = 245;
/** A token of at most this many UTF-16 units is at most TOKEN_BYTES_MAX UTF-8 bytes (3 bytes per unit at worst). */
const TOKEN_UNITS_SURELY_SHORT = Math.floor(TOKEN_BYTES_MAX / 3);

/**
 * Receives each term to index, in order. `z`: index under `Z<prefix>` (a
 * stem); `position`: 0-based, or NO_POSITION.
 */
export type TermSink = (term: string, position: number, z: boolean) => void;

export interface AnalyzedTerm {
  readonly term: string;
  readonly position: number;
  readonly z: boolean;
}

/** A term to look up for one token of a query word. */
export interface QueryTerm {
  readonly term: string;
  /** Look it up under `Z<prefix>`. */
  readonly z: boolean;
}

export interface QueryTermOptions {
  /** The word is part of a phrase or near query: `stem_some` uses unstemmed (positional) terms. */
  readonly positional?: boolean;
  /** Keep stop words (`+t`, `-t`, API.md §9.3.1). */
  readonly keepStopWords?: boolean;
}

const STEM_STRATEGIES: ReadonlySet<string> = new Set(['stem_none', 'stem_some', 'stem_all', 'stem_all_z']);
const STOP_STRATEGIES: ReadonlySet<string> = new Set(['stop_none', 'stop_all', 'stop_stemmed']);
const UPPERCASE_START = /^\p{Lu}/u;

export class Analyzer {
  readonly language: string | undefined;
  readonly stemStrategy: StemStrategy;
  readonly stopStrategy: StopStrategy;
  private readonly stems: StemCache | null;
  private readonly stopWords: ReadonlySet<string> | null;

  constructor(options: AnalyzerOptions) {
    if (!STEM_STRATEGIES.has(options.stemStrategy)) throw analysisErrors.invalidStrategy('_stem_strategy', String(options.stemStrategy));
    if (!STOP_STRATEGIES.has(options.stopStrategy)) throw analysisErrors.invalidStrategy('_stop_strategy', String(options.stopStrategy));
    if (options.language === undefined) {
      this.language = undefined;
      this.stems = null;
      this.stopWords = null;
    } else {
      const language = resolveLanguage(options.language);
      if (language === undefined) throw analysisErrors.unknownLanguage(options.language);
      this.language = language;
      this.stems = stemCacheFor(language);
      this.stopWords = options.stopStrategy === 'stop_none' ? null : stopWordsFor(language);
    }
    this.stemStrategy = this.stems === null ? 'stem_none' : options.stemStrategy;
    this.stopStrategy = this.stopWords === null ? 'stop_none' : options.stopStrategy;
  }

  /** Whether `token` (lower-cased) is a stop word this analyzer drops or leaves unstemmed. */
  isStopWord(token: string): boolean {
    return this.stopWords !== null && this.stopWords.has(token);
  }

  /**
   * Emit the terms to index for `text`, positions starting at
   * `firstPosition`. Returns the next free position, so several values of one
   * field can continue (or leave a gap).
   */
  analyze(text: string, emit: TermSink, firstPosition = 0): number {
    let position = firstPosition;
    const stems = this.stems;
    const stopWords = this.stopWords;
    const strategy = this.stemStrategy;
    const stopAll = this.stopStrategy === 'stop_all';
    const stopStemmed = this.stopStrategy === 'stop_stemmed';
    tokenize(text, (token) => {
      if (token.length > TOKEN_UNITS_SURELY_SHORT && Buffer.byteLength(token, 'utf8') > TOKEN_BYTES_MAX) return;
      if (stopAll && stopWords!.has(token)) return;
      if (strategy === 'stem_none') {
        emit(token, position++, false);
        return;
      }
      if (strategy === 'stem_some') {
        emit(token, position++, false);
        if (stopStemmed && stopWords!.has(token)) return;
        if (!startsWithLetter(token)) return;
        const stem = stems!.stem(token);
        if (stem.length > 0) emit(stem, NO_POSITION, true);
        return;
      }
      const stem = stems!.stem(token);
      if (stem.length > 0) emit(stem, position++, strategy === 'stem_all_z');
    });
    return position;
  }

  /** `analyze` into an array (tests, small values). */
  analyzeToArray(text: string, firstPosition = 0): AnalyzedTerm[] {
    const out: AnalyzedTerm[] = [];
    this.analyze(text, (term, position, z) => { out.push({ term, position, z }); }, firstPosition);
    return out;
  }

  /**
   * The terms to look up for a query word, one per token of the word (a word
   * like `t-shirt` gives two; the caller makes a phrase of them). Follows
   * Xapian's QueryParser: under `stem_some` a word is searched by its `Z`
   * stem, except when it starts with a capital letter (in the query as
   * typed), starts with a digit, is positional (phrase, near), or is a stop
   * word kept by `keepStopWords` under `stop_stemmed` (its stem is not
   * indexed). Stop words are dropped unless `keepStopWords`. `stem_all`
   * searches plain stems, `stem_all_z` `Z` stems, `stem_none` the tokens.
   */
  queryTerms(word: string, options: QueryTermOptions = {}): QueryTerm[] {
    const out: QueryTerm[] = [];
    const capitalised = this.stemStrategy === 'stem_some' && UPPERCASE_START.test(word);
    tokenize(word, (token) => {
      if (token.length > TOKEN_UNITS_SURELY_SHORT && Buffer.byteLength(token, 'utf8') > TOKEN_BYTES_MAX) return;
      const stop = this.isStopWord(token);
      if (stop && options.keepStopWords !== true) return;
      switch (this.stemStrategy) {
        case 'stem_none':
          out.push({ term: token, z: false });
          return;
        case 'stem_some': {
          if (capitalised || options.positional === true || (stop && this.stopStrategy === 'stop_stemmed') || !startsWithLetter(token)) {
            out.push({ term: token, z: false });
            return;
          }
          const stem = this.stems!.stem(token);
          out.push(stem.length > 0 ? { term: stem, z: true } : { term: token, z: false });
          return;
        }
        case 'stem_all':
        case 'stem_all_z': {
          const stem = this.stems!.stem(token);
          if (stem.length > 0) out.push({ term: stem, z: this.stemStrategy === 'stem_all_z' });
          return;
        }
      }
    });
    return out;
  }
}

const stemCaches = new Map<string, StemCache>();

function stemCacheFor(language: string): StemCache {
  let cache = stemCaches.get(language);
  if (cache === undefined) {
    cache = new StemCache(stemmerFor(language));
    stemCaches.set(language, cache);
  }
  return cache;
}

/**
 * Analyzers by options, shared. Keys are (resolved language × stem × stop
 * strategy), validated before insertion, so the map is bounded (25 × 4 × 3).
 */
const analyzers = new Map<string, Analyzer>();

/** The shared analyzer for `options` (validates them; 400 on an unknown language). */
export function analyzerFor(options: AnalyzerOptions): Analyzer {
  const language = options.language === undefined ? '' : resolveLanguage(options.language);
  if (language === undefined) throw analysisErrors.unknownLanguage(options.language!);
  const key = `${language}\0${options.stemStrategy}\0${options.stopStrategy}`;
  let analyzer = analyzers.get(key);
  if (analyzer === undefined) {
    analyzer = new Analyzer(options);
    analyzers.set(key, analyzer);
  }
  return analyzer;
}

/** Terms to look up for a query word under the field's options (see `Analyzer.queryTerms`). */
export function analyzeQueryTerm(word: string, options: AnalyzerOptions, flags?: QueryTermOptions): QueryTerm[] {
  return analyzerFor(options).queryTerms(word, flags);
}
