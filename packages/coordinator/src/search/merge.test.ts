import type { SearchHitReply } from '@tessera/rpc';
import { mergePage, type ShardHits } from './merge.js';

const hit = (id: string, sortValue: string | null): SearchHitReply => ({ id, docid: 1, version: 1, body: {}, score: 0, sortValues: [sortValue] });
const shard = (n: number, ...hits: SearchHitReply[]): ShardHits => ({ hits, index: '/i/', shard: n });

describe('mergePage', () => {
  it('orders string sort values and IDs by code point, as the shards sort them (not by UTF-16 unit)', () => {
    // U+1F600 is past U+FF5E in code points; its first UTF-16 unit (0xD83D) is below 0xFF5E.
    const emoji = '\u{1F600}';
    const fullwidthTilde = '\uFF5E';
    const page = mergePage([shard(1, hit('a', emoji)), shard(2, hit('b', fullwidthTilde)), shard(3, hit('c', null))], ['asc'], 0, 10);
    expect(page.map((h) => h.hit.id)).toEqual(['b', 'a', 'c']);
    const descending = mergePage([shard(1, hit('a', emoji)), shard(2, hit('b', fullwidthTilde))], ['desc'], 0, 10);
    expect(descending.map((h) => h.hit.id)).toEqual(['a', 'b']);
    const byId = mergePage([shard(1, hit(emoji, 'x')), shard(2, hit(fullwidthTilde, 'x'))], ['asc'], 0, 10);
    expect(byId.map((h) => h.hit.id)).toEqual([fullwidthTilde, emoji]);
  });

  it('pages one shard without copying or reordering its hits, and several by the merged order', () => {
    const hits = ['a', 'b', 'c', 'd'].map((id) => hit(id, null));
    const page = mergePage([shard(2, ...hits)], [], 1, 2);
    expect(page.map((h) => h.hit)).toEqual([hits[1], hits[2]]);
    expect(page[0]!.hit).toBe(hits[1]);
    expect(page.every((h) => h.shard === 2 && h.index === '/i/')).toBe(true);
    expect(mergePage([shard(1, ...hits)], [], 3, 10).map((h) => h.hit.id)).toEqual(['d']);
    expect(mergePage([shard(1, hit('c', 'x')), shard(2, hit('a', 'y'), hit('b', 'z'))], ['asc'], 1, 5).map((h) => [h.hit.id, h.shard]))
      .toEqual([['a', 2], ['b', 2]]);
  });
});
