/**
 * Types of the talisman modules the engine uses (talisman is CommonJS and
 * ships no declarations). Each module's `module.exports` is what a default
 * import receives.
 */
declare module 'talisman/metrics/levenshtein.js' {
  /** Edit distance (insertions, deletions, substitutions) over UTF-16 units. */
  const levenshtein: (a: string, b: string) => number;
  export default levenshtein;
}

declare module 'talisman/metrics/jaro.js' {
  /** Jaro similarity in [0, 1]. */
  const jaro: (a: string, b: string) => number;
  export default jaro;
}

declare module 'talisman/metrics/jaro-winkler.js' {
  /** Jaro-Winkler similarity in [0, 1] (prefix scale 0.1, boost threshold 0.7). */
  const jaroWinkler: (a: string, b: string) => number;
  export default jaroWinkler;
}

declare module 'talisman/metrics/dice.js' {
  /** Sørensen-Dice similarity over character bigrams, in [0, 1]. */
  const dice: (a: string, b: string) => number;
  export default dice;
}

declare module 'talisman/metrics/jaccard.js' {
  /** Jaccard similarity over the sets of characters, in [0, 1]. */
  const jaccard: (a: string, b: string) => number;
  export default jaccard;
}

declare module 'talisman/metrics/lcs.js' {
  /** Longest common substring (contiguous) over the longer length, in [0, 1]. */
  const lcs: { similarity(a: string, b: string): number; distance(a: string, b: string): number };
  export default lcs;
}

declare module 'talisman/metrics/damerau-levenshtein.js' {
  /** Optimal-string-alignment distance (a transposition counts 1), over UTF-16 units. */
  const damerauLevenshtein: (a: string, b: string) => number;
  export default damerauLevenshtein;
}

declare module 'talisman/phonetics/soundex.js' {
  /** The 4-character Soundex code of a name (`0000` when it has no letter). */
  const soundex: (name: string) => string;
  export default soundex;
}
