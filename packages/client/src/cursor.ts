/**
 * Cursor paging with `_search_after` (docs/highlights-and-cursors.md): each
 * page asks for the hits ordered after the last hit of the page before, so
 * paging has no depth bound (no `_offset + _limit` window) and a page never
 * repeats or skips a hit of equal sort values.
 */
import type { Aggregations, Hit, SearchRequest, SearchResult } from './types.js';

/** Page size when the request names no `_limit`. */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * The pages of `request`, from the first on, by `_search_after`. Without a
 * `_sort` the order is relevance (`_score`, then `_id`): the first page asks
 * it explicitly so its hits carry `_sort`. A page shorter than `_limit` is
 * the last; a cursor from the caller (`_search_after`) starts after it.
 */
export async function* pagesAfter<T, A extends Aggregations>(
  request: SearchRequest<A>,
  fetchPage: (request: SearchRequest<A>) => Promise<SearchResult<T, A>>,
): AsyncGenerator<SearchResult<T, A>, void, undefined> {
  if (request._offset !== undefined && request._offset !== 0) throw new TypeError('cursor paging takes no _offset');
  const limit = request._limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit <= 0) throw new TypeError(`cursor paging needs a positive _limit, not ${limit}`);
  const base: SearchRequest<A> = { ...request, _limit: limit, _sort: request._sort ?? '_score' };
  delete base._offset;
  let after = request._search_after;
  for (;;) {
    const page = await fetchPage(after === undefined ? base : { ...base, _search_after: after });
    if (page.hits.length > 0) yield page;
    if (page.hits.length < limit) return;
    const last = page.hits[page.hits.length - 1] as Hit<T>;
    if (last._sort === undefined) throw new TypeError('the server answered hits without _sort: it does not page by cursor');
    after = last._sort;
  }
}

/** The hits of every page, one by one. */
export async function* hitsOf<T, A extends Aggregations>(pages: AsyncIterable<SearchResult<T, A>>): AsyncGenerator<Hit<T>, void, undefined> {
  for await (const page of pages) yield* page.hits;
}
