/**
 * Fuzzy expansion (fuzzy.ts) against brute force: the optimal-string-
 * alignment distance computed with a full matrix for every term of the
 * dictionary, over two segments and a write buffer.
 */
import fc from 'fast-check';
import damerauLevenshtein from 'talisman/metrics/damerau-levenshtein.js';
import { fieldSpec, textTerm } from '@tessera/schema';
import { flushWriteBuffer } from '../segments/flush.js';
import { SegmentReader } from '../segments/segment-reader.js';
import { WriteBuffer } from '../segments/write-buffer.js';
import { codePoints, EditDistanceAutomaton, expandFuzzy, FUZZY_EXPANSIONS_MAX } from './fuzzy.js';
import { buildReaders, SCHEMA, type Doc } from './search.fixture.js';

/** Optimal string alignment over code points, the whole matrix (the definition, not the walk). */
function osa(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const d: number[][] = [];
  for (let i = 0; i <= x.length; i++) {
    d.push([]);
    for (let j = 0; j <= y.length; j++) {
      if (i === 0 || j === 0) {
        d[i]![j] = i + j;
        continue;
      }
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[x.length]![y.length]!;
}

/** The automaton's distance of one term on its own (no shared rows). */
function distanceOf(token: string, term: string, max: number): number {
  const chars = codePoints(term);
  return new EditDistanceAutomaton(token, max).distance(chars, chars.length, 0);
}

const BODY = textTerm(fieldSpec(SCHEMA, 'body')!.prefix, '');

describe('EditDistanceAutomaton', () => {
  it('counts insertions, deletions, substitutions and adjacent transpositions as 1', () => {
    expect(distanceOf('unserten', 'unserten', 2)).toBe(0);
    expect(distanceOf('unserten', 'uncertain', 3)).toBe(3);
    expect(distanceOf('unserten', 'uncertain', 2)).toBe(-1);
    expect(distanceOf('fox', 'ofx', 1)).toBe(1);
    expect(distanceOf('fox', 'fx', 1)).toBe(1);
    expect(distanceOf('fox', 'foxy', 1)).toBe(1);
    expect(distanceOf('fox', 'box', 1)).toBe(1);
    // Restricted: a transposed pair is not edited again ('ca' → 'abc' is 3, not Damerau's 2).
    expect(distanceOf('ca', 'abc', 3)).toBe(3);
    // Code points, not UTF-16 units: one astral character is one edit.
    expect(distanceOf('a😀b', 'ab', 1)).toBe(1);
    expect(distanceOf('niño', 'nino', 1)).toBe(1);
  });

  it('agrees with the full-matrix definition and with talisman on random pairs', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', '😀'), maxLength: 9 });
    fc.assert(fc.property(text, text, fc.integer({ min: 0, max: 4 }), (token, term, max) => {
      const expected = osa(token, term);
      expect(distanceOf(token, term, max)).toBe(expected <= max ? expected : -1);
      if (!token.includes('😀') && !term.includes('😀')) expect(damerauLevenshtein(token, term)).toBe(expected);
    }), { numRuns: 2000 });
  });
});

describe('expandFuzzy over segments and the write buffer', () => {
  const letter = fc.constantFrom('a', 'b', 'c', 'd', 'é');
  const word = fc.string({ unit: letter, minLength: 1, maxLength: 7 });

  function docsOf(bodies: string[][]): Doc[] {
    return bodies.map((words, i) => ({ docid: i + 1, body: words.join(' '), tags: [] }));
  }

  /** Brute force: every distinct body token within `max` of `token`, with its document frequency. */
  function bruteForce(docs: Doc[], token: string, max: number): Array<{ term: string; distance: number; df: number }> {
    const df = new Map<string, number>();
    for (const d of docs) for (const w of new Set(d.body.split(' '))) df.set(w, (df.get(w) ?? 0) + 1);
    const out: Array<{ term: string; distance: number; df: number }> = [];
    for (const [w, n] of df) {
      const distance = osa(token, w);
      if (distance <= max) out.push({ term: BODY + w, distance, df: n });
    }
    const byCodePoint = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
    return out.sort((a, b) => a.distance - b.distance || b.df - a.df || byCodePoint(a.term, b.term));
  }

  it('finds exactly the terms within N edits, nearest first, then most frequent', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.array(word, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 40 }),
      word,
      fc.integer({ min: 0, max: 3 }),
      async (bodies, token, max) => {
        const docs = docsOf(bodies);
        const readers = await buildReaders(docs, 3);
        const expected = bruteForce(docs, token, max);
        expect(expandFuzzy(readers, BODY, token, max, Infinity)).toEqual(expected);
        expect(expandFuzzy(readers, BODY, token, max)).toEqual(expected.slice(0, FUZZY_EXPANSIONS_MAX));
      },
    ), { numRuns: 60 });
  });

  it('keeps the 50 best of many expansions and seeks past long runs of a dead prefix', async () => {
    // All 8-letter words over {a, b} (256 terms): `aa…` runs die early for `bbbb`, far beyond the linear skip.
    const words: string[] = [];
    for (let i = 0; i < 256; i++) words.push(i.toString(2).padStart(8, '0').replace(/0/g, 'a').replace(/1/g, 'b'));
    const docs = docsOf(words.map((w, i) => [w, ...(i % 3 === 0 ? [w] : [])]));
    const readers = await buildReaders(docs, 3);
    for (const [token, max] of [['bbbbbbbb', 2], ['abababab', 3], ['bbbb', 4], ['aaaaaaab', 1]] as const) {
      const expected = bruteForce(docs, token, max);
      expect(expandFuzzy(readers, BODY, token, max, Infinity)).toEqual(expected);
      const best = expandFuzzy(readers, BODY, token, max);
      expect(best).toEqual(expected.slice(0, FUZZY_EXPANSIONS_MAX));
      expect(best.length).toBe(Math.min(expected.length, FUZZY_EXPANSIONS_MAX));
    }
  });

  it('shares rows along one segment\'s dictionary and skips dead prefixes without losing a match', async () => {
    await fc.assert(fc.asyncProperty(
      fc.uniqueArray(fc.string({ unit: fc.constantFrom('a', 'b', 'c'), minLength: 1, maxLength: 7 }), { minLength: 1, maxLength: 300 }),
      fc.string({ unit: fc.constantFrom('a', 'b', 'c'), minLength: 1, maxLength: 6 }),
      fc.integer({ min: 0, max: 3 }),
      async (words, token, max) => {
        // One document per word, around terms of two other prefixes that must never be walked into.
        const buffer = new WriteBuffer();
        words.forEach((w, i) => buffer.add(i + 1, { terms: [`a.${w}`, `p.${w}`, `q.${w}`], positions: [0, 0, 0], fieldLengths: [] }));
        buffer.freeze();
        const segment = new SegmentReader(1, await flushWriteBuffer(buffer));
        const found = expandFuzzy([segment], 'p.', token, max, Infinity).map((e) => [e.term, e.distance]);
        const expected = words.map((w) => [`p.${w}`, osa(token, w)] as const).filter(([, d]) => d <= max);
        expect(new Map(found as Array<[string, number]>)).toEqual(new Map(expected));
      },
    ), { numRuns: 150 });
  });

  it('stays inside the field: terms of other prefixes are never expanded', async () => {
    const docs: Doc[] = [{ docid: 1, body: 'alpha', title: 'alpho', tags: ['alphi'] }];
    const readers = await buildReaders(docs, 1);
    expect(expandFuzzy(readers, BODY, 'alpha', 2).map((e) => e.term)).toEqual([`${BODY}alpha`]);
  });
});
