/**
 * Query parsing (API.md §9.3–§9.5): `_query` values and query strings into
 * one shard-independent AST (JSON- and msgpack-able: the coordinator parses
 * once and sends it to every shard), plus sorting and pagination. Every function
 * validates fully and throws only 400 TesseraErrors.
 */
import type { Query } from './ast.js';
import { parseDslIn } from './dsl.js';
import { LeafBudget, QUERY_LIMITS, type QueryLimits } from './limits.js';
import { parseQueryStringIn } from './query-string.js';

export type {
  BoolOp, CastName, LeafValue, MatchKind, Pagination, Pattern, Query, RangeEnd, ShapeName, SortKey, TextNode, TextOp,
} from './ast.js';
export { queryErrors } from './errors.js';
export { QUERY_LIMITS } from './limits.js';
export type { QueryLimits } from './limits.js';
export { parseSort, parseSortStrings, valueOrder } from './sort.js';
export { parsePagination, DEFAULT_LIMIT } from './pagination.js';
export { compareSortValues, type SortValue } from './sort-order.js';
export { cursorSortKeys, parseSearchAfter, searchAfterFor, type SearchAfter } from './cursor.js';
export type { PaginationInput } from './pagination.js';
export { parsePattern } from './text.js';

function context(limits: Partial<QueryLimits> | undefined): { limits: QueryLimits; budget: LeafBudget } {
  const merged = limits === undefined ? QUERY_LIMITS : { ...QUERY_LIMITS, ...limits };
  return { limits: merged, budget: new LeafBudget(merged.leavesMax, merged.fuzzyWordsMax) };
}

/** A `_query` body value: absent or `"*"` = all; another string = query string (§9.4); an object = DSL (§9.3). */
export function parseQuery(value: unknown, limits?: Partial<QueryLimits>): Query {
  return parseDslIn(value, context(limits));
}

/** One query string (§9.4). */
export function parseQueryString(q: string, limits?: Partial<QueryLimits>): Query {
  return parseQueryStringIn(q, context(limits));
}

/** Repeated `q`/`query` parameters, ANDed (none = all); one leaf budget for all. */
export function parseQueryStrings(qs: readonly string[], limits?: Partial<QueryLimits>): Query {
  const ctx = context(limits);
  const parts = qs.map((q) => parseQueryStringIn(q, ctx));
  if (parts.length === 0) return { kind: 'all' };
  return parts.length === 1 ? parts[0]! : { kind: 'bool', op: 'and', children: parts };
}
