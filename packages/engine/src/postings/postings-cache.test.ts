import { ByteSink } from './byte-sink.js';
import { NO_MORE_DOCS } from './constants.js';
import { PostingsCache } from './postings-cache.js';
import { PostingsIterator } from './postings-iterator.js';
import { emptyTermPostingsInfo, PostingsWriter } from './postings-writer.js';

/** A list of `n` postings (docid 3i+1, freq 1 + i mod 4, positions 0..freq-1), several blocks long. */
function list(n: number) {
  const postings = new ByteSink(16);
  const positions = new ByteSink(16);
  const writer = new PostingsWriter(postings, positions);
  const info = emptyTermPostingsInfo();
  writer.startTerm(true);
  for (let i = 0; i < n; i++) {
    const freq = 1 + (i % 4);
    writer.addDoc(3 * i + 1, freq, Array.from({ length: freq }, (_, k) => k * 2), 0);
  }
  writer.finishTerm(info);
  postings.writeBytes(new Uint8Array(8));
  positions.writeBytes(new Uint8Array(8));
  return { source: { postings: postings.view(), positions: positions.view(), docidOf: null }, info };
}

function walk(it: PostingsIterator, targets: number[]): string[] {
  const out: string[] = [];
  for (const t of targets) {
    const d = it.advance(t);
    if (d === NO_MORE_DOCS) break;
    out.push(`${d}:${it.freq}:${Array.from(it.positions().subarray(0, it.freq)).join(',')}`);
    const n = it.next();
    if (n !== NO_MORE_DOCS) out.push(`${n}:${it.freq}`);
  }
  return out;
}

describe('decoded postings cache', () => {
  test('an iterator over the decoded list answers as the encoded one (next, advance, positions, blocks)', () => {
    const { source, info } = list(1000);
    const decoded = new PostingsIterator().reset(source, info).decodeAll();
    expect(decoded.docids.length).toBe(1000);
    const targets = [0, 2, 5, 130, 131, 700, 701, 1500, 2999, 2998, 3001];
    expect(walk(new PostingsIterator().reset(source, info, decoded), targets)).toEqual(walk(new PostingsIterator().reset(source, info), targets));
    const all = (it: PostingsIterator): number[] => { const out: number[] = []; for (let d = it.next(); d !== NO_MORE_DOCS; d = it.next()) out.push(d, it.freq); return out; };
    expect(all(new PostingsIterator().reset(source, info, decoded))).toEqual(all(new PostingsIterator().reset(source, info)));
    // Block-max walks: skipped blocks hand over their ordinals, read blocks report their last docid, read in place.
    const blocks = (it: PostingsIterator): Array<number | number[]> => {
      const out: Array<number | number[]> = [];
      for (let b = 0; b < it.blocks; b++) {
        if (b % 2 === 0) {
          it.skipBlock(b, (ordinals, count) => out.push(Array.from(ordinals.subarray(0, count))));
        } else {
          out.push(it.next(), it.blockLastDocid(), it.blockMaxFreq());
          while (it.inBlock) out.push(it.next(), it.freq);
        }
      }
      return out;
    };
    expect(blocks(new PostingsIterator().reset(source, info, decoded))).toEqual(blocks(new PostingsIterator().reset(source, info)));
  });

  test('evicts the least recently used lists beyond the budget and refuses a list over an eighth of it', () => {
    const entry = (n: number) => ({ ordinals: new Uint32Array(n), docids: new Uint32Array(n), freqs: new Uint32Array(n) });
    const cache = new PostingsCache(12 * 1000); // 1,000 postings
    cache.put('a', entry(100));
    cache.put('b', entry(100));
    expect(cache.get('a')).toBeDefined(); // a is now the most recent
    for (let i = 0; i < 9; i++) cache.put(`x${i}`, entry(100));
    expect(cache.bytes).toBeLessThanOrEqual(12 * 1000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    cache.put('huge', entry(200));
    expect(cache.get('huge')).toBeUndefined();
    cache.setBudget(0);
    expect(cache.bytes).toBe(0);
  });
});
