import fc from 'fast-check';
import { bitWidth, packBlock, unpackBlock } from './bitpack.js';
import { BufferedPostings } from './buffered-postings.js';
import { ByteSink } from './byte-sink.js';
import { collectAll } from './collect-all.js';
import { BLOCK_SIZE, NO_MORE_DOCS } from './constants.js';
import { MemoryPostingsIterator } from './memory-postings-iterator.js';
import { PostingsIterator } from './postings-iterator.js';
import { emptyTermPostingsInfo, PostingsWriter, type TermPostingsInfo } from './postings-writer.js';
import { VarintReader } from './varint.js';

interface Posting { docid: number; freq: number; positions: number[] }

/** Random postings: sorted unique docids, each with 1..maxFreq ascending positions. */
function postingsArb(maxDocs: number, maxGap: number, maxFreq: number): fc.Arbitrary<Posting[]> {
  return fc.array(
    fc.record({ gap: fc.integer({ min: 1, max: maxGap }), positions: fc.uniqueArray(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: maxFreq }) }),
    { minLength: 0, maxLength: maxDocs },
  ).map((items) => {
    let docid = 0;
    return items.map(({ gap, positions }) => {
      docid += gap;
      const sorted = [...positions].sort((a, b) => a - b);
      return { docid, freq: sorted.length, positions: sorted };
    });
  });
}

function encode(postings: Posting[], hasPositions = true): { source: { postings: Uint8Array; positions: Uint8Array; docidOf: null }; info: TermPostingsInfo } {
  const postingsSink = new ByteSink(16);
  const positionsSink = new ByteSink(16);
  postingsSink.writeBytes(new Uint8Array(3)); // a non-zero offset, as in a segment
  const writer = new PostingsWriter(postingsSink, positionsSink);
  const info = emptyTermPostingsInfo();
  writer.startTerm(hasPositions);
  for (const p of postings) writer.addDoc(p.docid, p.freq, hasPositions ? p.positions : null, 0);
  if (!writer.finishTerm(info)) Object.assign(info, { df: 0 });
  postingsSink.writeBytes(new Uint8Array(8));
  positionsSink.writeBytes(new Uint8Array(8));
  return { source: { postings: postingsSink.view(), positions: positionsSink.view(), docidOf: null }, info };
}

describe('varint and bit-packing', () => {
  test('varints round-trip up to 2^35', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 35 - 1 })), (values) => {
      const sink = new ByteSink(1);
      for (const v of values) sink.writeVarint(v);
      const reader = new VarintReader(sink.view());
      for (const v of values) expect(reader.readVarint()).toBe(v);
      expect(reader.pos).toBe(sink.length);
    }));
  });

  test('bit-packed blocks round-trip at every width', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 32 }), fc.array(fc.nat(), { minLength: BLOCK_SIZE, maxLength: BLOCK_SIZE }), (width, raw) => {
      const values = new Uint32Array(raw.map((v) => (width === 0 ? 0 : width === 32 ? (v * 7919) >>> 0 : v % 2 ** width)));
      const w = Math.max(width, bitWidth(values, BLOCK_SIZE));
      const sink = new ByteSink(1);
      packBlock(values, w, sink);
      expect(sink.length).toBe(w * 16);
      sink.writeBytes(new Uint8Array(8));
      const out = new Uint32Array(BLOCK_SIZE);
      expect(unpackBlock(sink.view(), 0, w, out, 0)).toBe(w * 16);
      expect(Array.from(out)).toEqual(Array.from(values));
    }));
  });
});

describe('PostingsIterator', () => {
  test('round-trips docids, freqs and positions', () => {
    fc.assert(fc.property(postingsArb(700, 300, 6), (postings) => {
      const { source, info } = encode(postings);
      expect(info.df).toBe(postings.length);
      const it = new PostingsIterator().reset(source, info);
      expect(collectAll(it, true)).toEqual(postings);
      expect(it.docid).toBe(NO_MORE_DOCS);
      expect(it.next()).toBe(NO_MORE_DOCS);
    }), { numRuns: 50 });
  });

  test('large gaps and frequencies (5-byte varints, wide blocks)', () => {
    const postings: Posting[] = [];
    let docid = 1;
    for (let i = 0; i < 300; i++) {
      docid += i % 7 === 0 ? 40_000_000 : 1;
      const freq = i % 5 === 0 ? 70_000 : 1;
      postings.push({ docid, freq, positions: Array.from({ length: freq }, (_, k) => k * 3) });
    }
    const { source, info } = encode(postings);
    expect(collectAll(new PostingsIterator().reset(source, info), true)).toEqual(postings);
  });

  test('advance to random targets equals a linear scan, positions stay right', () => {
    fc.assert(fc.property(postingsArb(1000, 50, 4), fc.array(fc.integer({ min: 0, max: 60_000 }), { maxLength: 40 }), (postings, rawTargets) => {
      const { source, info } = encode(postings);
      const it = new PostingsIterator().reset(source, info);
      const targets = [...rawTargets].sort((a, b) => a - b);
      // Oracle: `at` is the index of the iterator's current posting (-1 before the start, length at the end).
      let at = -1;
      for (const target of targets) {
        const got = it.advance(target);
        if (at < 0 || (at < postings.length && postings[at]!.docid < target)) {
          at = Math.max(at, 0);
          while (at < postings.length && postings[at]!.docid < target) at++;
        }
        const expected = postings[at];
        expect(got).toBe(expected?.docid ?? NO_MORE_DOCS);
        if (expected !== undefined) {
          expect(it.freq).toBe(expected.freq);
          if (target % 3 === 0) expect(Array.from(it.positions().subarray(0, it.freq))).toEqual(expected.positions);
        }
        // Mix next() into the walk.
        if (target % 2 === 0 && got !== NO_MORE_DOCS) {
          at++;
          expect(it.next()).toBe(postings[at]?.docid ?? NO_MORE_DOCS);
        }
      }
    }), { numRuns: 60 });
  });

  test('a term without positions keeps freqs and gives no positions', () => {
    const postings: Posting[] = Array.from({ length: 300 }, (_, i) => ({ docid: i * 2 + 1, freq: (i % 3) + 1, positions: [] }));
    const { source, info } = encode(postings, false);
    expect(info.hasPositions).toBe(false);
    expect(source.positions.length).toBe(8);
    expect(collectAll(new PostingsIterator().reset(source, info))).toEqual(postings.map(({ docid, freq }) => ({ docid, freq })));
  });

  test('ordinals map to docids through docidOf', () => {
    const docidOf = new Uint32Array(400).map((_, i) => 1000 + i * 10);
    const postings: Posting[] = Array.from({ length: 200 }, (_, i) => ({ docid: i * 2, freq: 1, positions: [i] }));
    const { source, info } = encode(postings);
    const it = new PostingsIterator().reset({ ...source, docidOf }, info);
    expect(it.advance(1000 + 260 * 10 + 1)).toBe(1000 + 262 * 10);
    expect(it.ordinal).toBe(262);
    expect(it.positions()[0]).toBe(131);
    expect(it.blockMaxFreq()).toBe(1);
  });

  test('a segment of consecutive docids maps ordinals with an offset, in every block and in skips', () => {
    const docidOf = new Uint32Array(400).map((_, i) => 5000 + i);
    const postings: Posting[] = Array.from({ length: 200 }, (_, i) => ({ docid: i * 2, freq: 1 + (i % 3), positions: [] }));
    const { source, info } = encode(postings, false);
    const mapped = postings.map(({ docid, freq }) => ({ docid: 5000 + docid, freq }));
    expect(collectAll(new PostingsIterator().reset({ ...source, docidOf }, info))).toEqual(mapped);
    const it = new PostingsIterator().reset({ ...source, docidOf }, info);
    expect(it.advance(5000 + 300)).toBe(5000 + 300);
    expect(it.ordinal).toBe(300);
    expect(it.advance(5000 + 399)).toBe(NO_MORE_DOCS);
  });

  test('iterators stepped in turn keep their own blocks (slots of shared slabs)', () => {
    const lists = Array.from({ length: 100 }, (_, t) => encode(Array.from({ length: 300 }, (_, i) => ({ docid: 1 + i * (t + 1), freq: 1 + ((i + t) % 5), positions: [] })), false));
    const its = lists.map(({ source, info }) => new PostingsIterator().reset(source, info));
    for (let i = 0; i < 300; i++) {
      its.forEach((it, t) => {
        expect(it.next()).toBe(1 + i * (t + 1));
        expect(it.freq).toBe(1 + ((i + t) % 5));
      });
    }
  });

  test('block max frequencies come from the skip table', () => {
    const postings: Posting[] = Array.from({ length: 384 }, (_, i) => ({ docid: i + 1, freq: i < 128 ? 1 : i < 256 ? 9 : 4, positions: [] }));
    const { source, info } = encode(postings, false);
    const it = new PostingsIterator().reset(source, info);
    it.advance(200);
    expect(it.blockMaxFreq()).toBe(9);
    expect(it.blockLastDocid()).toBe(256);
    it.advance(300);
    expect(it.blockMaxFreq()).toBe(4);
    expect(info.maxFreq).toBe(9);
  });
});

describe('MemoryPostingsIterator', () => {
  test('iterates in docid order, skipping deleted ordinals, in and out of add order', () => {
    fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 5000 }), { maxLength: 300 }), fc.boolean(), fc.integer({ min: 0, max: 5000 }), (rawDocids, sorted, target) => {
      const docids = sorted ? [...rawDocids].sort((a, b) => a - b) : rawDocids;
      const docidOf = new Uint32Array(docids);
      const deleted = new Uint8Array(docids.length).map((_, i) => (docids[i]! % 5 === 0 ? 1 : 0));
      const postings = new BufferedPostings();
      docids.forEach((docid, ordinal) => {
        const freq = (docid % 3) + 1;
        postings.addDocument(ordinal, Array.from({ length: freq }, () => 't'), [docid, docid + 1, docid + 2].slice(0, freq));
      });
      const term = postings.termId('t');
      if (docids.length === 0) {
        expect(term).toBe(-1);
        return;
      }
      const expected = docids.map((docid, ordinal) => ({ docid, ordinal }))
        .filter(({ ordinal }) => deleted[ordinal] === 0)
        .sort((a, b) => a.docid - b.docid)
        .map(({ docid }) => ({ docid, freq: (docid % 3) + 1, positions: [docid, docid + 1, docid + 2].slice(0, (docid % 3) + 1) }));
      const inOrder = sorted || docids.every((d, i) => i === 0 || d > docids[i - 1]!);
      const it = new MemoryPostingsIterator();
      expect(collectAll(it.reset(postings, term, docidOf, deleted, inOrder), true)).toEqual(expected);
      const first = expected.find((p) => p.docid >= target);
      expect(it.reset(postings, term, docidOf, deleted, inOrder).advance(target)).toBe(first?.docid ?? NO_MORE_DOCS);
      if (first !== undefined) expect(Array.from(it.positions().subarray(0, it.freq))).toEqual(first.positions);
    }));
  });
});
