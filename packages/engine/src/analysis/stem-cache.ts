/**
 * A bounded memo in front of a Snowball stemmer. Snowball in JavaScript stems
 * about 80k words/s here, two orders of magnitude below the tokenizer, while
 * natural text repeats a modest vocabulary (90k distinct tokens in the whole
 * Debian corpus); the memo keeps the stemmer off the hot path.
 *
 * It is keyed by tokens from documents and queries, so it is bounded: two
 * generations of at most `generationEntriesMax` entries each. Lookups try the
 * young map, then the old one (promoting a hit); when the young map is full
 * it becomes the old one and the previous old map is dropped. That keeps the
 * frequent vocabulary without LRU bookkeeping per lookup; a single map
 * cleared when full thrashed on the Debian corpus (1.8 s instead of 0.3 s
 * per 4.2M tokens, measured with `tokenize.bench.ts`'s corpus). Tokens longer
 * than STEM_CACHE_TOKEN_UNITS_MAX are stemmed without the memo, which bounds
 * its memory.
 */
import type { Stemmer } from 'snowball-stemmers';

/** Entries per generation (the memo holds at most twice this). */
export const STEM_CACHE_ENTRIES_MAX = 65_536;
/** Longest token (UTF-16 units) memoised. */
export const STEM_CACHE_TOKEN_UNITS_MAX = 40;

export class StemCache {
  private young = new Map<string, string>();
  private old = new Map<string, string>();

  constructor(private readonly stemmer: Stemmer, private readonly generationEntriesMax = STEM_CACHE_ENTRIES_MAX) {}

  stem(token: string): string {
    let stem = this.young.get(token);
    if (stem !== undefined) return stem;
    if (token.length > STEM_CACHE_TOKEN_UNITS_MAX) return this.stemmer.stem(token);
    stem = this.old.get(token) ?? this.stemmer.stem(token);
    if (this.young.size >= this.generationEntriesMax) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(token, stem);
    return stem;
  }

  /** Entries held (both generations; a token may sit in both). */
  get size(): number {
    return this.young.size + this.old.size;
  }
}
