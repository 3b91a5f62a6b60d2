import fc from 'fast-check';
import { NO_TOKEN_POSITION, WriteBuffer } from '../segments/write-buffer.js';
import { BufferedPostings, DecodedTerm, PostingsCursor } from './buffered-postings.js';
import { BLOCK_BYTES, ByteSlicePool, SLICE_SIZES, SliceReader, SliceStreams } from './byte-slice-pool.js';
import { collectAll } from './collect-all.js';
import { NO_MORE_DOCS } from './constants.js';
import { MemoryPostingsIterator } from './memory-postings-iterator.js';

describe('ByteSlicePool slice streams', () => {
  test('interleaved varint streams read back as written', () => {
    const value = fc.oneof(fc.integer({ min: 0, max: 127 }), fc.integer({ min: 0, max: 2 ** 16 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }));
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), value), { maxLength: 2000, size: 'max' }), (writes) => {
      const pool = new ByteSlicePool();
      const streams = new SliceStreams(pool, 4);
      const model: number[][] = [];
      for (const [id, v] of writes) {
        if (id >= streams.capacity) streams.grow(Math.max(id + 1, streams.capacity * 2));
        if (model[id] === undefined) {
          streams.open(id);
          model[id] = [];
        }
        streams.writeVarint(id, v);
        model[id]!.push(v);
      }
      const reader = new SliceReader();
      model.forEach((values, id) => {
        reader.reset(pool, streams.start(id));
        expect(values.map(() => reader.readVarint())).toEqual(values);
        // Skipping lands on the same values.
        if (values.length > 2) {
          reader.reset(pool, streams.start(id)).skipVarints(values.length - 1);
          expect(reader.readVarint()).toBe(values.at(-1));
        }
      });
    }), { numRuns: 100 });
  });

  test('long streams chain slices across blocks; slices never cross a block', () => {
    const pool = new ByteSlicePool();
    const streams = new SliceStreams(pool, 2);
    streams.open(0);
    streams.open(1);
    const n = 3 * BLOCK_BYTES;
    for (let i = 0; i < n; i++) {
      streams.writeVarint(0, i);
      streams.writeVarint(1, (i * 2654435761) >>> 0);
    }
    expect(pool.blocks.length).toBeGreaterThan(6);
    expect(pool.byteLength).toBe(pool.blocks.length * BLOCK_BYTES);
    const reader = new SliceReader().reset(pool, streams.start(0));
    for (let i = 0; i < n; i++) if (reader.readVarint() !== i) throw new Error(`stream 0 differs at ${i}`);
    reader.reset(pool, streams.start(1));
    for (let i = 0; i < n; i++) if (reader.readVarint() !== (i * 2654435761) >>> 0) throw new Error(`stream 1 differs at ${i}`);
    expect(Math.max(...SLICE_SIZES)).toBeLessThanOrEqual(BLOCK_BYTES);
  });
});

/** A token of a document: a term and a position (NO_TOKEN_POSITION: none). */
type Token = [term: string, position: number];

interface ModelPosting { ordinal: number; freq: number; positions: number[] | null }

/** The postings BufferedPostings must hold: per term, per document its frequency and ascending positions (null if one is missing). */
function modelOf(docs: { ordinal: number; tokens: Token[] }[]): Map<string, ModelPosting[]> {
  const model = new Map<string, ModelPosting[]>();
  for (const { ordinal, tokens } of docs) {
    const byTerm = new Map<string, ModelPosting>();
    for (const [term, position] of tokens) {
      let p = byTerm.get(term);
      if (p === undefined) byTerm.set(term, (p = { ordinal, freq: 0, positions: [] }));
      p.freq++;
      p.positions = p.positions === null || position < 0 ? null : [...p.positions, position];
    }
    for (const [term, p] of byTerm) {
      p.positions?.sort((a, b) => a - b);
      const list = model.get(term) ?? [];
      list.push(p);
      model.set(term, list);
    }
  }
  return model;
}

const TERMS = ['a', 'b', 'c', 'é', '😀', 'long-term-name-over-thirteen'];
/** A document: tokens of a small vocabulary in any order; positions unique within it; some tokens without one. */
const docArb = fc.array(fc.tuple(fc.constantFrom(...TERMS), fc.boolean()), { maxLength: 40 })
  .chain((picks) => fc.shuffledSubarray(Array.from({ length: 200 }, (_, i) => i * 3 + (i % 2)), { minLength: picks.length, maxLength: picks.length })
    .map((positions): Token[] => picks.map(([term, positioned], i) => [term, positioned || term.length > 1 ? positions[i]! : NO_TOKEN_POSITION])));
const docsArb = fc.array(fc.record({ gap: fc.integer({ min: 1, max: 300 }), tokens: docArb }), { maxLength: 60 }).map((items) => {
  let ordinal = -1;
  return items.map(({ gap, tokens }) => ({ ordinal: (ordinal += gap), tokens }));
});

describe('BufferedPostings', () => {
  test('cursors and decoded terms read back what a Map-of-arrays model holds', () => {
    fc.assert(fc.property(docsArb, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (docs, readMask) => {
      const postings = new BufferedPostings();
      for (const { ordinal, tokens } of docs) postings.addDocument(ordinal, tokens.map((t) => t[0]), tokens.map((t) => t[1]));
      const model = modelOf(docs);
      expect([...postings.names].sort()).toEqual([...model.keys()].sort());
      expect(postings.termCount).toBe(model.size);
      const cursor = new PostingsCursor();
      const decoded = new DecodedTerm();
      const positions = new Int32Array(64);
      for (const [term, expected] of model) {
        const id = postings.termId(term);
        // Positions stop at a term's first posting without them.
        const firstWithout = expected.findIndex((p) => p.positions === null);
        const withPositions = firstWithout < 0;
        expect(postings.docFreq(id)).toBe(expected.length);
        expect(postings.hasPositions(id)).toBe(withPositions);
        cursor.reset(postings, id);
        expect(cursor.withPositions).toBe(withPositions);
        // Read the positions of some postings only: the cursor skips the others'.
        for (let i = 0; i < expected.length; i++) {
          expect(cursor.next()).toBe(true);
          expect([cursor.ordinal, cursor.freq]).toEqual([expected[i]!.ordinal, expected[i]!.freq]);
          if (withPositions && readMask[i % readMask.length]) {
            cursor.readPositions(positions);
            expect(Array.from(positions.subarray(0, cursor.freq))).toEqual(expected[i]!.positions);
          }
        }
        expect(cursor.next()).toBe(false);
        decoded.decode(postings, id, true);
        expect(decoded.count).toBe(expected.length);
        expect(decoded.withPositions).toBe(withPositions);
        expected.forEach((p, i) => {
          expect([decoded.ordinals[i], decoded.freqs[i]]).toEqual([p.ordinal, p.freq]);
          if (withPositions) expect(Array.from(decoded.positions.subarray(decoded.positionsStart[i], decoded.positionsStart[i]! + p.freq))).toEqual(p.positions);
        });
      }
      expect(postings.termId('absent')).toBe(-1);
    }), { numRuns: 200 });
  });

  test('skipTo jumps by the skip entries and lands where stepping would', () => {
    const manyDocs = fc.array(fc.record({ gap: fc.integer({ min: 1, max: 4 }), tokens: docArb }), { minLength: 100, maxLength: 400, size: 'max' }).map((items) => {
      let ordinal = -1;
      return items.map(({ gap, tokens }) => ({ ordinal: (ordinal += gap), tokens }));
    });
    fc.assert(fc.property(manyDocs, fc.array(fc.integer({ min: 0, max: 2500 }), { minLength: 1, maxLength: 8 }), (docs, rawTargets) => {
      const postings = new BufferedPostings();
      for (const { ordinal, tokens } of docs) postings.addDocument(ordinal, tokens.map((t) => t[0]), tokens.map((t) => t[1]));
      const docidOf = new Uint32Array(docs.at(-1)!.ordinal + 1).map((_, o) => 2 * o + 1);
      const targets = [...rawTargets].sort((a, b) => a - b);
      const positions = new Int32Array(64);
      for (const [term, expected] of modelOf(docs)) {
        const cursor = new PostingsCursor().reset(postings, postings.termId(term));
        let k = 0;
        for (const target of targets) {
          const want = expected.findIndex((p, i) => i > cursor.index && docidOf[p.ordinal]! >= target);
          cursor.skipTo(docidOf, target);
          let found = false;
          while (cursor.next()) {
            if (docidOf[cursor.ordinal]! >= target) {
              found = true;
              break;
            }
          }
          if (want < 0) {
            expect(found).toBe(false);
            break;
          }
          expect([cursor.index, cursor.ordinal, cursor.freq]).toEqual([want, expected[want]!.ordinal, expected[want]!.freq]);
          if (cursor.withPositions && k++ % 2 === 0) {
            cursor.readPositions(positions);
            expect(Array.from(positions.subarray(0, cursor.freq))).toEqual(expected[want]!.positions);
          }
        }
        // The rest reads on from wherever the jumps left the streams (slice ends and levels included).
        while (cursor.next()) {
          expect([cursor.ordinal, cursor.freq]).toEqual([expected[cursor.index]!.ordinal, expected[cursor.index]!.freq]);
          if (cursor.withPositions) {
            cursor.readPositions(positions);
            expect(Array.from(positions.subarray(0, cursor.freq))).toEqual(expected[cursor.index]!.positions);
          }
        }
        expect(cursor.index).toBe(expected.length);
      }
    }), { numRuns: 100 });
  });

  test('a term losing its positions keeps them readable by an earlier cursor and the first postings', () => {
    const postings = new BufferedPostings();
    postings.addDocument(0, ['t', 't'], [4, 2]);
    const cursor = new PostingsCursor().reset(postings, postings.termId('t'));
    postings.addDocument(1, ['t'], [NO_TOKEN_POSITION]);
    expect(postings.hasPositions(postings.termId('t'))).toBe(false);
    expect(cursor.withPositions).toBe(true);
    expect(cursor.next()).toBe(true);
    const out = new Int32Array(2);
    cursor.readPositions(out);
    expect(Array.from(out)).toEqual([2, 4]);
    expect(cursor.next()).toBe(false);
    const all = new PostingsCursor().reset(postings, postings.termId('t'));
    expect(all.withPositions).toBe(false);
    expect([all.next(), all.ordinal, all.freq, all.next(), all.ordinal, all.freq, all.next()]).toEqual([true, 0, 2, true, 1, 1, false]);
  });

  test('the memory estimate counts the pool and grows with it', () => {
    const postings = new BufferedPostings();
    const empty = postings.bytes();
    let previous = empty;
    for (let d = 0; d < 5000; d++) {
      postings.addDocument(d, [`unique${d}`, 'common', 'common'], [0, 1, 2]);
      expect(postings.bytes()).toBeGreaterThanOrEqual(previous);
      previous = postings.bytes();
    }
    // Every term's first slice is in the pool; the names are counted too.
    expect(postings.pool.byteLength).toBeGreaterThanOrEqual(5001 * SLICE_SIZES[0]!);
    expect(postings.bytes() - empty).toBeGreaterThanOrEqual(postings.pool.byteLength + 5000 * 2 * 'uniqueNNNN'.length);
  });
});

describe('WriteBuffer postings over the pools', () => {
  const opsArb = fc.array(fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('add' as const), docid: fc.integer({ min: 1, max: 40 }), tokens: docArb }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), docid: fc.integer({ min: 1, max: 40 }) }) },
  ), { maxLength: 80 });

  test('iterators (next, advance, positions of some docs) match the live documents, replacements included', () => {
    fc.assert(fc.property(opsArb, fc.array(fc.integer({ min: 0, max: 45 }), { maxLength: 6 }), fc.boolean(), (ops, targets, ascending) => {
      const buffer = new WriteBuffer();
      const live = new Map<number, Token[]>();
      // Ascending docids keep the buffer in docid order (the streaming path); otherwise it sorts.
      let last = 0;
      for (const op of ops) {
        if (op.kind === 'add') {
          const docid = ascending ? ++last : op.docid;
          buffer.add(docid, { terms: op.tokens.map((t) => t[0]), positions: op.tokens.map((t) => t[1]) });
          live.set(docid, op.tokens);
        } else {
          const docid = ascending ? (op.docid % Math.max(1, last)) + 1 : op.docid;
          buffer.delete(docid);
          live.delete(docid);
        }
      }
      if (ascending) expect(buffer.inDocidOrder).toBe(true);
      // Positions in the model only when every posting the buffer holds for the term (deleted ones too) had them.
      const all = modelOf(ops.filter((op) => op.kind === 'add').map((op, i) => ({ ordinal: i, tokens: op.tokens })));
      const docs = [...live].sort(([a], [b]) => a - b);
      for (const term of TERMS) {
        const hasPositions = all.get(term)?.every((p) => p.positions !== null) ?? true;
        const expected = docs.flatMap(([docid, tokens]) => {
          const p = modelOf([{ ordinal: 0, tokens }]).get(term)?.[0];
          return p === undefined ? [] : [{ docid, freq: p.freq, positions: hasPositions ? p.positions! : [] }];
        });
        const it = buffer.postingsIterator(term);
        if (it === null) {
          expect(expected).toEqual([]);
          continue;
        }
        expect(collectAll(it, true)).toEqual(expected);
        // advance() to ascending targets, reading positions at every other landing.
        const iterator = buffer.postingsIterator(term, new MemoryPostingsIterator())!;
        let k = 0;
        for (const target of [...targets].sort((a, b) => a - b)) {
          const want = expected.find((p) => p.docid >= Math.max(target, iterator.docid));
          const got = iterator.advance(target);
          expect(got).toBe(want?.docid ?? NO_MORE_DOCS);
          if (want === undefined) break;
          expect(iterator.freq).toBe(want.freq);
          if (hasPositions && k++ % 2 === 0) expect(Array.from(iterator.positions().subarray(0, iterator.freq))).toEqual(want.positions);
        }
        expect(buffer.docFreq(term)).toBe(all.get(term)?.length ?? 0);
      }
    }), { numRuns: 150 });
  });

  test('an iterator sees the postings present at its reset while documents keep coming', () => {
    for (const docids of [[1, 2, 3, 4], [4, 3, 2, 1]]) {
      const buffer = new WriteBuffer();
      buffer.add(docids[0]!, { terms: ['t', 'u'], positions: [0, 1] });
      buffer.add(docids[1]!, { terms: ['t'], positions: [5] });
      const it = buffer.postingsIterator('t')!;
      buffer.add(docids[2]!, { terms: ['t'], positions: [NO_TOKEN_POSITION] });
      buffer.add(docids[3]!, { terms: ['t'], positions: [7] });
      const seen = collectAll(it, true);
      expect(seen.map((p) => p.docid)).toEqual(docids.slice(0, 2).sort((a, b) => a - b));
      expect(seen.map((p) => p.positions)).toEqual(docids[0]! < docids[1]! ? [[0], [5]] : [[5], [0]]);
      expect(collectAll(buffer.postingsIterator('t')!, true).map((p) => p.positions)).toEqual([[], [], [], []]);
    }
  });
});
