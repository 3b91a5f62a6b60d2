import { DEFAULT_PAGE_SIZE, hitsOf, pagesAfter } from './cursor.js';
import type { Hit, SearchRequest, SearchResult } from './types.js';

/** A fake server: `n` documents sorted by _id, paged by `_search_after` = [weight, _id]. */
function fakeSearch(n: number) {
  const requests: SearchRequest[] = [];
  const fetchPage = async (request: SearchRequest): Promise<SearchResult<{ n: number }>> => {
    requests.push(request);
    const after = request._search_after === undefined ? -1 : (request._search_after[1] as number);
    const ids = Array.from({ length: n }, (_, i) => i).filter((i) => i > after).slice(0, request._limit);
    const hits: Hit<{ n: number }>[] = ids.map((i) => ({ n: i, _id: i, _version: 1, _sort: [0, i] }));
    return { hits, count: hits.length, total: n };
  };
  return { requests, fetchPage };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('pagesAfter', () => {
  it('pages with the last hit\'s _sort until a short page, each hit once, no _offset sent', async () => {
    const { requests, fetchPage } = fakeSearch(25);
    const hits = await collect(hitsOf(pagesAfter({ _query: { a: 1 }, _limit: 10 }, fetchPage)));
    expect(hits.map((h) => h._id)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(requests.map((r) => r._search_after)).toEqual([undefined, [0, 9], [0, 19]]);
    for (const r of requests) expect(r).toMatchObject({ _query: { a: 1 }, _limit: 10, _sort: '_score' });
  });

  it('an exact multiple of the page ends with one empty page, not yielded', async () => {
    const { requests, fetchPage } = fakeSearch(20);
    const pages = await collect(pagesAfter({ _limit: 10, _sort: 'n' }, fetchPage));
    expect(pages.map((p) => p.hits.length)).toEqual([10, 10]);
    expect(requests).toHaveLength(3);
    expect(requests[0]!._sort).toBe('n');
  });

  it('starts after a given cursor; the default page size; refuses _offset and bad limits', async () => {
    const { requests, fetchPage } = fakeSearch(150);
    expect((await collect(hitsOf(pagesAfter({ _search_after: [0, 139] }, fetchPage)))).map((h) => h._id)).toEqual([140, 141, 142, 143, 144, 145, 146, 147, 148, 149]);
    expect(requests[0]!._limit).toBe(DEFAULT_PAGE_SIZE);
    await expect(collect(pagesAfter({ _offset: 5 }, fetchPage))).rejects.toThrow(/_offset/);
    await expect(collect(pagesAfter({ _limit: 0 }, fetchPage))).rejects.toThrow(/_limit/);
    // `_offset: 0` is no offset: not sent.
    await collect(pagesAfter({ _offset: 0, _limit: 200 }, fetchPage));
    expect(requests[requests.length - 1]).not.toHaveProperty('_offset');
  });

  it('stops with an error when a full page has no _sort (a server without cursors)', async () => {
    const fetchPage = async (): Promise<SearchResult> => ({ hits: [{ _id: 1, _version: 1 }], count: 1, total: 5 });
    await expect(collect(pagesAfter({ _limit: 1 }, fetchPage))).rejects.toThrow(/_sort/);
  });
});
