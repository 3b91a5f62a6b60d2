import { Bitset } from '../values/bitset.js';
import { mergeInBackground } from './background.js';
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
