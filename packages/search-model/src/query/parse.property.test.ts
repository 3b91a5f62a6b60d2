/**
 * Hostile input: whatever the value, parsing answers a Query or throws a 400
 * TesseraError, never anything else, and the Query is plain data.
 */
import { TesseraError } from '@tessera/errors';
import fc from 'fast-check';
import { parsePagination, parseQuery, parseQueryString, parseQueryStrings, parseSort, parseSortStrings } from './index.js';

function answersOr400(run: () => unknown): void {
  let result: unknown;
  try {
    result = run();
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    expect((err as TesseraError).status).toBe(400);
    return;
  }
  expect(JSON.parse(JSON.stringify(result))).toEqual(withoutNegativeZero(result));
}

/** JSON has no -0: compare the query with -0 read as 0. */
function withoutNegativeZero(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(withoutNegativeZero);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutNegativeZero(v)]));
  }
  return value;
}

const KEYS = [
  '_and', '_or', '_not', '_and_not', '_xor', '_and_maybe', '_filter', '_elite_set', '_max', '_synonym', '_near', '_phrase',
  '_match_all', '_match_none', '_value', '_in', '_range', '_from', '_to', '_integer', '_datetime', '_year', '_text', '_point',
  '_ewkt', '_wildcard', '_partial', '_fuzzy', '_id', '_foo', 'a', 'b.c', 'name', '', '__proto__',
];

const queryString = fc.array(fc.constantFrom(
  'a', 'B', ' ', 'AND', 'or', 'XOR', 'maybe', 'NOT', '!', '&', '|', '(', ')', '"', "'", ':', 'f:', '*', '**', '~', '~3', '..',
  '[', ']', '1', '-', '+', '\\', 'é', '\u2019',
), { maxLength: 40 }).map((parts) => parts.join(''));

const dslValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('*', 'a b', '"x y"', 'cat*', 'a~', '1..2', '[..3]', '', 'a OR (b', 5, -1.5, true, null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 3 }),
  ),
})).value;

describe('parsing hostile input', () => {
  it('query strings: random strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (s) => answersOr400(() => parseQueryString(s))), { numRuns: 3000 });
  });

  it('query strings: operator soup', () => {
    fc.assert(fc.property(fc.array(queryString, { minLength: 1, maxLength: 3 }), (qs) => answersOr400(() => parseQueryStrings(qs))), { numRuns: 5000 });
  });

  it('DSL: random JSON values', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => answersOr400(() => parseQuery(v))), { numRuns: 2000 });
  });

  it('DSL: operator-shaped values', () => {
    fc.assert(fc.property(dslValue, (v) => answersOr400(() => parseQuery(v))), { numRuns: 5000 });
  });

  it('sort and pagination: random values', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.array(fc.string(), { maxLength: 3 }), fc.option(fc.string(), { nil: undefined }), (v, strings, metric) => {
      answersOr400(() => parseSort(v));
      answersOr400(() => parseSortStrings(strings, metric));
      answersOr400(() => parsePagination({ _offset: v, _limit: strings[0] }));
    }), { numRuns: 2000 });
  });
});
