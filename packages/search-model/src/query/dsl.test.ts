import type { LeafValue, Query, TextNode } from './ast.js';
import { parseQuery } from './index.js';

const exact = (w: string): TextNode => ({ kind: 'word', pattern: { match: 'exact', text: w, distance: 0 }, keepStopWords: false });
const str = (s: string, text: TextNode = exact(s)): LeafValue =>
  ({ kind: 'string', value: s, op: 'or', text, keyword: { match: 'exact', text: s, distance: 0 } });
const leaf = (path: string | null, value: LeafValue): Query => ({ kind: 'field', path: path === null ? null : path.split('.'), value });
const and = (...children: Query[]): Query => ({ kind: 'bool', op: 'and', children });

function errorOf(value: unknown): unknown {
  try { parseQuery(value); } catch (err) { return err; }
  throw new Error(`no error for ${JSON.stringify(value)}`);
}

describe('query DSL (§9.3)', () => {
  it('reads "*", absent and strings at the top', () => {
    expect(parseQuery(undefined)).toEqual({ kind: 'all' });
    expect(parseQuery('*')).toEqual({ kind: 'all' });
    expect(parseQuery('a AND b')).toEqual(and(leaf(null, str('a')), leaf(null, str('b'))));
    expect(parseQuery({})).toEqual({ kind: 'all' });
  });

  it('reads scalar leaves, ANDs keys, splits dotted keys and extends nested paths', () => {
    expect(parseQuery({ age: 30, ok: true, name: 'kronuz' }))
      .toEqual(and(leaf('age', { kind: 'scalar', value: 30 }), leaf('ok', { kind: 'scalar', value: true }), leaf('name', str('kronuz'))));
    expect(parseQuery({ 'style.clothing': '*' })).toEqual(leaf('style.clothing', { kind: 'exists' }));
    expect(parseQuery({ style: { clothing: '*' } })).toEqual(leaf('style.clothing', { kind: 'exists' }));
    expect(parseQuery({ a: { 'b.c': { d: 1 }, e: 2 } }))
      .toEqual(and(leaf('a.b.c.d', { kind: 'scalar', value: 1 }), leaf('a.e', { kind: 'scalar', value: 2 })));
    expect(parseQuery({ _id: 'abc' })).toEqual(leaf('_id', str('abc')));
  });

  it('reads a text string with its §9.3.1 syntax and the keyword pattern', () => {
    expect(parseQuery({ tags: 'dynamic cate*' })).toEqual(leaf('tags', {
      kind: 'string', value: 'dynamic cate*', op: 'or',
      text: { kind: 'bool', op: 'or', children: [exact('dynamic'), { kind: 'word', pattern: { match: 'wildcard', text: 'cate*', distance: 0 }, keepStopWords: false }] },
      keyword: { match: 'wildcard', text: 'dynamic cate*', distance: 0 },
    }));
  });

  it('reads _value, _in ranges and range strings', () => {
    expect(parseQuery({ age: { _value: 30 } })).toEqual(leaf('age', { kind: 'scalar', value: 30 }));
    expect(parseQuery({ age: { _value: '*' } })).toEqual(leaf('age', { kind: 'exists' }));
    expect(parseQuery({ age: { _in: { _range: { _from: 20, _to: 30 } } } })).toEqual(leaf('age', { kind: 'range', from: 20, to: 30 }));
    expect(parseQuery({ d: { _in: { _range: { _from: 'now-1d' } } } })).toEqual(leaf('d', { kind: 'range', from: 'now-1d', to: null }));
    expect(parseQuery({ age: { _in: '[20..30]' } })).toEqual(leaf('age', { kind: 'range', from: '20', to: '30' }));
    expect(parseQuery({ age: { _in: '20..30' } })).toEqual(leaf('age', { kind: 'range', from: '20', to: '30' }));
    expect(parseQuery({ age: { _in: '..30' } })).toEqual(leaf('age', { kind: 'range', from: null, to: '30' }));
    expect(parseQuery({ age: { _in: '20..' } })).toEqual(leaf('age', { kind: 'range', from: '20', to: null }));
  });

  it('reads casts, keeping their names', () => {
    for (const cast of ['_integer', '_positive', '_float', '_boolean', '_keyword', '_text', '_string', '_term', '_datetime', '_date', '_time', '_timedelta', '_uuid'] as const) {
      expect(parseQuery({ f: { [cast]: 1 } })).toEqual(leaf('f', { kind: 'cast', cast, value: { kind: 'scalar', value: 1 } }));
    }
    expect(parseQuery({ f: { _integer: '10' } })).toEqual(leaf('f', { kind: 'cast', cast: '_integer', value: str('10') }));
    expect(parseQuery({ d: { _datetime: { _year: 2001, _month: 5 } } }))
      .toEqual(leaf('d', { kind: 'cast', cast: '_datetime', value: { kind: 'date_parts', parts: { _year: 2001, _month: 5 } } }));
  });

  it('reads shapes, equal and within', () => {
    const circle = { _latitude: 1, _longitude: 2, _radius: 10 };
    expect(parseQuery({ loc: { _circle: circle } })).toEqual(leaf('loc', { kind: 'shape', shape: '_circle', value: circle, within: false }));
    expect(parseQuery({ loc: { _in: { _circle: circle } } })).toEqual(leaf('loc', { kind: 'shape', shape: '_circle', value: circle, within: true }));
    expect(parseQuery({ loc: { _ewkt: 'POINT(1 2)' } })).toEqual(leaf('loc', { kind: 'shape', shape: '_ewkt', value: 'POINT(1 2)', within: false }));
  });

  it('reads _wildcard, _partial, _fuzzy as suffixes', () => {
    expect(parseQuery({ n: { _wildcard: 'kro' } })).toMatchObject(leaf('n', { keyword: { match: 'wildcard', text: 'kro*', distance: 0 } } as unknown as LeafValue));
    expect(parseQuery({ n: { _partial: 'kro' } })).toMatchObject({ value: { value: 'kro**', keyword: { match: 'prefix', text: 'kro' } } });
    expect(parseQuery({ n: { _fuzzy: 'kro' } })).toMatchObject({ value: { value: 'kro~', keyword: { match: 'fuzzy', text: 'kro', distance: 2 } } });
    expect(parseQuery({ n: { _fuzzy: 'kro~1' } })).toMatchObject({ value: { keyword: { match: 'fuzzy', distance: 1 } } });
  });

  it('reads string operators with their default operator', () => {
    for (const op of ['near', 'phrase', 'elite_set', 'synonym', 'max'] as const) {
      expect(parseQuery({ t: { [`_${op}`]: 'a b' } })).toEqual(leaf('t', {
        kind: 'string', value: 'a b', op, text: { kind: 'bool', op, children: [exact('a'), exact('b')] }, keyword: { match: 'exact', text: 'a b', distance: 0 },
      }));
    }
    expect(parseQuery({ t: { _and: 'a b OR c' } })).toMatchObject({ value: {
      op: 'and',
      text: { kind: 'bool', op: 'or', children: [{ kind: 'bool', op: 'and', children: [exact('a'), exact('b')] }, exact('c')] },
    } });
    expect(parseQuery({ _or: 'x y' })).toMatchObject({ kind: 'field', path: null, value: { op: 'or' } });
  });

  it('reads every compound operator with arrays', () => {
    for (const op of ['and', 'or', 'not', 'and_not', 'xor', 'and_maybe', 'filter', 'elite_set', 'max', 'synonym'] as const) {
      expect(parseQuery({ [`_${op}`]: [{ a: 1 }, { b: 2 }] }))
        .toEqual({ kind: 'bool', op, children: [leaf('a', { kind: 'scalar', value: 1 }), leaf('b', { kind: 'scalar', value: 2 })] });
    }
    expect(parseQuery({ tags: { _or: ['x', 'y'] } })).toEqual({ kind: 'bool', op: 'or', children: [leaf('tags', str('x')), leaf('tags', str('y'))] });
    expect(parseQuery({ _or: ['hello', '*', 3] })).toEqual({ kind: 'bool', op: 'or', children: [leaf(null, str('hello')), { kind: 'all' }, leaf(null, { kind: 'scalar', value: 3 })] });
    expect(parseQuery({ tags: ['x', 'y'] })).toEqual({ kind: 'bool', op: 'or', children: [leaf('tags', str('x')), leaf('tags', str('y'))] });
    expect(parseQuery({ _match_all: {} })).toEqual({ kind: 'all' });
    expect(parseQuery({ _match_none: {} })).toEqual({ kind: 'none' });
    expect(parseQuery({ _and: [{ _match_all: {} }, { _not: [{ x: 1 }] }] }))
      .toEqual(and({ kind: 'all' }, { kind: 'bool', op: 'not', children: [leaf('x', { kind: 'scalar', value: 1 })] }));
  });

  it('rejects unknown operators with "Invalid operator: _name"', () => {
    for (const q of [
      { _foo: 1 }, { _scale_weight: { a: 1 } }, { _edit_distance: 2 }, { _near: ['a', 'b'] }, { _phrase: ['a'] },
      { f: { _bar: 1 } }, { f: { _in: { _range: { _from: 1, _step: 2 } } } }, { a: { _id: 1 } },
    ]) {
      const name = JSON.stringify(q).match(/"(_(?:foo|scale_weight|edit_distance|near|phrase|bar|step|id))"/)![1];
      expect(errorOf(q)).toMatchObject({ code: 'invalid_query', status: 400, message: `Invalid operator: ${name}` });
    }
  });

  it('rejects invalid values with invalid_query', () => {
    const cases: Array<[unknown, string]> = [
      [5, 'Invalid _query: expected an object or a string'],
      [[{ a: 1 }], 'Invalid _query: expected an object or a string'],
      [{ a: null }, 'Invalid value for a: null'],
      [{ _and: [] }, 'Invalid value for _and: expected a non-empty array'],
      [{ _not: 'x' }, 'Invalid value for _not: expected an array'],
      [{ _near: { a: 1 } }, 'Invalid value for _near: expected a string'],
      [{ _and: { a: 1 } }, 'Invalid value for _and: expected an array or a string'],
      [{ _match_all: true }, 'Invalid value for _match_all: expected {}'],
      [{ a: { _in: 'abc' } }, 'Invalid range: "abc"'],
      [{ a: { _in: 5 } }, 'Invalid value for _in: expected a range or a shape'],
      [{ a: { _in: { _range: { _from: true } } } }, 'Invalid _from: expected a string or a number'],
      [{ a: { _integer: [1] } }, 'Invalid value for _integer: expected a string, number or boolean'],
      [{ a: { _date: { _yr: 1 } } }, 'Invalid _date part: _yr'],
      [{ a: { _point: 'x' } }, 'Invalid value for _point: expected an object'],
      [{ a: { _wildcard: 3 } }, 'Invalid value for _wildcard: expected a non-empty string'],
      [{ 'a..b': 1 }, 'Invalid field name: a..b'],
      [{ '': 1 }, 'Empty field name'],
      [{ a: [] }, 'Invalid value for a: empty array'],
      [{ a: [[1]] }, 'Invalid value for a: nested array'],
      [{ _or: [null] }, 'Invalid element of _or: expected an object or a scalar'],
      [{ a: 'x~9' }, 'Edit distance 9 is more than 8'],
    ];
    for (const [value, message] of cases) expect(errorOf(value)).toMatchObject({ code: 'invalid_query', status: 400, message });
  });

  it('bounds depth, leaves and strings', () => {
    let deep: unknown = { x: 1 };
    for (let i = 0; i < 70; i++) deep = { _and: [deep] };
    expect(errorOf(deep)).toMatchObject({ code: 'query_too_complex', status: 400, message: 'Query nested deeper than 64 levels' });
    let nested: unknown = 1;
    for (let i = 0; i < 70; i++) nested = { a: nested };
    expect(errorOf(nested)).toMatchObject({ code: 'query_too_complex' });
    let ok: unknown = { x: 1 };
    for (let i = 0; i < 20; i++) ok = { _and: [ok] };
    expect(() => parseQuery(ok)).not.toThrow();
    const many = { _or: Array.from({ length: 1025 }, (_, i) => ({ [`f${i}`]: i })) };
    expect(errorOf(many)).toMatchObject({ code: 'query_too_complex', message: 'Query has more than 1024 leaves' });
    expect(() => parseQuery({ _or: Array.from({ length: 1024 }, (_, i) => ({ [`f${i}`]: i })) })).not.toThrow();
    expect(errorOf({ t: 'x'.repeat(65_537) })).toMatchObject({ code: 'query_too_complex' });
    expect(errorOf({ ['a'.repeat(1025)]: 1 })).toMatchObject({ code: 'invalid_query' });
  });

  it('produces msgpack/JSON-safe plain data', () => {
    const q = parseQuery({ _and: [{ a: { _in: '1..2' } }, { b: 'x "y z"' }, { c: { _circle: { _radius: 1 } } }], _id: 5 });
    expect(JSON.parse(JSON.stringify(q))).toEqual(q);
    expect(JSON.stringify(q)).not.toContain('undefined');
  });
});
