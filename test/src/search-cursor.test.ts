/**
 * Cursor paging (`_search_after`, docs/highlights-and-cursors.md) over HTTP,
 * on the embedded server and on a coordinator with three nodes: paging
 * through every document of a 4-shard index, 100 at a time, with many equal
 * sort values and IDs indexed out of order (so docids do not follow IDs),
 * returns each document exactly once, in the order of one big page.
 */
import { SERVER_KINDS, serversForSuite, type ServerKind } from './cluster-harness.js';
import { call, type Server } from './harness.js';

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

interface Hit { _id: number | string; _sort: unknown[]; '#rank': number; '#index'?: string }

/** Every page of `body` from the first, each after the last hit of the one before. */
async function pageThrough(server: Server, path: string, body: Record<string, unknown>): Promise<{ hits: Hit[]; pages: number }> {
  const hits: Hit[] = [];
  let after: unknown[] | undefined;
  let pages = 0;
  for (;;) {
    const r = await call(server, 'SEARCH', path, { ...body, _limit: PAGE, ...(after === undefined ? {} : { _search_after: after }) });
    expect(r.status).toBe(200);
    const page = r.json.hits as Hit[];
    if (page.length === 0) return { hits, pages };
    pages++;
    page.forEach((h, i) => expect(h['#rank']).toBe(hits.length + i));
    hits.push(...page);
    after = page[page.length - 1]!._sort;
    expect(pages).toBeLessThanOrEqual(N / PAGE + 5);
  }
}

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  const server = serversForSuite(kind);

  beforeAll(async () => {
    const schema = { group: { _type: 'integer' }, name: { _type: 'text' } };
    expect((await call(server(), 'PUT', '/paged/', { _settings: { number_of_shards: 4 }, _schema: schema })).status).toBe(200);
    expect((await call(server(), 'PUT', '/paged2/', { _settings: { number_of_shards: 2 }, _schema: schema })).status).toBe(200);
    const ndjson = (ids: number[]) => ids.map((id) => JSON.stringify({ _id: id, group: group(id), name: name(id) })).join('\n');
    const restore = await call(server(), 'RESTORE', '/paged/', ndjson(shuffled(N)), { 'content-type': 'application/x-ndjson' });
    expect(restore.json.indexed).toBe(N);
    // The same IDs in a second index: equal IDs are other documents there.
    const second = await call(server(), 'RESTORE', '/paged2/', ndjson(shuffled(300)), { 'content-type': 'application/x-ndjson' });
    expect(second.json.indexed).toBe(300);
  }, 120_000);

  it('pages through every document of a sort with equal values exactly once, by value then _id', async () => {
    const { hits, pages } = await pageThrough(server(), '/paged/', { _sort: '-group' });
    expect(pages).toBe(N / PAGE);
    const expected = Array.from({ length: N }, (_, i) => i).sort((a, b) => group(b) - group(a) || a - b);
    expect(hits.map((h) => h._id)).toEqual(expected);
    // Each hit's place: its sort value, its weight, its _id.
    expect(hits[0]!._sort).toEqual([6, 0, 6]);
    expect(hits[N - 1]!._sort).toEqual([0, 0, expected[N - 1]]);
  }, 120_000);

  it('pages by relevance (weight, then _id) in the order of one big page', async () => {
    const query = { name: 'alpha gamma' };
    const all = await call(server(), 'SEARCH', '/paged/', { _query: query, _sort: '_score', _limit: N });
    expect(all.status).toBe(200);
    const { hits } = await pageThrough(server(), '/paged/', { _query: query, _sort: '_score' });
    expect(hits.length).toBe(all.json.total);
    expect(hits.map((h) => h._id)).toEqual(all.json.hits.map((h: Hit) => h._id));
    expect(new Set(hits.map((h) => h._id)).size).toBe(hits.length);
    // Weights descend; equal weights go by _id.
    for (let i = 1; i < hits.length; i++) {
      const [w0, id0] = hits[i - 1]!._sort as [number, number];
      const [w1, id1] = hits[i]!._sort as [number, number];
      expect(w0 > w1 || (w0 === w1 && id0 < id1)).toBe(true);
    }
    // Without `_sort`, a cursor pages by relevance too.
    const next = await call(server(), 'SEARCH', '/paged/', { _query: query, _limit: 5, _search_after: hits[99]!._sort });
    expect(next.json.hits.map((h: Hit) => h._id)).toEqual(hits.slice(100, 105).map((h) => h._id));
  }, 120_000);

  it('pages across several indexes, equal _ids ordered by index', async () => {
    const { hits } = await pageThrough(server(), '/paged,paged2/', { _sort: 'group' });
    expect(hits.length).toBe(N + 300);
    const keys = hits.map((h) => `${h['#index']}${h._id}`);
    expect(new Set(keys).size).toBe(N + 300);
    const expected = [...Array.from({ length: N }, (_, id) => ({ id, index: '/paged/' })), ...Array.from({ length: 300 }, (_, id) => ({ id, index: '/paged2/' }))]
      .sort((a, b) => group(a.id) - group(b.id) || a.id - b.id || (a.index < b.index ? -1 : 1));
    expect(keys).toEqual(expected.map((e) => `${e.index}${e.id}`));
    expect(hits[0]!._sort).toEqual([0, 0, 0, '/paged/']);
  }, 120_000);

  it('rejects a cursor with an offset, of the wrong length or type (400), and keeps the page window for _limit alone', async () => {
    const withOffset = await call(server(), 'SEARCH', '/paged/', { _sort: 'group', _offset: 10, _search_after: [0, 0, 0] });
    expect(withOffset.status).toBe(400);
    expect(withOffset.json).toMatchObject({ status: 400, code: 'invalid_pagination' });
    for (const bad of ['x', [0, 0], [0, 0, 0, 0], [0, {}, 0], [0, 0, null]]) {
      const r = await call(server(), 'SEARCH', '/paged/', { _sort: 'group', _search_after: bad });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ status: 400, type: 'Bad Request', code: 'invalid_search_after' });
    }
    const several = await call(server(), 'SEARCH', '/paged,paged2/', { _sort: 'group', _search_after: [0, 0, 0] });
    expect(several.json.code).toBe('invalid_search_after');
    // The window bounds one page, not how deep a cursor goes.
    const deep = await call(server(), 'SEARCH', '/paged/', { _sort: 'group', _search_after: [6, 0, 2400], _limit: 100_000 });
    expect(deep.status).toBe(200);
    expect(deep.json.hits.map((h: Hit) => h._id)).toEqual([2407, 2414, 2421, 2428, 2435, 2442, 2449, 2456, 2463, 2470, 2477, 2484, 2491, 2498]);
    expect(deep.json.hits[0]['#rank']).toBe(N - 14);
    expect(deep.json.total).toBe(N);
    expect((await call(server(), 'SEARCH', '/paged/', { _sort: 'group', _search_after: [6, 0, 2400], _limit: 100_001 })).status).toBe(400);
  });
});
