import fc from 'fast-check';
import jaro from 'talisman/metrics/jaro.js';
import soundex from 'talisman/phonetics/soundex.js';
import { distanceTo, isStringMetric, longestCommonSubsequence, stringDistance, type StringMetricName } from './string-metrics.js';

const METRICS: StringMetricName[] = ['levenshtein', 'jarowinkler', 'sorensendice', 'jaccard', 'lcsubstr', 'lcsubsequence', 'soundex', 'jaro'];

/** Longest common subsequence by its recursive definition (memoised). */
function lcsDefinition(a: string, b: string): number {
  const memo = new Map<string, number>();
  const go = (i: number, j: number): number => {
    if (i === a.length || j === b.length) return 0;
    const key = `${i},${j}`;
    let v = memo.get(key);
    if (v === undefined) {
      v = a[i] === b[j] ? 1 + go(i + 1, j + 1) : Math.max(go(i + 1, j), go(i, j + 1));
      memo.set(key, v);
    }
    return v;
  };
  return go(0, 0);
}

describe('string metrics (§9.5)', () => {
  it('give the distances Xapiand defines', () => {
    expect(stringDistance('levenshtein', 'kitten', 'sitting')).toBeCloseTo(3 / 7, 12);
    expect(stringDistance('sorensendice', 'night', 'nacht')).toBeCloseTo(1 - 0.25, 12);
    expect(stringDistance('jaccard', 'abc', 'abd')).toBeCloseTo(1 - 2 / 4, 12);
    // Substring "arpen" (5 of 9) vs subsequence "arpener" (7 of 9).
    expect(stringDistance('lcsubstr', 'carpenter', 'sharpener')).toBeCloseTo(1 - 5 / 9, 12);
    expect(stringDistance('lcsubsequence', 'carpenter', 'sharpener')).toBeCloseTo(1 - 7 / 9, 12);
    expect(stringDistance('jaro', 'martha', 'marhta')).toBeCloseTo(1 - 0.9444444444444445, 12);
    expect(stringDistance('jarowinkler', 'martha', 'marhta')).toBeCloseTo(1 - 0.9611111111111111, 12);
    // Robert and Rupert share the Soundex code R163.
    expect(soundex('Robert')).toBe(soundex('Rupert'));
    expect(stringDistance('soundex', 'Robert', 'Rupert')).toBe(0);
    expect(stringDistance('soundex', 'Robert', 'Tymczak')).toBeGreaterThan(0);
  });

  it('are case-insensitive, 0 for equal strings and within [0, 1]', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'C', 'd', 'é', ' '), maxLength: 10 });
    fc.assert(fc.property(fc.constantFrom(...METRICS), text, text, (metric, a, b) => {
      const d = stringDistance(metric, a, b);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(1);
      expect(stringDistance(metric, a.toUpperCase(), b)).toBeCloseTo(d, 12);
      expect(stringDistance(metric, a, a.toUpperCase())).toBe(0);
      expect(distanceTo(metric, a)(b)).toBeCloseTo(d, 12);
    }), { numRuns: 1000 });
  });

  it('computes the longest common subsequence as its definition', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 12 });
    fc.assert(fc.property(text, text, (a, b) => {
      expect(longestCommonSubsequence(a, b)).toBe(lcsDefinition(a, b));
    }), { numRuns: 1000 });
  });

  it('uses talisman where it has the metric', () => {
    fc.assert(fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), (a, b) => {
      expect(stringDistance('jaro', a, b)).toBeCloseTo(1 - jaro(a.toLowerCase(), b.toLowerCase()), 12);
    }));
  });

  it('knows the canonical names only (aliases are the parser\'s)', () => {
    for (const m of METRICS) expect(isStringMetric(m)).toBe(true);
    for (const m of ['leven', 'dice', 'lcs', 'hamming', '']) expect(isStringMetric(m)).toBe(false);
  });
});
