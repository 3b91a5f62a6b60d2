/**
 * String distances of API.md §9.5 (`{"f": {"_value": "ref", "_metric": m}}`),
 * each in [0, 1] and defined as Xapiand defines them: both strings lower-cased
 * (Xapiand's metrics are case-insensitive by default), distance = 1 −
 * similarity, and the edit distance normalised by the longer length.
 *
 * From talisman: Levenshtein, Jaro, Jaro-Winkler, Sørensen-Dice (character
 * bigrams), Jaccard (character sets), longest common substring
 * (`metrics/lcs`, which despite its description finds the contiguous
 * substring), Soundex codes. Written here, as talisman lacks it: the longest
 * common subsequence. Soundex compares the two Soundex codes by longest common
 * subsequence, as Xapiand's SoundexMetric<SoundexEnglish, LCSubsequence>.
 */
import dice from 'talisman/metrics/dice.js';
import jaccard from 'talisman/metrics/jaccard.js';
import jaro from 'talisman/metrics/jaro.js';
import jaroWinkler from 'talisman/metrics/jaro-winkler.js';
import lcs from 'talisman/metrics/lcs.js';
import levenshtein from 'talisman/metrics/levenshtein.js';
import soundex from 'talisman/phonetics/soundex.js';

/** Canonical metric names (@tessera/search-model query/sort.ts maps the aliases onto these). */
export type StringMetricName = 'levenshtein' | 'jarowinkler' | 'sorensendice' | 'jaccard' | 'lcsubstr' | 'lcsubsequence' | 'soundex' | 'jaro';

export const DEFAULT_STRING_METRIC: StringMetricName = 'jaro';

const METRIC_NAMES: ReadonlySet<string> = new Set<StringMetricName>([
  'levenshtein', 'jarowinkler', 'sorensendice', 'jaccard', 'lcsubstr', 'lcsubsequence', 'soundex', 'jaro',
]);

export function isStringMetric(name: string): name is StringMetricName {
  return METRIC_NAMES.has(name);
}

/** Reused rows of the subsequence DP (values are short: sort keys of one field). */
let rowA = new Int32Array(64);
let rowB = new Int32Array(64);

/** Length of the longest common subsequence of `a` and `b` (UTF-16 units, as talisman's metrics). */
export function longestCommonSubsequence(a: string, b: string): number {
  const n = b.length;
  if (rowA.length <= n) {
    rowA = new Int32Array(n * 2 + 1);
    rowB = new Int32Array(n * 2 + 1);
  }
  let prev = rowA;
  let cur = rowB;
  prev.fill(0, 0, n + 1);
  cur[0] = 0;
  for (let i = 1; i <= a.length; i++) {
    const c = a.charCodeAt(i - 1);
    for (let j = 1; j <= n; j++) {
      if (c === b.charCodeAt(j - 1)) cur[j] = prev[j - 1]! + 1;
      else cur[j] = cur[j - 1]! > prev[j]! ? cur[j - 1]! : prev[j]!;
    }
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[n]!;
}

/** Common subsequence over the longer length (two empty strings are identical). */
function subsequenceSimilarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : longestCommonSubsequence(a, b) / longer;
}

/** Distance in [0, 1] of two lower-cased strings. */
function distance(metric: StringMetricName, a: string, b: string): number {
  switch (metric) {
    case 'levenshtein': {
      const longer = Math.max(a.length, b.length);
      return longer === 0 ? 0 : levenshtein(a, b) / longer;
    }
    case 'jaro':
      return 1 - jaro(a, b);
    case 'jarowinkler':
      return 1 - jaroWinkler(a, b);
    case 'sorensendice':
      // A string of fewer than 2 characters has no bigram: nothing in common (talisman divides by zero).
      return a === b ? 0 : a.length < 2 || b.length < 2 ? 1 : 1 - dice(a, b);
    case 'jaccard':
      return 1 - jaccard(a, b);
    case 'lcsubstr':
      return 1 - lcs.similarity(a, b);
    case 'lcsubsequence':
      return 1 - subsequenceSimilarity(a, b);
    case 'soundex':
      return 1 - subsequenceSimilarity(soundex(a), soundex(b));
  }
}

/** The distance of two strings under `metric` (case-insensitive). */
export function stringDistance(metric: StringMetricName, a: string, b: string): number {
  return distance(metric, a.toLowerCase(), b.toLowerCase());
}

/** Distances of values to one reference: the reference is lower-cased (and for Soundex encoded) once. */
export function distanceTo(metric: StringMetricName, reference: string): (value: string) => number {
  const ref = reference.toLowerCase();
  if (metric === 'soundex') {
    const code = soundex(ref);
    return (value) => 1 - subsequenceSimilarity(code, soundex(value.toLowerCase()));
  }
  return (value) => distance(metric, ref, value.toLowerCase());
}
