/**
 * The one order of sort values (API.md §9.5), used by the shards' collectors,
 * the coordinator's merge of their pages and `_search_after` cursors alike:
 * numbers before strings, strings in code point order, and documents
 * without a value (null) last in both directions.
 */
import { compareCodePoints } from '@tessera/documents';

/** A document's value for one sort key (null: none, or a key that orders nothing). */
export type SortValue = number | string | null;

/** Negative when `a` ranks before `b` under `order`. */
export function compareSortValues(a: SortValue, b: SortValue, order: 'asc' | 'desc'): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  let c: number;
  if (typeof a === 'number' && typeof b === 'number') c = a < b ? -1 : a > b ? 1 : 0;
  else if (typeof a === 'string' && typeof b === 'string') c = compareCodePoints(a, b);
  else c = typeof a === 'number' ? -1 : 1;
  return order === 'asc' ? c : -c;
}
