/**
 * `_offset`, `_limit`, `_check_at_least` (API.md §9.1): unsigned integers,
 * from a body (numbers) or query parameters (digit strings); defaults 0, 10,
 * 0; `_offset + _limit` bounded (§13), and `_offset` 0 with a cursor. `_check_at_least` is accepted and
 * never changes results (totals are exact). The coordinator reads each value
 * from its source (with that source's error) and applies this rule.
 */
import type { Pagination } from './ast.js';
import { queryErrors } from './errors.js';
import { QUERY_LIMITS, type QueryLimits } from './limits.js';

export const DEFAULT_LIMIT = 10;

const DIGITS = /^\d{1,15}$/;

function unsigned(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && DIGITS.test(value)) return Number(value);
  throw queryErrors.invalidPagination(`Invalid ${name}: expected an unsigned integer`);
}

export interface PaginationInput {
  readonly _offset?: unknown;
  readonly _limit?: unknown;
  readonly _check_at_least?: unknown;
  /** A `_search_after` cursor is given: pages start at it, so `_offset` must be 0. */
  readonly cursor?: boolean;
}

export function parsePagination(input: PaginationInput, limits: QueryLimits = QUERY_LIMITS): Pagination {
  const offset = unsigned('_offset', input._offset, 0);
  const limit = unsigned('_limit', input._limit, DEFAULT_LIMIT);
  const checkAtLeast = unsigned('_check_at_least', input._check_at_least, 0);
  if (input.cursor === true && offset !== 0) throw queryErrors.invalidPagination("_offset must be 0 with '_search_after': the cursor is the page's start");
  if (offset + limit > limits.resultWindowMax) {
    throw queryErrors.invalidPagination(`_offset + _limit must be at most ${limits.resultWindowMax}`);
  }
  return { offset, limit, checkAtLeast };
}
