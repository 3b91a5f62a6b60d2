/**
 * Cursor paging (`_search_after`, docs/highlights-and-cursors.md): a page
 * starts strictly after the sort values of the previous page's last hit, so
 * deep paging costs one page per request and is not bounded by the
 * `_offset + _limit` window (API.md §13).
 *
 * A cursor needs a total order, so the keys a paged search sorts by are the
 * request's `_sort` keys, then relevance (unless a `_score` key is already
 * there), then `_id` ascending: the order of API.md §9.5, with its
 * tiebreaks made explicit so every shard cuts its best k by them and every
 * hit can say where it stands (its `_sort` values). A search of several
 * indexes adds the index path, which orders equal IDs across indexes.
 */
import type { SortKey } from './ast.js';
import { queryErrors } from './errors.js';
import { compareSortValues, type SortValue } from './sort-order.js';

const SCORE_KEY: SortKey = { path: '_score', order: 'asc' };
const ID_KEY: SortKey = { path: '_id', order: 'asc' };

/** The keys of a paged search: `keys`, relevance unless already there, then `_id` ascending. */
export function cursorSortKeys(keys: readonly SortKey[]): SortKey[] {
  const out = [...keys];
  if (!keys.some((k) => k.path === '_score')) out.push(SCORE_KEY);
  out.push(ID_KEY);
  return out;
}

/**
 * Where a page of one index starts: hits strictly after `values` (one per
 * cursor sort key); `inclusive`, a hit whose values all equal `values` is
 * after too (an index ordered after the cursor's, where an equal `_id` is
 * another document).
 */
export interface SearchAfter {
  readonly values: readonly SortValue[];
  readonly inclusive: boolean;
}

/**
 * A `_search_after` body value: an array of `keyCount` sort values (numbers,
 * strings or null), plus the index path when `multiIndex` — the `_sort` of
 * the previous page's last hit, as returned.
 */
export function parseSearchAfter(value: unknown, keyCount: number, multiIndex: boolean): { values: SortValue[]; index?: string } {
  const expected = keyCount + (multiIndex ? 1 : 0);
  if (!Array.isArray(value)) throw queryErrors.invalidSearchAfter("'_search_after' must be an array: the '_sort' of the last hit of the previous page");
  if (value.length !== expected) {
    throw queryErrors.invalidSearchAfter(`'_search_after' must have ${expected} values (the sort keys, relevance, _id${multiIndex ? ', the index' : ''}), not ${value.length}`);
  }
  const values = value.slice(0, keyCount).map((v: unknown, i): SortValue => {
    if (v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return v;
    throw queryErrors.invalidSearchAfter(`'_search_after' value ${i} must be a number, a string or null`);
  });
  if (values[keyCount - 1] === null) throw queryErrors.invalidSearchAfter("The last '_search_after' sort value must be an _id");
  if (!multiIndex) return { values };
  const index = value[keyCount] as unknown;
  if (typeof index !== 'string') throw queryErrors.invalidSearchAfter("The last '_search_after' value must be the index path of the hit");
  return { values, index };
}

/** The cursor an index sees: with several indexes, an index after the cursor's also takes the hit with equal values. */
export function searchAfterFor(values: readonly SortValue[], cursorIndex: string | undefined, index: string): SearchAfter {
  return { values, inclusive: cursorIndex !== undefined && compareSortValues(index, cursorIndex, 'asc') > 0 };
}
