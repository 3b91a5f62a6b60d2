import { Bitset } from '../values/bitset.js';
import { flushInBackground, mergeInBackground } from './background.js';
import { flushWriteBuffer } from './flush.js';
import { tokenDocument } from './indexable-document.fixture.js';
import { mergeSegments } from './merge.js';
import { SegmentReader } from './segment-reader.js';
import { WriteBuffer } from './write-buffer.js';

/** A segment of `count` docs from docid `first`, with text positions and a numeric column. */
async function segment(id: number, first: number, count: number): Promise<SegmentReader> {
  const buffer = new WriteBuffer();
  for (let d = first; d < first + count; d++) {
    buffer.add(d, tokenDocument([
      { term: `Sword${d % 7}`, positions: [0, 3] },
      { term: 'Scommon', positions: [1] },
      { term: `Q${d}`, positions: null },
    ], { numbers: [{ slot: 20, values: [d * 1.5] }], strings: [{ slot: 21, values: [`k${d % 3}`] }], fieldLengths: [{ field: '', length: 3 }] }));
  }
  buffer.freeze();
  return new SegmentReader(id, await flushWriteBuffer(buffer));
}

describe('mergeInBackground', () => {
  test('gives the bytes mergeSegments gives, deletions left out, and leaves the sources usable', async () => {
    const sources = [await segment(1, 1, 300), await segment(2, 301, 200), await segment(3, 501, 50)];
    const deleted = sources.map((s) => new Bitset(s.docCount));
    for (const o of [0, 5, 299]) deleted[0]!.add(o);
    deleted[2]!.add(49);
    const [background, inline] = await Promise.all([mergeInBackground(sources, deleted), mergeSegments(sources, deleted)]);
    expect(Buffer.from(background).equals(Buffer.from(inline))).toBe(true);
    const merged = new SegmentReader(9, background);
    expect(merged.docCount).toBe(550 - 4);
    // The sources' own bytes were copied, not moved.
    expect(sources[0]!.docCount).toBe(300);
    expect(sources[0]!.bytes.byteLength).toBeGreaterThan(0);
  });

  test('a merge that fails on the thread rejects with its error; the next one works', async () => {
    const good = await segment(1, 1, 20);
    const broken = { bytes: new Uint8Array(64), docCount: 1 } as unknown as SegmentReader;
    await expect(mergeInBackground([good, broken], [new Bitset(20), new Bitset(1)])).rejects.toThrow(/segment worker: .*segment/);
    const again = await mergeInBackground([good], [new Bitset(20)]);
    expect(new SegmentReader(2, again).docCount).toBe(20);
  });
});

describe('flushInBackground', () => {
  test('gives the bytes flushWriteBuffer gives: postings with positions, norms, numeric and string columns (multi-valued, non-ASCII), deletions, docids out of order', async () => {
    const buffer = new WriteBuffer();
    for (const d of [5, 3, 9, 1, 7, 2, 8]) {
      buffer.add(d, tokenDocument([
        { term: `Sword${d % 3}`, positions: [0, 2 + d] },
        { term: 'Scommon', positions: [1] },
        { term: `Q${d}`, positions: null },
        { term: 'Kmany', positions: null, freq: 3 },
        { term: `Ké😀${d % 2}`, positions: null },
      ], {
        numbers: [{ slot: 20, values: d % 2 === 0 ? [d, d + 0.5] : [d] }, { slot: 22, values: [d] }],
        // Multi-valued, with empty and astral values: the worker sorts these dictionaries from the packed strings.
        strings: [{ slot: 21, values: [`k${d % 3}`] }, { slot: 23, values: d % 2 === 0 ? ['', `ß${d}`, '😀'] : [`z${d}`] }],
        fieldLengths: [{ field: '', length: 70_000 + d }, { field: 'title.', length: d }],
      }));
    }
    buffer.delete(9);
    buffer.freeze();
    const [background, inline] = await Promise.all([flushInBackground(buffer), flushWriteBuffer(buffer)]);
    expect(Buffer.from(background).equals(Buffer.from(inline))).toBe(true);
    expect(new SegmentReader(1, background).docCount).toBe(6);
  });

  test('only a frozen buffer is flushed', () => {
    expect(() => flushInBackground(new WriteBuffer())).toThrow(/frozen/);
  });
});
