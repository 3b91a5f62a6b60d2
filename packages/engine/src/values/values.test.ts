import fc from 'fast-check';
import { Bitset } from './bitset.js';
import { NumericColumnBuilder, StringColumnBuilder } from './column-builder.js';
import { gatherNumeric, gatherStrings } from './gather.js';
import { NumericColumn } from './numeric-column.js';
import { packStrings, unpackStrings } from './packed-strings.js';
import { StringDictionary } from './string-dictionary.js';

const numberArb = fc.oneof(fc.integer({ min: -50, max: 50 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }));
const docsArb = fc.array(fc.option(fc.array(numberArb, { minLength: 0, maxLength: 3 }), { nil: undefined }), { maxLength: 200 });
const stringDocsArb = fc.array(fc.option(fc.array(fc.constantFrom('a', 'b', 'ab', 'zz', 'é', '😀', 'ｆ', ''), { maxLength: 3 }), { nil: undefined }), { maxLength: 200 });

function bits(set: Bitset): number[] {
  const out: number[] = [];
  for (let i = set.nextSetBit(0); i >= 0; i = set.nextSetBit(i + 1)) out.push(i);
  return out;
}

describe('Bitset', () => {
  test('add, has, count, nextSetBit, bytes round trip', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 300 }), fc.array(fc.nat(), { maxLength: 100 }), (size, raw) => {
      const set = new Bitset(size);
      const members = [...new Set(raw.filter((i) => i < size))].sort((a, b) => a - b);
      for (const i of members) set.add(i);
      expect(bits(set)).toEqual(members);
      expect(set.count()).toBe(members.length);
      expect(bits(Bitset.fromBytes(size, set.toBytes()))).toEqual(members);
      const full = new Bitset(size);
      full.fill();
      expect(full.count()).toBe(size);
      full.andNot(set);
      expect(full.count()).toBe(size - members.length);
    }));
  });
});

describe('numeric columns', () => {
  test('scanRange equals brute force, min/max per doc, single and multi layouts', () => {
    fc.assert(fc.property(docsArb, numberArb, numberArb, (docs, a, b) => {
      const [from, to] = a <= b ? [a, b] : [b, a];
      const builder = new NumericColumnBuilder();
      docs.forEach((values, ordinal) => { if (values !== undefined) builder.add(ordinal, values); });
      const column = builder.column(docs.length);
      const expected: number[] = [];
      docs.forEach((values, ordinal) => {
        const vs = values ?? [];
        if (vs.some((v) => v >= from && v <= to)) expected.push(ordinal);
        expect(column.hasValue(ordinal)).toBe(vs.length > 0);
        if (vs.length > 0) {
          expect(column.min[ordinal]).toBe(Math.min(...vs));
          expect(column.max[ordinal]).toBe(Math.max(...vs));
        }
        expect(column.valueCount(ordinal)).toBe(vs.length);
      });
      expect(column.multiValued).toBe(docs.some((v) => v !== undefined && v.length > 1));
      const into = new Bitset(docs.length);
      expect(column.scanRange(from, to, into)).toBe(expected.length);
      expect(bits(into)).toEqual(expected);
      // Gather in reverse order keeps every doc's values.
      const order = new Uint32Array(docs.length).map((_, i) => docs.length - 1 - i);
      const gathered = gatherNumeric([column], new Uint8Array(docs.length), order);
      const back = new Bitset(docs.length);
      gathered.scanRange(from, to, back);
      expect(bits(back)).toEqual(expected.map((o) => docs.length - 1 - o).reverse());
    }));
  });
});

describe('string columns', () => {
  test('dictionary order is code point order and lookups find every string', () => {
    fc.assert(fc.property(fc.uniqueArray(fc.string({ unit: 'grapheme' }), { maxLength: 50 }), fc.string({ unit: 'grapheme' }), (strings, probe) => {
      const dictionary = StringDictionary.build(strings);
      const sorted = [...strings].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect(Array.from({ length: dictionary.count }, (_, i) => dictionary.term(i))).toEqual(sorted.map((s) => Buffer.from(s).toString()));
      const at = dictionary.lookup(probe);
      const expected = sorted.findIndex((s) => Buffer.compare(Buffer.from(s), Buffer.from(probe)) >= 0);
      const insertion = expected < 0 ? sorted.length : expected;
      if (at >= 0) expect(Buffer.from(dictionary.term(at)).equals(Buffer.from(probe))).toBe(true);
      else expect(-at - 1).toBe(insertion);
    }));
  });

  test('scanRange equals brute force on code points, gather keeps values', () => {
    const cmp = (x: string, y: string): number => Buffer.compare(Buffer.from(x), Buffer.from(y));
    fc.assert(fc.property(stringDocsArb, fc.option(fc.constantFrom('a', 'b', 'c', 'é', '😀', ''), { nil: null }), fc.option(fc.constantFrom('a', 'ab', 'z', 'ｆ', '😀'), { nil: null }), (docs, from, to) => {
      const builder = new StringColumnBuilder();
      docs.forEach((values, ordinal) => { if (values !== undefined) builder.add(ordinal, values); });
      const column = builder.column(docs.length);
      const inRange = (v: string): boolean => (from === null || cmp(v, from) >= 0) && (to === null || cmp(v, to) <= 0);
      const expected = docs.flatMap((values, ordinal) => ((values ?? []).some(inRange) ? [ordinal] : []));
      const into = new Bitset(docs.length);
      column.scanRange(from, to, into);
      expect(bits(into)).toEqual(expected);
      docs.forEach((values, ordinal) => {
        const vs = values ?? [];
        expect(Array.from({ length: column.valueCount(ordinal) }, (_, k) => column.valueAt(ordinal, k)).sort(cmp)).toEqual([...vs].sort(cmp));
      });
      const order = new Uint32Array(docs.length).map((_, i) => i);
      const gathered = gatherStrings([column], new Uint8Array(docs.length), order);
      const again = new Bitset(docs.length);
      gathered.scanRange(from, to, again);
      expect(bits(again)).toEqual(expected);
    }));
  });

  test('an immutable column answers ranges through its sorted index exactly as the scan does', () => {
    fc.assert(fc.property(fc.boolean(), fc.integer({ min: 1, max: 1 << 30 }), (multi, seed) => {
      let state = seed;
      const next = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
      const docs = 6000;
      const builder = new NumericColumnBuilder();
      for (let o = 0; o < docs; o++) {
        if (next() < 0.1) continue; // no value
        const n = multi && next() < 0.3 ? 2 + Math.floor(next() * 3) : 1;
        builder.add(o, Array.from({ length: n }, () => Math.floor(next() * 5000) - 100));
      }
      const mutable = builder.column(docs);
      const frozen = new NumericColumn(docs, mutable.min, mutable.max, mutable.offsets, mutable.values, true);
      for (const width of [0, 3, 40, 800, 6000]) {
        const from = Math.floor(next() * 5000) - 100;
        const expected = new Bitset(docs);
        const got = new Bitset(docs);
        const n = mutable.scanRange(from, from + width, expected);
        expect(frozen.scanRange(from, from + width, got)).toBe(n);
        expect(bits(got)).toEqual(bits(expected));
      }
    }), { numRuns: 20 });
  });
});

describe('packed strings', () => {
  test('unpack gives back the list: empty strings, astral and lone surrogates, separators inside', () => {
    fc.assert(fc.property(fc.array(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('', '\u0000', '\ud800', '😀'))), (strings) => {
      expect(unpackStrings(structuredClone(packStrings(strings)))).toEqual(strings);
    }));
  });
});
