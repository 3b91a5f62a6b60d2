import { parsePagination, parseSort, parseSortStrings } from './index.js';

function errorOf(run: () => unknown): unknown {
  try { run(); } catch (err) { return err; }
  throw new Error('no error');
}

describe('parseSort (§9.5)', () => {
  it('reads strings, objects and arrays', () => {
    expect(parseSort(undefined)).toEqual([]);
    expect(parseSort('name')).toEqual([{ path: 'name', order: 'asc' }]);
    expect(parseSort('-age')).toEqual([{ path: 'age', order: 'desc' }]);
    expect(parseSort('+a.b')).toEqual([{ path: 'a.b', order: 'asc' }]);
    expect(parseSort({ name: { _order: 'desc', _value: 'kronuz', _metric: 'leven' } }))
      .toEqual([{ path: 'name', order: 'desc', value: 'kronuz', metric: 'levenshtein' }]);
    expect(parseSort(['-_score', { age: { _value: 30 } }, '_id', '_weight']))
      .toEqual([{ path: '_score', order: 'desc' }, { path: 'age', order: 'asc', value: 30 }, { path: '_id', order: 'asc' }, { path: '_score', order: 'asc' }]);
    expect(parseSort({ a: {}, b: { _order: 'asc' } })).toEqual([{ path: 'a', order: 'asc' }, { path: 'b', order: 'asc' }]);
  });

  it('normalises every metric name', () => {
    const names: Array<[string, string]> = [
      ['levenshtein', 'levenshtein'], ['leven', 'levenshtein'], ['jarowinkler', 'jarowinkler'], ['jarow', 'jarowinkler'],
      ['sorensendice', 'sorensendice'], ['sorensen', 'sorensendice'], ['dice', 'sorensendice'], ['jaccard', 'jaccard'],
      ['lcsubstr', 'lcsubstr'], ['lcs', 'lcsubstr'], ['lcsubsequence', 'lcsubsequence'], ['lcsq', 'lcsubsequence'],
      ['soundex', 'soundex'], ['sound', 'soundex'], ['jaro', 'jaro'],
    ];
    for (const [given, canonical] of names) expect(parseSort({ f: { _value: 'x', _metric: given } })[0]!.metric).toBe(canonical);
  });

  it('rejects bad sorts with invalid_sort', () => {
    const cases: Array<[unknown, string]> = [
      [5, 'Invalid _sort: expected a string, an object or an array of them'],
      [[['a']], 'Invalid _sort: expected a string, an object or an array of them'],
      ['_foo', 'Invalid sort field: _foo'],
      ['-', 'Invalid sort field: '],
      [{ a: { _order: 'up' } }, 'Invalid _order for a: expected "asc" or "desc"'],
      [{ a: { _metric: 'hamming' } }, 'Unknown metric: hamming'],
      [{ a: { _reverse: true } }, 'Invalid sort option: _reverse'],
      [{ a: 'desc' }, 'Invalid sort for a: expected an object'],
      [{ a: { _value: null } }, 'Invalid _value for a'],
      [{}, 'Invalid _sort: empty object'],
      [Array.from({ length: 33 }, (_, i) => `f${i}`), 'More than 32 sort keys'],
    ];
    for (const [value, message] of cases) expect(errorOf(() => parseSort(value))).toMatchObject({ code: 'invalid_sort', status: 400, message });
    expect(parseSort(Array.from({ length: 32 }, (_, i) => `f${i}`))).toHaveLength(32);
  });
});

describe('parseSortStrings', () => {
  it('reads field, -field, field:ref with the metric parameter', () => {
    expect(parseSortStrings(['name', '-age', 'loc:POINT(1 2)'])).toEqual([
      { path: 'name', order: 'asc' }, { path: 'age', order: 'desc' }, { path: 'loc', order: 'asc', value: 'POINT(1 2)' },
    ]);
    expect(parseSortStrings(['-name:kronuz', 'age'], 'jarow'))
      .toEqual([{ path: 'name', order: 'desc', value: 'kronuz', metric: 'jarowinkler' }, { path: 'age', order: 'asc' }]);
    expect(errorOf(() => parseSortStrings(['a'], 'nope'))).toMatchObject({ code: 'invalid_sort', message: 'Unknown metric: nope' });
  });
});

describe('parsePagination', () => {
  it('applies defaults and reads numbers and digit strings', () => {
    expect(parsePagination({})).toEqual({ offset: 0, limit: 10, checkAtLeast: 0 });
    expect(parsePagination({ _offset: 20, _limit: 0, _check_at_least: 1000 })).toEqual({ offset: 20, limit: 0, checkAtLeast: 1000 });
    expect(parsePagination({ _offset: '5', _limit: '7' })).toEqual({ offset: 5, limit: 7, checkAtLeast: 0 });
  });

  it('bounds _offset + _limit just under and over 100,000', () => {
    expect(parsePagination({ _offset: 99_990, _limit: 10 })).toEqual({ offset: 99_990, limit: 10, checkAtLeast: 0 });
    expect(errorOf(() => parsePagination({ _offset: 99_991, _limit: 10 })))
      .toMatchObject({ code: 'invalid_pagination', status: 400, message: '_offset + _limit must be at most 100000' });
  });

  it('rejects anything but unsigned integers', () => {
    for (const bad of [-1, 1.5, '1.5', '-1', '', 'ten', null, true, Number.NaN, 2 ** 60, '1'.repeat(20)]) {
      expect(errorOf(() => parsePagination({ _limit: bad })))
        .toMatchObject({ code: 'invalid_pagination', status: 400, message: 'Invalid _limit: expected an unsigned integer' });
    }
  });
});
