import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import fc from 'fast-check';
import { collectAll, type CollectedPosting } from '../postings/collect-all.js';
import { NO_MORE_DOCS } from '../postings/constants.js';
import { Bitset } from '../values/bitset.js';
import { flushWriteBuffer } from './flush.js';
import { mergeSegments } from './merge.js';
import { TieredMergePolicy } from './merge-policy.js';
import { SegmentReader } from './segment-reader.js';
import { chunkKey, readManifest, SegmentStore, writeSegmentChunks, type SegmentDatabase } from './segment-store.js';
import { termsOfDocument, tokenDocument } from './indexable-document.fixture.js';
import { compareCodePoints, NO_TOKEN_POSITION, WriteBuffer, type IndexableDocument } from './write-buffer.js';

const WORDS = ['a', 'ab', 'abc', 'b', 'ba', 'zeta', 'é', 'éa', '😀', 'ｆ', 'x'];

/**
 * A document: text terms with positions, a keyword (once or twice) without,
 * a length, values; tokens in a random order (positions need not ascend in
 * token order).
 */
function docArb(): fc.Arbitrary<IndexableDocument> {
  return fc.record({
    words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 }),
    keyword: fc.constantFrom('games', 'net', 'libs'),
    keywordFreq: fc.integer({ min: 1, max: 2 }),
    shuffle: fc.array(fc.integer(), { minLength: 14, maxLength: 14 }),
    n: fc.option(fc.array(fc.integer({ min: -100, max: 100 }), { minLength: 1, maxLength: 2 }), { nil: undefined }),
    s: fc.option(fc.array(fc.constantFrom('x', 'y', 'zz'), { minLength: 1, maxLength: 2 }), { nil: undefined }),
  }).map(({ words, keyword, keywordFreq, shuffle, n, s }) => {
    const tokens: [string, number][] = words.map((w, i) => [`text.S${w}`, i]);
    for (let k = 0; k < keywordFreq; k++) tokens.push([`section.K${keyword}`, NO_TOKEN_POSITION]);
    const order = tokens.map((_, i) => i).sort((a, b) => shuffle[a]! - shuffle[b]! || a - b);
    return {
      terms: order.map((i) => tokens[i]![0]),
      positions: order.map((i) => tokens[i]![1]),
      fieldLengths: [{ field: 'text', length: words.length }],
      ...(n === undefined ? {} : { numbers: [{ slot: 1, values: n }] }),
      ...(s === undefined ? {} : { strings: [{ slot: 2, values: s }] }),
    };
  });
}

type Op = { kind: 'add'; docid: number; doc: IndexableDocument } | { kind: 'delete'; docid: number };
const opsArb = fc.array(fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('add' as const), docid: fc.integer({ min: 1, max: 60 }), doc: docArb() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), docid: fc.integer({ min: 1, max: 60 }) }) },
), { minLength: 1, maxLength: 80 });

/** What any searchable view (buffer, segment, set of segments) must answer, over live docs only. */
interface Snapshot {
  postings: Record<string, CollectedPosting[]>;
  numbers: Record<number, [number, number, number]>;
  strings: Record<number, string[]>;
  norms: Record<number, number>;
}

function modelSnapshot(model: Map<number, IndexableDocument>): Snapshot {
  const snap: Snapshot = { postings: {}, numbers: {}, strings: {}, norms: {} };
  for (const docid of [...model.keys()].sort((a, b) => a - b)) {
    const doc = model.get(docid)!;
    for (const [term, t] of termsOfDocument(doc)) (snap.postings[term] ??= []).push({ docid, freq: t.freq, positions: t.positions ?? [] });
    const n = doc.numbers?.[0]?.values;
    if (n !== undefined) snap.numbers[docid] = [Math.min(...n), Math.max(...n), n.length];
    const s = doc.strings?.[0]?.values;
    if (s !== undefined) snap.strings[docid] = [...s].sort();
    snap.norms[docid] = doc.fieldLengths![0]!.length;
  }
  return snap;
}

interface View {
  docids(): number[];
  ordinalOf(docid: number): number;
  isLive(docid: number): boolean;
  termList(): string[];
  postings(term: string): CollectedPosting[];
  numeric: ReturnType<SegmentReader['numericColumn']>;
  strings: ReturnType<SegmentReader['stringColumn']>;
  norms: Uint16Array | null;
}

function segmentView(r: SegmentReader): View {
  const terms: string[] = [];
  for (const it = r.terms(''); it.next();) terms.push(it.term());
  return {
    docids: () => Array.from(r.docids).filter((d) => r.isLive(d)),
    ordinalOf: (d) => r.ordinalOf(d),
    isLive: (d) => r.isLive(d),
    termList: () => terms,
    postings: (term) => collectAll(r.postingsIterator(term)!, true).filter((p) => r.isLive(p.docid)),
    numeric: r.numericColumn(1),
    strings: r.stringColumn(2),
    norms: r.fieldNorms('text'),
  };
}

function bufferView(b: WriteBuffer): View {
  return {
    docids: () => Array.from(b.docidOf.subarray(0, b.docCount)).filter((d) => b.isLive(d)).sort((x, y) => x - y),
    ordinalOf: (d) => b.ordinalOf(d),
    isLive: (d) => b.isLive(d),
    termList: () => b.postings.names.filter((t) => b.postingsIterator(t)!.next() !== NO_MORE_DOCS).sort(compareCodePoints),
    postings: (term) => collectAll(b.postingsIterator(term)!, true),
    numeric: b.numericColumn(1),
    strings: b.stringColumn(2),
    norms: b.fieldNorms('text'),
  };
}

function snapshotOf(views: View[]): Snapshot {
  const snap: Snapshot = { postings: {}, numbers: {}, strings: {}, norms: {} };
  for (const v of views) {
    for (const term of v.termList()) {
      const live = v.postings(term);
      if (live.length > 0) snap.postings[term] = [...(snap.postings[term] ?? []), ...live].sort((a, b) => a.docid - b.docid);
    }
    for (const docid of v.docids()) {
      const o = v.ordinalOf(docid);
      const col = v.numeric;
      if (col !== null && col.valueCount(o) > 0) snap.numbers[docid] = [col.min[o]!, col.max[o]!, col.valueCount(o)];
      const sc = v.strings;
      if (sc !== null && sc.valueCount(o) > 0) snap.strings[docid] = Array.from({ length: sc.valueCount(o) }, (_, k) => sc.valueAt(o, k)).sort();
      snap.norms[docid] = v.norms![o]!;
    }
  }
  // Canonical key order for toEqual.
  snap.postings = Object.fromEntries(Object.entries(snap.postings).sort(([a], [b]) => compareCodePoints(a, b)));
  return snap;
}

function apply(ops: Op[], buffer: WriteBuffer, model: Map<number, IndexableDocument>, segments: SegmentReader[] = []): void {
  for (const op of ops) {
    for (const s of segments) s.delete(op.docid);
    if (op.kind === 'add') {
      buffer.add(op.docid, op.doc);
      model.set(op.docid, op.doc);
    } else {
      buffer.delete(op.docid);
      model.delete(op.docid);
    }
  }
}

async function withDb<T>(run: (db: SegmentDatabase, path: string) => Promise<T>): Promise<T> {
  const path = await mkdtemp(join(tmpdir(), 'tessera-segments-'));
  const db: SegmentDatabase = new ClassicLevel<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    return await run(db, path);
  } finally {
    await db.close();
    await rm(path, { recursive: true, force: true });
  }
}

describe('WriteBuffer', () => {
  test('answers like the model (updates, deletes, out-of-order docids)', () => {
    fc.assert(fc.property(opsArb, (ops) => {
      const buffer = new WriteBuffer();
      const model = new Map<number, IndexableDocument>();
      apply(ops, buffer, model);
      expect(snapshotOf([bufferView(buffer)])).toEqual(modelSnapshot(model));
      expect(buffer.liveCount).toBe(model.size);
      const stats = buffer.fieldStats('text');
      expect(stats?.sumLength ?? 0).toBe([...model.values()].reduce((s, d) => s + d.fieldLengths![0]!.length, 0));
      expect(buffer.memoryBytes()).toBeGreaterThan(0);
    }), { numRuns: 100 });
  });
});

describe('flush and SegmentReader', () => {
  test('a flushed segment answers like the write buffer', async () => {
    await fc.assert(fc.asyncProperty(opsArb, async (ops) => {
      const buffer = new WriteBuffer();
      const model = new Map<number, IndexableDocument>();
      apply(ops, buffer, model);
      buffer.freeze();
      const reader = new SegmentReader(1, await flushWriteBuffer(buffer));
      expect(reader.docCount).toBe(model.size);
      expect(snapshotOf([segmentView(reader)])).toEqual(modelSnapshot(model));
      expect(reader.fieldStats('text')?.sumLength ?? 0).toBe(buffer.fieldStats('text')?.sumLength ?? 0);
    }), { numRuns: 60 });
  });

  test('term lookups and prefix iteration match a sorted array', async () => {
    await fc.assert(fc.asyncProperty(fc.uniqueArray(fc.string({ unit: 'grapheme', maxLength: 6 }), { minLength: 0, maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 2 }), async (terms, prefix) => {
      const buffer = new WriteBuffer();
      buffer.add(1, { terms, positions: terms.map(() => NO_TOKEN_POSITION) });
      const reader = new SegmentReader(1, await flushWriteBuffer(buffer));
      const sorted = [...terms].sort(compareCodePoints);
      for (const term of sorted) expect(reader.termInfo(term)?.df).toBe(1);
      expect(reader.termInfo(`${prefix}\u{10FFFF}`)).toBe(terms.includes(`${prefix}\u{10FFFF}`) ? reader.termInfo(`${prefix}\u{10FFFF}`) : null);
      const got: string[] = [];
      for (const it = reader.terms(prefix); it.next();) got.push(it.term());
      expect(got).toEqual(sorted.filter((t) => t.startsWith(prefix)));
      if (!terms.includes(prefix)) expect(reader.termInfo(prefix)).toBeNull();
    }), { numRuns: 100 });
  });
});

describe('sparse norms and doc values', () => {
  /**
   * Docs `from`..`to`, each with `text` (length 1) and, for those `rare` gives a length, `rare` of that length, the
   * number (slot 1) and the string (slot 2) of that length.
   */
  async function segment(id: number, from: number, to: number, rare: (docid: number) => number): Promise<SegmentReader> {
    const buffer = new WriteBuffer();
    for (let docid = from; docid <= to; docid++) {
      const length = rare(docid);
      buffer.add(docid, length === 0 ? { terms: ['text.Sa'], positions: [0], fieldLengths: [{ field: 'text', length: 1 }] } : {
        terms: ['text.Sa'], positions: [0], fieldLengths: [{ field: 'text', length: 1 }, { field: 'rare', length }],
        numbers: [{ slot: 1, values: [length] }], strings: [{ slot: 2, values: [`s${length}`] }],
      });
    }
    return new SegmentReader(id, await flushWriteBuffer(buffer));
  }
  /** Per ordinal: the rare field's length, number and string, as the reader answers them (0, NaN, null when absent). */
  function rareValues(reader: SegmentReader): Array<[number, number, string | null]> {
    const norms = reader.fieldNorms('rare')!;
    const numbers = reader.numericColumn(1)!;
    const strings = reader.stringColumn(2)!;
    return Array.from({ length: reader.docCount }, (_, o) => [norms[o]!, numbers.min[o]!, strings.valueCount(o) === 0 ? null : strings.valueAt(o, 0)]);
  }
  const expected = (length: number): [number, number, string | null] => (length === 0 ? [0, NaN, null] : [length, length, `s${length}`]);
  const everyTenth = (docid: number) => (docid % 10 === 3 ? docid : 0);

  test('a field fewer than a third of the docs have answers the same lengths, stats and values, through flush and merge', async () => {
    const sparse = await segment(1, 1, 30, everyTenth);
    expect(sparse.header.format).toBe(2);
    expect(sparse.fieldNorms('rare')).toEqual(Uint16Array.from({ length: 30 }, (_, o) => everyTenth(o + 1)));
    expect(rareValues(sparse)).toEqual(Array.from({ length: 30 }, (_, o) => expected(everyTenth(o + 1))));
    expect(sparse.fieldStats('rare')).toEqual({ docCount: 3, sumLength: 3 + 13 + 23 });
    expect(sparse.fieldNorms('text')).toEqual(new Uint16Array(30).fill(1));
    const dense = await segment(2, 31, 40, (docid) => docid);
    expect(dense.header.format).toBe(1);
    const merged = new SegmentReader(3, await mergeSegments([sparse, dense]));
    expect(merged.fieldNorms('rare')).toEqual(Uint16Array.from({ length: 40 }, (_, o) => (o < 30 ? everyTenth(o + 1) : o + 1)));
    expect(rareValues(merged)).toEqual(Array.from({ length: 40 }, (_, o) => expected(o < 30 ? everyTenth(o + 1) : o + 1)));
    expect(merged.fieldStats('rare')).toEqual({ docCount: 13, sumLength: 39 + 31 + 32 + 33 + 34 + 35 + 36 + 37 + 38 + 39 + 40 });
  });

  test('a segment without one is written as before (format 1), and one with one is smaller than by ordinal', async () => {
    const rareEverywhere = await segment(1, 1, 300, (docid) => (docid === 7 ? 5 : 0));
    const rareNowhere = await segment(2, 1, 300, () => 0);
    expect(rareNowhere.header.format).toBe(1);
    // By ordinal the field's lengths, number and string would take 300 × (2 + 8 + 4) = 4,200 bytes; sparse, one of
    // each with its ordinal, the string's dictionary and their header entries.
    expect(rareEverywhere.byteLength - rareNowhere.byteLength).toBeLessThan(400);
  });
});

describe('merge', () => {
  test('merge equals the union of the inputs minus deletions', async () => {
    await fc.assert(fc.asyncProperty(fc.array(opsArb, { minLength: 1, maxLength: 4 }), async (batches) => {
      const model = new Map<number, IndexableDocument>();
      const readers: SegmentReader[] = [];
      for (const ops of batches) {
        const buffer = new WriteBuffer();
        apply(ops, buffer, model, readers);
        readers.push(new SegmentReader(readers.length + 1, await flushWriteBuffer(buffer)));
      }
      expect(snapshotOf(readers.map(segmentView))).toEqual(modelSnapshot(model));
      const merged = new SegmentReader(99, await mergeSegments(readers));
      expect(merged.docCount).toBe(model.size);
      expect(snapshotOf([segmentView(merged)])).toEqual(modelSnapshot(model));
    }), { numRuns: 40 });
  });
});

describe('SegmentStore in LevelDB', () => {
  test('a segment is checked against the CRC-32 its manifest entry keeps: a flipped bit is store_corrupted at open, never read', async () => {
    await withDb(async (db) => {
      const model = new Map<number, IndexableDocument>();
      const [ops] = fc.sample(opsArb, { numRuns: 1, seed: 7 });
      const store = await SegmentStore.open(db);
      const buffer = new WriteBuffer();
      apply(ops!, buffer, model, store.readers);
      buffer.freeze();
      const reader = await store.addSegment(await flushWriteBuffer(buffer), ops!.length, (d) => buffer.isLive(d));
      expect((await readManifest(db)).segments[0]).toMatchObject({ id: reader.id, crc: expect.any(Number) });
      expect((await SegmentStore.open(db)).readers).toHaveLength(1);
      const chunk = (await db.get(chunkKey(reader.id, 0)))!;
      chunk[Math.floor(chunk.length / 2)] ^= 0x04;
      await db.put(chunkKey(reader.id, 0), chunk);
      await expect(SegmentStore.open(db)).rejects.toMatchObject({
        code: 'store_corrupted', status: 500, message: expect.stringContaining(`segment ${reader.id}`),
      });
    });
  });

  test('flush → reopen gives the same answers; deletions persist; merge publishes', async () => {
    await withDb(async (db) => {
      const model = new Map<number, IndexableDocument>();
      const samples = fc.sample(opsArb, { numRuns: 3, seed: 42 });
      let store = await SegmentStore.open(db);
      let seq = 0;
      for (const ops of samples) {
        const buffer = new WriteBuffer();
        apply(ops, buffer, model, store.readers);
        seq += ops.length;
        buffer.freeze();
        await store.addSegment(await flushWriteBuffer(buffer), seq, (d) => buffer.isLive(d));
      }
      const before = snapshotOf(store.readers.map(segmentView));
      expect(before).toEqual(modelSnapshot(model));
      store = await SegmentStore.open(db);
      expect(store.seq).toBe(seq);
      expect(snapshotOf(store.readers.map(segmentView))).toEqual(before);
      // Deletes reach the manifest with saveDeletions.
      const victim = [...model.keys()][0]!;
      store.delete(victim);
      model.delete(victim);
      await store.saveDeletions(seq + 1);
      store = await SegmentStore.open(db);
      expect(snapshotOf(store.readers.map(segmentView))).toEqual(modelSnapshot(model));
      // Merge all, with a delete racing the merge.
      const sources = [...store.readers];
      const snapshots = sources.map((r) => r.deleted.copy());
      const bytes = await mergeSegments(sources, snapshots);
      const racer = [...model.keys()].at(-1)!;
      store.delete(racer);
      model.delete(racer);
      await store.replaceSegments(sources, snapshots, bytes);
      expect(store.readers).toHaveLength(model.size === 0 ? 0 : 1);
      store = await SegmentStore.open(db);
      expect(store.readers.length).toBeLessThanOrEqual(1);
      expect(snapshotOf(store.readers.map(segmentView))).toEqual(modelSnapshot(model));
      const keys = await db.keys().all();
      const ids = new Set(keys.filter((k) => k[0] === 0x11).map((k) => k.readUInt32BE(1)));
      expect([...ids]).toEqual(store.readers.map((r) => r.id));
    });
  });

  test('a crash between segment write and manifest replace keeps the old manifest; orphans are removed on open', async () => {
    await withDb(async (db) => {
      const buffer = new WriteBuffer();
      buffer.add(3, tokenDocument([{ term: 'a', positions: [0] }], { fieldLengths: [{ field: 'text', length: 1 }] }));
      let store = await SegmentStore.open(db);
      await store.addSegment(await flushWriteBuffer(buffer), 7);
      const manifest = await readManifest(db);
      // The "crash": a new segment's chunks are written, the manifest is not replaced.
      const next = new WriteBuffer();
      next.add(4, tokenDocument([{ term: 'b', positions: [0] }]));
      const orphanId = manifest.nextSegmentId;
      await writeSegmentChunks(db, orphanId, await flushWriteBuffer(next));
      expect(await db.get(chunkKey(orphanId, 0))).toBeDefined();
      store = await SegmentStore.open(db);
      expect(store.orphansRemoved).toEqual([orphanId]);
      expect(await readManifest(db)).toEqual(manifest);
      expect(store.readers.map((r) => r.id)).toEqual(manifest.segments.map((s) => s.id));
      expect(store.readers[0]!.termInfo('a')?.df).toBe(1);
      expect(store.readers[0]!.termInfo('b')).toBeNull();
      expect(await db.get(chunkKey(orphanId, 0))).toBeUndefined();
    });
  });

  test('segments larger than one chunk read back intact', async () => {
    await withDb(async (db) => {
      const buffer = new WriteBuffer();
      for (let d = 1; d <= 80_000; d++) {
        buffer.add(d, tokenDocument([{ term: `unique-term-${d}`, positions: [0, 1, 2] }, { term: `common${d % 7}`, positions: [3] }], { numbers: [{ slot: 0, values: [d] }] }));
      }
      const store = await SegmentStore.open(db);
      const bytes = await flushWriteBuffer(buffer);
      expect(bytes.length).toBeGreaterThan(1024 * 1024);
      await store.addSegment(bytes, 1);
      const reopened = await SegmentStore.open(db);
      const r = reopened.readers[0]!;
      expect(Buffer.from(r.bytes).equals(Buffer.from(bytes))).toBe(true);
      expect(r.postingsIterator('common3')!.advance(29_000)).toBe(29_004);
      const into = new Bitset(r.docCount);
      expect(r.numericColumn(0)!.scanRange(100, 199.5, into)).toBe(100);
    });
  });
});

describe('TieredMergePolicy', () => {
  const seg = (id: number, mib: number, deletedDocs = 0) => ({ id, byteLength: mib * 1024 * 1024, docCount: 1000, deletedDocs });

  test('merges a full tier of similar sizes, smallest first, and skips busy segments', () => {
    const policy = new TieredMergePolicy({ segmentsPerTier: 4, mergeFactor: 4 });
    expect(policy.select([seg(1, 1), seg(2, 1), seg(3, 1)])).toEqual([]);
    expect(policy.select([seg(1, 1), seg(2, 0.5), seg(3, 1), seg(4, 1.5), seg(5, 100)])).toEqual([[2, 1, 3, 4]]);
    expect(policy.select([seg(1, 1), seg(2, 1), seg(3, 1), seg(4, 1)], new Set([2]))).toEqual([]);
  });

  test('expunges a segment with too many deletions', () => {
    const policy = new TieredMergePolicy({ deletesPctMax: 20 });
    expect(policy.select([seg(1, 50, 300), seg(2, 50, 100)])).toEqual([[1]]);
  });
});
