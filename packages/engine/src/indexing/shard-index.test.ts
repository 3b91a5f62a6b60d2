import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ClassicLevel } from 'classic-level';
import fc from 'fast-check';
import { createSchema, fieldSpec } from '@tessera/schema';
import type { OplogEntry } from '../documents/types.js';
import { NO_MORE_DOCS } from '../postings/constants.js';
import type { SegmentDatabase } from '../segments/segment-store.js';
import { idTerm } from './document-terms.js';
import type { SearchReader } from '../search/index.js';
import { ShardIndex, type ShardIndexOptions } from './shard-index.js';

const schema = createSchema({
  section: { _type: 'keyword' },
  words: { _type: 'text', _language: 'en' },
  size: { _type: 'integer' },
});
const SIZE_SLOT = fieldSpec(schema, 'size')!.slot;
const SECTIONS = ['games', 'net', 'libs'];
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'running'];

interface Body { section: string; words: string; size: number }

/** Live docids of `term` over all readers; throws when a docid is live twice. */
function liveDocids(readers: readonly SearchReader[], term: string): number[] {
  const out: number[] = [];
  for (const reader of readers) {
    const cursor = reader.postingsIterator(term);
    if (cursor === null) continue;
    for (let d = cursor.next(); d !== NO_MORE_DOCS; d = cursor.next()) if (reader.isLiveOrdinal(cursor.ordinal)) out.push(d);
  }
  out.sort((a, b) => a - b);
  for (let i = 1; i < out.length; i++) if (out[i] === out[i - 1]) throw new Error(`docid ${out[i]} live twice for ${term}`);
  return out;
}

function isLive(reader: SearchReader, docid: number): boolean {
  const ordinal = reader.ordinalOf(docid);
  return ordinal >= 0 && reader.isLiveOrdinal(ordinal);
}

/** Every check the oracle makes: postings of each term, sizes in the values column, live counts. */
function expectMatches(index: ShardIndex, model: Map<number, Body>): void {
  const readers = index.readers();
  const expected = (pred: (b: Body) => boolean): number[] => [...model].filter(([, b]) => pred(b)).map(([d]) => d).sort((a, b) => a - b);
  for (const s of SECTIONS) expect(liveDocids(readers, `section.K${s}`)).toEqual(expected((b) => b.section === s));
  for (const w of WORDS) expect(liveDocids(readers, `words.S${w}`)).toEqual(expected((b) => b.words.split(' ').includes(w)));
  expect(liveDocids(readers, 'Zwords.Srun')).toEqual(expected((b) => b.words.split(' ').includes('running')));
  expect(readers.reduce((n, r) => n + r.liveCount, 0)).toBe(model.size);
  for (const [docid, body] of model) {
    expect(liveDocids(readers, idTerm(schema, `d${docid}`))).toEqual([docid]);
    const holders = readers.filter((r) => isLive(r, docid));
    expect(holders.length).toBe(1);
    const reader = holders[0]!;
    expect(reader.numericColumn(SIZE_SLOT)!.valueAt(reader.ordinalOf(docid), 0)).toBe(body.size);
  }
}

type Op = { kind: 'put'; docid: number; body: Body } | { kind: 'delete'; docid: number } | { kind: 'tick'; turns: number };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({
    kind: fc.constant('put' as const),
    docid: fc.integer({ min: 1, max: 40 }),
    body: fc.record({
      section: fc.constantFrom(...SECTIONS),
      words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }).map((w) => w.join(' ')),
      size: fc.integer({ min: -1000, max: 100000 }),
    }),
  }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), docid: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tick' as const), turns: fc.integer({ min: 1, max: 20 }) }) },
);

/** A fresh database; every index opened through `open` is closed before the database, even when the test fails. */
async function withDb<T>(fn: (db: SegmentDatabase, open: (options?: ShardIndexOptions) => Promise<ShardIndex>) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-index-'));
  const db: SegmentDatabase = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  const opened: ShardIndex[] = [];
  const open = async (options?: ShardIndexOptions): Promise<ShardIndex> => {
    const index = await ShardIndex.open(db, options);
    opened.push(index);
    return index;
  };
  try {
    return await fn(db, open);
  } finally {
    for (const index of opened) await index.close();
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Small enough to flush every few docs and merge every couple of flushes. */
const TINY = { writeBufferBytesMax: 6 * 1024, mergePolicy: { segmentsPerTier: 2, mergeFactor: 2, floorBytes: 1024 * 1024 } };

describe('ShardIndex', () => {
  test('random puts, updates and deletes: postings hold exactly the live docids, across flushes, merges, reopen and replay', async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 120 }), fc.boolean(), async (ops, flushBeforeClose) => {
      await withDb(async (db, open) => {
        const model = new Map<number, Body>();
        const log: OplogEntry[] = [];
        let index = await open(TINY);
        let seq = 0;
        for (const op of ops) {
          if (op.kind === 'tick') {
            for (let i = 0; i < op.turns; i++) await nextTurn();
            expectMatches(index, model);
            continue;
          }
          seq++;
          const id = `d${op.docid}`;
          if (op.kind === 'put') {
            model.set(op.docid, op.body);
            log.push({ seq, id, docid: op.docid, version: seq, op: 'put', body: { ...op.body } });
            index.apply({ seq, docid: op.docid, id, body: op.body, version: seq }, schema);
          } else {
            model.delete(op.docid);
            log.push({ seq, id, docid: op.docid, version: seq, op: 'delete' });
            index.apply({ seq, docid: op.docid, id, body: null }, schema);
          }
        }
        expectMatches(index, model);
        expect(index.appliedSeq).toBe(seq);
        if (flushBeforeClose) {
          await index.flush();
          expect(index.persistedSeq).toBe(seq);
        }
        await index.close();
        expectMatches(index, model);

        // Reopen: the manifest's segments plus a replay of the op-log tail give the same index.
        index = await open(TINY);
        expect(index.appliedSeq).toBeLessThanOrEqual(seq);
        index.replay(log.filter((e) => e.seq > index.persistedSeq), schema);
        expect(index.appliedSeq).toBe(seq);
        expectMatches(index, model);
        // Replaying entries already applied changes nothing.
        index.replay(log, schema);
        expectMatches(index, model);
        await index.flush();
        await index.close();
        expect(index.metrics().flushFailures + index.metrics().mergeFailures).toBe(0);
      });
    }), { numRuns: 40 });
  });

  test('flushes and merges happen, and deletes during a merge reach the merged segment', async () => {
    await withDb(async (db, open) => {
      const index = await open(TINY);
      const model = new Map<number, Body>();
      let seq = 0;
      for (let round = 0; round < 30; round++) {
        for (let docid = 1; docid <= 60; docid++) {
          seq++;
          if ((docid + round) % 7 === 0) {
            model.delete(docid);
            index.apply({ seq, docid, id: `d${docid}`, body: null }, schema);
          } else {
            const body = { section: SECTIONS[(docid + round) % 3]!, words: `${WORDS[docid % 5]} ${WORDS[round % 5]}`, size: docid * 100 + round };
            model.set(docid, body);
            index.apply({ seq, docid, id: `d${docid}`, body }, schema);
          }
        }
        await nextTurn();
        expectMatches(index, model);
      }
      await index.flush();
      await index.close();
      const m = index.metrics();
      expect(m.flushes).toBeGreaterThan(10);
      expect(m.merges).toBeGreaterThan(3);
      expect(m.persistedSeq).toBe(seq);
      expectMatches(index, model);
      const reopened = await open(TINY);
      expect(reopened.appliedSeq).toBe(seq);
      expectMatches(reopened, model);
      const docsWithWords = reopened.readers().reduce((n, r) => n + (r.fieldStats('words.')?.docCount ?? 0), 0);
      expect(docsWithWords).toBeGreaterThanOrEqual(model.size);
      await reopened.close();
    });
  });

  test('deletes made while a manifest is being written (flush or merge publish) are not lost', async () => {
    await withDb(async (db, open) => {
      const index = await open(TINY);
      const model = new Map<number, Body>();
      let seq = 0;
      const put = (docid: number): void => {
        const body = { section: 'games', words: 'alpha beta gamma', size: docid };
        model.set(docid, body);
        index.apply({ seq: ++seq, docid, id: `d${docid}`, body }, schema);
      };
      const realPut = db.put.bind(db);
      let rng = 12345;
      // Every manifest put (prefix 0x10) first deletes a few live docs (picked by a fixed LCG): the deletes land
      // after the store's own carry-over checks and before the new segment list is adopted here.
      (db as unknown as { put: typeof db.put }).put = ((key: Buffer, value: Buffer, options?: object) => {
        if (key[0] === 0x10) {
          const live = [...model.keys()];
          for (let k = 0; k < 3 && live.length > 0; k++) {
            rng = (rng * 1103515245 + 12345) % 2147483648;
            const victim = live.splice(rng % live.length, 1)[0]!;
            model.delete(victim);
            index.apply({ seq: ++seq, docid: victim, id: `d${victim}`, body: null }, schema);
          }
        }
        return realPut(key, value, options as never);
      }) as typeof db.put;
      for (let docid = 1; docid <= 400; docid++) {
        put(docid);
        if (docid % 10 === 0) await nextTurn();
      }
      await index.flush();
      await index.close();
      (db as unknown as { put: typeof db.put }).put = realPut;
      expect(index.metrics().merges).toBeGreaterThan(0);
      expectMatches(index, model);
    });
  });

  test('a failing flush keeps the frozen buffer searchable and is retried', async () => {
    await withDb(async (db, open) => {
      const errors: string[] = [];
      const index = await open({ ...TINY, retryMs: 5, onBackgroundError: (_e, task) => errors.push(task) });
      const realBatch = db.batch.bind(db);
      let failures = 3;
      // Segment chunks are written in batches: fail the first few.
      (db as unknown as { batch: () => unknown }).batch = () => {
        if (failures > 0) {
          failures--;
          throw new Error('disk full');
        }
        return realBatch();
      };
      const model = new Map<number, Body>();
      for (let docid = 1; docid <= 40; docid++) {
        const body = { section: 'net', words: 'alpha beta gamma delta', size: docid };
        model.set(docid, body);
        index.apply({ seq: docid, docid, id: `d${docid}`, body }, schema);
      }
      expectMatches(index, model);
      await index.flush();
      expect(errors.filter((t) => t === 'flush').length).toBe(3);
      expect(index.metrics().flushFailures).toBe(3);
      expect(index.metrics().frozenBuffers).toBe(0);
      expect(index.lastError).toBeNull();
      expectMatches(index, model);
      (db as unknown as { batch: unknown }).batch = realBatch;
      await index.close();
    });
  });

  test('admit holds writes back while replayEntriesMax changes are unpersisted and a flush runs, until it lands', async () => {
    await withDb(async (_db, open) => {
      const index = await open({ writeBufferOpsMax: 10, replayEntriesMax: 20, idleFlushMs: 0 });
      const put = (seq: number): void => {
        index.apply({ seq, docid: seq, id: `d${seq}`, body: { section: 'net', words: 'alpha', size: seq } }, schema);
      };
      for (let seq = 1; seq <= 19; seq++) put(seq);
      // 19 unpersisted (one buffer flushing, one filling): under the bound.
      expect(index.unpersistedEntries).toBe(19);
      expect(index.admit()).toBeUndefined();
      put(20);
      expect(index.unpersistedEntries).toBe(20);
      const held = index.admit();
      expect(held).toBeInstanceOf(Promise);
      expect(index.metrics().writeHolds).toBe(1);
      await held;
      expect(index.persistedSeq).toBeGreaterThanOrEqual(10);
      for (let again = index.admit(); again !== undefined; again = index.admit()) await again;
      expect(index.unpersistedEntries).toBeLessThan(20);
      await index.flush();
      expect(index.unpersistedEntries).toBe(0);
      expect(index.admit()).toBeUndefined();
    });
  });

  test('admit does not hold writes while the flush keeps failing (readiness reports it instead)', async () => {
    await withDb(async (db, open) => {
      const index = await open({ writeBufferOpsMax: 10, replayEntriesMax: 10, idleFlushMs: 0, retryMs: 60_000 });
      const realBatch = db.batch.bind(db);
      (db as unknown as { batch: () => unknown }).batch = () => {
        throw new Error('disk full');
      };
      try {
        for (let seq = 1; seq <= 10; seq++) index.apply({ seq, docid: seq, id: `d${seq}`, body: { section: 'net', words: 'alpha', size: seq } }, schema);
        const deadline = Date.now() + 10_000;
        while (index.flushFailure() === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        expect(index.unpersistedEntries).toBe(10);
        expect(index.admit()).toBeUndefined();
      } finally {
        (db as unknown as { batch: unknown }).batch = realBatch;
      }
    });
  });

  test('a buffer that stops changing is flushed into a segment after idleFlushMs', async () => {
    await withDb(async (_db, open) => {
      const index = await open({ idleFlushMs: 40 });
      const model = new Map<number, Body>();
      for (let d = 1; d <= 30; d++) {
        const body = { section: SECTIONS[d % 3]!, words: WORDS[d % 5]!, size: d };
        model.set(d, body);
        index.apply({ seq: d, docid: d, id: `d${d}`, body }, schema);
      }
      expect(index.metrics().segments).toBe(0);
      const deadline = Date.now() + 5000;
      while (index.metrics().segments === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(index.metrics()).toMatchObject({ segments: 1, writeBufferDocs: 0, frozenBuffers: 0 });
      expectMatches(index, model);
      // Nothing changed since: no further flush.
      await new Promise((r) => setTimeout(r, 120));
      expect(index.metrics().flushes).toBe(1);
    });
  });

  test('documents replaced over and over do not pile up in the write buffer: it is flushed once dead versions outnumber live ones', async () => {
    await withDb(async (_db, open) => {
      // Neither the op count nor the byte budget nor idleness would flush within this test.
      const index = await open({ writeBufferOpsMax: 1_000_000, writeBufferBytesMax: 1 << 30, idleFlushMs: 0, writeBufferDeadMin: 500 });
      const model = new Map<number, Body>();
      const DOCS = 50;
      let seq = 0;
      let bytesMax = 0;
      let bytesAt500 = 0;
      for (let round = 0; round < 200; round++) {
        for (let d = 1; d <= DOCS; d++) {
          const body = { section: SECTIONS[(d + round) % 3]!, words: `${WORDS[(d + round) % 5]!} ${WORDS[round % 5]!}`, size: round };
          model.set(d, body);
          index.apply({ seq: ++seq, docid: d, id: `d${d}`, body }, schema);
          const { writeBufferBytes: bytes, frozenBuffers } = index.metrics();
          bytesMax = Math.max(bytesMax, bytes);
          if (seq === 500) bytesAt500 = bytes;
          // As flushes keep up with a steady load: a frozen buffer becomes a segment before the next writes.
          if (frozenBuffers > 0) await index.flush();
        }
      }
      await index.flush();
      // 10,000 versions of 50 documents: a flush every ~500 (when 500 are dead), so the buffer never held
      // much more than its first 500 versions (without the bound it held all 10,000).
      const m = index.metrics();
      expect(m.flushes).toBeGreaterThanOrEqual(15);
      expect(m.flushes).toBeLessThanOrEqual(21);
      expect(bytesMax).toBeLessThan(3 * bytesAt500);
      expectMatches(index, model);
      await index.close();
    });
  });

  test('apply checks seq order; a delete of an unknown docid is harmless', async () => {
    await withDb(async (db, open) => {
      const index = await open();
      index.apply({ seq: 1, docid: 5, id: 'x', body: null }, schema);
      expect(() => index.apply({ seq: 1, docid: 6, id: 'y', body: null }, schema)).toThrow(/seq/);
      expect(index.appliedSeq).toBe(1);
      await index.close();
    });
  });
});
