/**
 * Error catalogue of query parsing. Every parse error is a 400 with a stable code:
 * `invalid_query` (the `_query` DSL), `invalid_query_string` (§9.4, message
 * ends with the offending position), `invalid_sort`, `invalid_pagination`,
 * `invalid_search_after` (a cursor that does not fit the sort), and
 * `query_too_complex` when a limit of `QUERY_LIMITS` is exceeded.
 */
import { TesseraError } from '@tessera/errors';

export const queryErrors = {
  invalidQuery: (message: string) => new TesseraError('invalid_query', 400, message),
  invalidOperator: (name: string) => new TesseraError('invalid_query', 400, `Invalid operator: ${name}`),
  /** `position` is 0-based, in UTF-16 units of the query string. */
  invalidQueryString: (message: string, position: number) =>
    new TesseraError('invalid_query_string', 400, `${message} at position ${position}`, { details: { position } }),
  invalidSort: (message: string) => new TesseraError('invalid_sort', 400, message),
  invalidPagination: (message: string) => new TesseraError('invalid_pagination', 400, message),
  invalidSearchAfter: (message: string) => new TesseraError('invalid_search_after', 400, message),
  tooComplex: (message: string) => new TesseraError('query_too_complex', 400, message),
};

/** Builds the error of one syntax (DSL text strings report `invalid_query`, query strings their position). */
export type SyntaxErrorFactory = (message: string, position: number) => Error;
