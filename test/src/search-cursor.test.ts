/**
 * Cursor paging (`_search_after`, docs/highlights-and-cursors.md) over HTTP
 * through @tessera/client, on the embedded server and on a coordinator with
 * three nodes: paging
 * through every document of a 4-shard index, 100 at a time, with many equal
 * sort values and IDs indexed out of order (so docids do not follow IDs),
 * returns each document exactly once, in the order of one big page.
 */
import type { SearchRequest, Tessera } from '@tessera/client';
import { SERVER_KINDS, serversForSuite, type ServerKind } from './cluster-harness.js';
import { clientForSuite } from './harness.js';

const N = 2500;
const PAGE = 100;
const WORDS = ['alpha', 'beta', 'gamma', 'delta'];

/** Deterministic shuffle (a linear congruential generator): IDs arrive out of order. */
function shuffled(n: number): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  let seed = 12345;
  for (let i = n - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const group = (id: number) => id % 7;
/** 1 to 3 words: equal texts weigh alike, so relevance has ties too. */
const name = (id: number) => WORDS.slice(0, 1 + (id % 3)).join(' ') + (id % 5 === 0 ? ' alpha' : '');

interface Paged { group: number; name: string }

/** Every page of `body` from the first, each after the last hit of the one before (the client's cursor). */
async function pageThrough(client: Tessera, indexes: string[], body: SearchRequest) {
  const hits = [];
  let pages = 0;
  for await (const page of client.searchAfter<Paged>(indexes, { ...body, _limit: PAGE }).pages()) {
    pages++;
    page.hits.forEach((h, i) => expect(h['#rank']).toBe(hits.length + i));
    hits.push(...page.hits);
    expect(pages).toBeLessThanOrEqual(N / PAGE + 5);
  }
  return { hits, pages };
}

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  const client = clientForSuite(serversForSuite(kind));

  beforeAll(async () => {
    const schema = { group: { _type: 'integer' }, name: { _type: 'text' } };
    await client().createIndex('paged', { _settings: { number_of_shards: 4 }, _schema: schema });
    await client().createIndex('paged2', { _settings: { number_of_shards: 2 }, _schema: schema });
    const documents = (ids: number[]) => ids.map((id) => ({ _id: id, group: group(id), name: name(id) }));
    expect((await client().import('paged', documents(shuffled(N)), { batchSize: N })).indexed).toBe(N);
    // The same IDs in a second index: equal IDs are other documents there.
    expect((await client().import('paged2', documents(shuffled(300)))).indexed).toBe(300);
  }, 120_000);

  it('pages through every document of a sort with equal values exactly once, by value then _id', async () => {
    const { hits, pages } = await pageThrough(client(), ['paged'], { _sort: '-group' });
    expect(pages).toBe(N / PAGE);
    const expected = Array.from({ length: N }, (_, i) => i).sort((a, b) => group(b) - group(a) || a - b);
    expect(hits.map((h) => h._id)).toEqual(expected);
    // Each hit's place: its sort value, its weight, its _id.
    expect(hits[0]!._sort).toEqual([6, 0, 6]);
    expect(hits[N - 1]!._sort).toEqual([0, 0, expected[N - 1]]);
  }, 120_000);

  it('pages by relevance (weight, then _id) in the order of one big page', async () => {
    const query = { name: 'alpha gamma' };
    const all = await client().search<Paged>('paged', { _query: query, _sort: '_score', _limit: N });
    const { hits } = await pageThrough(client(), ['paged'], { _query: query, _sort: '_score' });
    expect(hits.length).toBe(all.total);
    expect(hits.map((h) => h._id)).toEqual(all.hits.map((h) => h._id));
    expect(new Set(hits.map((h) => h._id)).size).toBe(hits.length);
    // Weights descend; equal weights go by _id.
    for (let i = 1; i < hits.length; i++) {
      const [w0, id0] = hits[i - 1]!._sort as [number, number];
      const [w1, id1] = hits[i]!._sort as [number, number];
      expect(w0 > w1 || (w0 === w1 && id0 < id1)).toBe(true);
    }
    // Without `_sort`, a cursor pages by relevance too.
    const next = await client().search<Paged>('paged', { _query: query, _limit: 5, _search_after: hits[99]!._sort! });
    expect(next.hits.map((h) => h._id)).toEqual(hits.slice(100, 105).map((h) => h._id));
  }, 120_000);

  it('pages across several indexes, equal _ids ordered by index', async () => {
    const { hits } = await pageThrough(client(), ['paged', 'paged2'], { _sort: 'group' });
    expect(hits.length).toBe(N + 300);
    const keys = hits.map((h) => `${h['#index']}${h._id}`);
    expect(new Set(keys).size).toBe(N + 300);
    const expected = [...Array.from({ length: N }, (_, id) => ({ id, index: '/paged/' })), ...Array.from({ length: 300 }, (_, id) => ({ id, index: '/paged2/' }))]
      .sort((a, b) => group(a.id) - group(b.id) || a.id - b.id || (a.index < b.index ? -1 : 1));
    expect(keys).toEqual(expected.map((e) => `${e.index}${e.id}`));
    expect(hits[0]!._sort).toEqual([0, 0, 0, '/paged/']);
  }, 120_000);

  it('rejects a cursor with an offset, of the wrong length or type (400), and keeps the page window for _limit alone', async () => {
    await expect(client().search('paged', { _sort: 'group', _offset: 10, _search_after: [0, 0, 0] }))
      .rejects.toMatchObject({ status: 400, code: 'invalid_pagination' });
    // Malformed cursors, sent as they are (the types would refuse them).
    for (const bad of ['x', [0, 0], [0, 0, 0, 0], [0, {}, 0], [0, 0, null]] as unknown as SearchRequest['_search_after'][]) {
      await expect(client().search('paged', { _sort: 'group', _search_after: bad }))
        .rejects.toMatchObject({ status: 400, type: 'Bad Request', code: 'invalid_search_after' });
    }
    await expect(client().search(['paged', 'paged2'], { _sort: 'group', _search_after: [0, 0, 0] })).rejects.toMatchObject({ code: 'invalid_search_after' });
    // The window bounds one page, not how deep a cursor goes.
    const deep = await client().search('paged', { _sort: 'group', _search_after: [6, 0, 2400], _limit: 100_000 });
    expect(deep.hits.map((h) => h._id)).toEqual([2407, 2414, 2421, 2428, 2435, 2442, 2449, 2456, 2463, 2470, 2477, 2484, 2491, 2498]);
    expect(deep.hits[0]!['#rank']).toBe(N - 14);
    expect(deep.total).toBe(N);
    await expect(client().search('paged', { _sort: 'group', _search_after: [6, 0, 2400], _limit: 100_001 })).rejects.toMatchObject({ status: 400 });
  });
});
