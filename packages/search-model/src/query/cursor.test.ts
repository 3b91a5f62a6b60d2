import { cursorSortKeys, parseSearchAfter, searchAfterFor } from './cursor.js';
import { parsePagination } from './pagination.js';
import { parseSort, valueOrder } from './sort.js';

describe('cursor paging', () => {
  it('makes relevance and _id explicit tiebreaks, relevance once', () => {
    expect(cursorSortKeys([])).toEqual([{ path: '_score', order: 'asc' }, { path: '_id', order: 'asc' }]);
    expect(cursorSortKeys(parseSort(['-n', 'tag']))).toEqual([
      { path: 'n', order: 'desc' }, { path: 'tag', order: 'asc' }, { path: '_score', order: 'asc' }, { path: '_id', order: 'asc' },
    ]);
    expect(cursorSortKeys(parseSort('_score'))).toEqual([{ path: '_score', order: 'asc' }, { path: '_id', order: 'asc' }]);
  });

  it('orders `_score` values best first: ascending relevance is descending weight', () => {
    expect(parseSort(['_score', '-_score', 'n', '-n']).map(valueOrder)).toEqual(['desc', 'asc', 'asc', 'desc']);
  });

  it('takes the `_sort` of a hit back, with the index path when several indexes are searched', () => {
    expect(parseSearchAfter([3, null, 'x', 0.5, 17], 5, false)).toEqual({ values: [3, null, 'x', 0.5, 17] });
    expect(parseSearchAfter([3, 0, 'doc', '/a/'], 3, true)).toEqual({ values: [3, 0, 'doc'], index: '/a/' });
  });

  it('rejects what is not such a cursor with invalid_search_after', () => {
    for (const [value, keys, multi] of [
      ['x', 2, false], [{}, 2, false], [[1], 2, false], [[1, 2, 3], 2, false], [[1, 2], 2, true],
      [[{}, 2], 2, false], [[true, 2], 2, false], [[Number.NaN, 2], 2, false], [[1, null], 2, false], [[1, 2, 3], 2, true],
    ] as Array<[unknown, number, boolean]>) {
      expect(() => parseSearchAfter(value, keys, multi)).toThrow(expect.objectContaining({ code: 'invalid_search_after', status: 400 }));
    }
  });

  it('lets a later index take the document with the cursor\'s values (another document of the same _id)', () => {
    expect(searchAfterFor([1, 2], undefined, '/a/')).toEqual({ values: [1, 2], inclusive: false });
    expect(searchAfterFor([1, 2], '/b/', '/a/').inclusive).toBe(false);
    expect(searchAfterFor([1, 2], '/b/', '/b/').inclusive).toBe(false);
    expect(searchAfterFor([1, 2], '/b/', '/c/').inclusive).toBe(true);
  });

  it('wants _offset 0 beside a cursor, and bounds only the page by the window', () => {
    expect(() => parsePagination({ _offset: 1, cursor: true })).toThrow(expect.objectContaining({ code: 'invalid_pagination' }));
    expect(parsePagination({ _limit: 100_000, cursor: true })).toEqual({ offset: 0, limit: 100_000, checkAtLeast: 0 });
    expect(() => parsePagination({ _limit: 100_001, cursor: true })).toThrow(expect.objectContaining({ code: 'invalid_pagination' }));
  });
});
