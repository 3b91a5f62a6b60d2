import { mergePage, type ShardHit } from './merge.js';

const hit = (id: string, sortValue: string | null, shard: number): ShardHit =>
  ({ id, docid: 1, version: 1, body: {}, score: 0, sortValues: [sortValue], index: '/i/', shard });

describe('mergePage', () => {
  it('orders string sort values and IDs by code point, as the shards sort them (not by UTF-16 unit)', () => {
    // U+1F600 is past U+FF5E in code points; its first UTF-16 unit (0xD83D) is below 0xFF5E.
    const emoji = '\u{1F600}';
    const fullwidthTilde = '\uFF5E';
    const page = mergePage([[hit('a', emoji, 1)], [hit('b', fullwidthTilde, 2)], [hit('c', null, 3)]], ['asc'], 0, 10);
    expect(page.map((h) => h.id)).toEqual(['b', 'a', 'c']);
    const descending = mergePage([[hit('a', emoji, 1)], [hit('b', fullwidthTilde, 2)]], ['desc'], 0, 10);
    expect(descending.map((h) => h.id)).toEqual(['a', 'b']);
    const byId = mergePage([[hit(emoji, 'x', 1)], [hit(fullwidthTilde, 'x', 2)]], ['asc'], 0, 10);
    expect(byId.map((h) => h.id)).toEqual([fullwidthTilde, emoji]);
  });
});
