/**
 * Parsing of the pattern and text operators of API.md §9.3 and §9.3.1:
 * `{"_fuzzy": s}` (every plain word fuzzy, the whole keyword value fuzzy),
 * `t~N` in text strings and query strings, and the operators that take only
 * a string or only an array.
 */
import type { Query, TextNode } from './ast.js';
import { parseQuery, parseQueryString, parseSort } from './index.js';

const word = (text: string, match: 'exact' | 'fuzzy' | 'prefix' | 'wildcard' = 'exact', distance = 0): TextNode =>
  ({ kind: 'word', pattern: { match, text, distance }, keepStopWords: false });

function textOf(q: Query): TextNode {
  if (q.kind !== 'field' || q.value.kind !== 'string') throw new Error(`not a string leaf: ${JSON.stringify(q)}`);
  return q.value.text;
}

function errorOf(value: unknown): { status: number; message: string } {
  try {
    parseQuery(value);
  } catch (err) {
    const e = err as { status: number; message: string };
    return { status: e.status, message: e.message };
  }
  throw new Error(`no error for ${JSON.stringify(value)}`);
}

describe('fuzzy patterns', () => {
  it('{"_fuzzy": s}: each plain word of the text reading is fuzzy at distance 2; patterns and phrases stay', () => {
    expect(textOf(parseQuery({ t: { _fuzzy: 'quikc borwn' } }))).toEqual({
      kind: 'bool', op: 'or', children: [word('quikc', 'fuzzy', 2), word('borwn', 'fuzzy', 2)],
    });
    expect(textOf(parseQuery({ t: { _fuzzy: 'a~1 b* "c d"' } }))).toEqual({
      kind: 'bool', op: 'or', children: [word('a', 'fuzzy', 1), word('b*', 'wildcard'), { kind: 'phrase', words: ['c', 'd'] }],
    });
  });

  it('{"_fuzzy": s}: the keyword reading is the whole value, with its own ~N when it has one', () => {
    expect(parseQuery({ t: { _fuzzy: 'dynamic cat' } })).toMatchObject({ value: { keyword: { match: 'fuzzy', text: 'dynamic cat', distance: 2 } } });
    expect(parseQuery({ t: { _fuzzy: 'dynamic cat~1' } })).toMatchObject({ value: { keyword: { match: 'fuzzy', text: 'dynamic cat', distance: 1 } } });
  });

  it('t~N in text strings and query strings', () => {
    expect(textOf(parseQuery({ t: 'unserten~3 x~' }))).toEqual({ kind: 'bool', op: 'or', children: [word('unserten', 'fuzzy', 3), word('x', 'fuzzy', 2)] });
    expect(parseQueryString('field:unserten~3')).toMatchObject({
      kind: 'field', path: ['field'], value: { keyword: { match: 'fuzzy', text: 'unserten', distance: 3 }, text: word('unserten', 'fuzzy', 3) },
    });
  });

  it('at most 32 fuzzy words per request (each walks a term dictionary), counted across leaves', () => {
    const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}~1`).join(' ');
    expect(() => parseQuery({ t: words(32) })).not.toThrow();
    expect(errorOf({ t: words(33) })).toEqual({ status: 400, message: 'Query has more than 32 fuzzy words' });
    expect(errorOf({ _or: Array.from({ length: 33 }, (_, i) => ({ t: { _fuzzy: `w${i}` } })) }).status).toBe(400);
    expect(() => parseQuery({ t: { _fuzzy: 'a b c' } }, { fuzzyWordsMax: 3 })).not.toThrow();
    expect(() => parseQuery({ t: { _fuzzy: 'a b c d' } }, { fuzzyWordsMax: 3 })).toThrow(/more than 3 fuzzy words/);
    expect(() => parseQueryString('a~ b~ c~', { fuzzyWordsMax: 2 })).toThrow(/more than 2 fuzzy words/);
  });

  it('an edit distance above the limit is 400', () => {
    expect(errorOf({ t: 'abc~9' })).toEqual({ status: 400, message: expect.stringMatching(/Edit distance 9 is more than 8/) });
    expect(errorOf({ t: { _fuzzy: 'abc~12' } }).status).toBe(400);
    expect(() => parseQueryString('t:abc~99')).toThrow(/position 5/);
  });
});

describe('operators that take a string, an array, or neither', () => {
  it('string _and/_or read AND OR NOT ( ) as operators; the others do not', () => {
    expect(textOf(parseQuery({ t: { _and: 'a OR b' } }))).toEqual({ kind: 'bool', op: 'or', children: [word('a'), word('b')] });
    expect(textOf(parseQuery({ t: { _near: 'a OR b' } }))).toEqual({ kind: 'bool', op: 'near', children: [word('a'), word('OR'), word('b')] });
  });

  it('array _near/_phrase, _scale_weight and _edit_distance are "Invalid operator"', () => {
    for (const [name, value] of [['_near', ['a']], ['_phrase', [{ t: 'a' }]], ['_scale_weight', [{ t: 'a' }]], ['_edit_distance', 'abc'], ['_edit_distance', ['a']]] as const) {
      expect(errorOf({ [name]: value })).toEqual({ status: 400, message: `Invalid operator: ${name}` });
      expect(errorOf({ t: { [name]: value } })).toEqual({ status: 400, message: `Invalid operator: ${name}` });
    }
  });

  it('string operators given a number, and pattern operators given an empty string, are 400', () => {
    expect(errorOf({ t: { _elite_set: 5 } }).message).toMatch(/_elite_set: expected an array or a string/);
    expect(errorOf({ t: { _near: 5 } }).message).toMatch(/_near: expected a string/);
    expect(errorOf({ t: { _fuzzy: '' } }).message).toMatch(/_fuzzy: expected a non-empty string/);
    expect(errorOf({ t: { _wildcard: 3 } }).message).toMatch(/_wildcard/);
  });
});

describe('sort keys with a reference (§9.5)', () => {
  it('nested plain keys extend the path, as a dotted key does (the HTTP layer expands dotted keys)', () => {
    expect(parseSort({ name: { first: { _value: 'Ann', _metric: 'leven' } } })).toEqual([{ path: 'name.first', order: 'asc', value: 'Ann', metric: 'levenshtein' }]);
    expect(parseSort({ a: { b: { _order: 'desc' }, c: {} } })).toEqual([{ path: 'a.b', order: 'desc' }, { path: 'a.c', order: 'asc' }]);
    expect(parseSort({ 'name.first': { _value: 3 } })).toEqual([{ path: 'name.first', order: 'asc', value: 3 }]);
  });

  it('options mixed with fields, or fields under _id, are 400', () => {
    expect(() => parseSort({ a: { _order: 'desc', b: {} } })).toThrow(/Invalid sort option: b/);
    expect(() => parseSort({ _id: { x: {} } })).toThrow(/Invalid sort/);
  });
});
