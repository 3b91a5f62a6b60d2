import type { LeafValue, Query } from './ast.js';
import { parseQueryString, parseQueryStrings } from './index.js';

const word = (w: string): LeafValue => ({
  kind: 'string', value: w, op: 'or',
  text: { kind: 'word', pattern: { match: 'exact', text: w, distance: 0 }, keepStopWords: false },
  keyword: { match: 'exact', text: w, distance: 0 },
});
const g = (w: string): Query => ({ kind: 'field', path: null, value: word(w) });
const f = (name: string, w: string): Query => ({ kind: 'field', path: name.split('.'), value: word(w) });
const bool = (op: 'and' | 'or' | 'xor' | 'and_maybe' | 'not') => (...children: Query[]): Query => ({ kind: 'bool', op, children });
const [and, or, xor, maybe, not] = [bool('and'), bool('or'), bool('xor'), bool('and_maybe'), bool('not')];

function errorOf(q: string): unknown {
  try { parseQueryString(q); } catch (err) { return err; }
  throw new Error(`no error for ${q}`);
}

describe('query strings (§9.4)', () => {
  it('parses field leaves and global leaves', () => {
    expect(parseQueryString('user:Kronuz')).toEqual(f('user', 'Kronuz'));
    expect(parseQueryString('hello')).toEqual(g('hello'));
    expect(parseQueryString('style.clothing:red')).toEqual(f('style.clothing', 'red'));
    expect(parseQueryString('_id:abc')).toEqual(f('_id', 'abc'));
    expect(parseQueryString('url:http://x')).toEqual(f('url', 'http://x'));
  });

  it('treats * alone as all and f:* as exists', () => {
    expect(parseQueryString('*')).toEqual({ kind: 'all' });
    expect(parseQueryString('')).toEqual({ kind: 'all' });
    expect(parseQueryString('   ')).toEqual({ kind: 'all' });
    expect(parseQueryString('name:*')).toEqual({ kind: 'field', path: ['name'], value: { kind: 'exists' } });
  });

  it('gives f:v the _value semantics (patterns)', () => {
    expect(parseQueryString('field:unserten~3')).toEqual({
      kind: 'field', path: ['field'], value: {
        kind: 'string', value: 'unserten~3', op: 'or',
        text: { kind: 'word', pattern: { match: 'fuzzy', text: 'unserten', distance: 3 }, keepStopWords: false },
        keyword: { match: 'fuzzy', text: 'unserten', distance: 3 },
      },
    });
    const prefix = parseQueryString('name:kro**') as Extract<Query, { kind: 'field' }>;
    expect(prefix.value).toMatchObject({ keyword: { match: 'prefix', text: 'kro' } });
  });

  it('reads quoted leaves as phrases and exact values', () => {
    const phrase: LeafValue = {
      kind: 'string', value: 'New York', op: 'or',
      text: { kind: 'phrase', words: ['New', 'York'] }, keyword: { match: 'exact', text: 'New York', distance: 0 },
    };
    expect(parseQueryString('city:"New York"')).toEqual({ kind: 'field', path: ['city'], value: phrase });
    expect(parseQueryString("city:'New York'")).toEqual({ kind: 'field', path: ['city'], value: phrase });
    expect(parseQueryString('"New York"')).toEqual({ kind: 'field', path: null, value: phrase });
    expect(parseQueryString('"say \\"hi\\""')).toMatchObject({ value: { value: 'say "hi"' } });
    expect(parseQueryString("'90s")).toEqual(g("'90s"));
  });

  it('reads ranges', () => {
    const range = (from: string | null, to: string | null): Query => ({ kind: 'field', path: ['age'], value: { kind: 'range', from, to } });
    expect(parseQueryString('age:[20..30]')).toEqual(range('20', '30'));
    expect(parseQueryString('age:[ 20 .. 30 ]')).toEqual(range('20', '30'));
    expect(parseQueryString('age:20..30')).toEqual(range('20', '30'));
    expect(parseQueryString('age:..30')).toEqual(range(null, '30'));
    expect(parseQueryString('age:20..')).toEqual(range('20', null));
    expect(parseQueryString('age:[..]')).toEqual(range(null, null));
    expect(parseQueryString('age:1.5..2.5')).toEqual(range('1.5', '2.5'));
    expect(parseQueryString('a..b')).toEqual(g('a..b'));
  });

  it('implements every operator, words in any case and symbols', () => {
    expect(parseQueryString('a AND b')).toEqual(and(g('a'), g('b')));
    expect(parseQueryString('a and b & c && d')).toEqual(and(g('a'), g('b'), g('c'), g('d')));
    expect(parseQueryString('a OR b | c || d')).toEqual(or(g('a'), g('b'), g('c'), g('d')));
    expect(parseQueryString('a b')).toEqual(or(g('a'), g('b')));
    expect(parseQueryString('a xor b XoR c')).toEqual(xor(g('a'), g('b'), g('c')));
    expect(parseQueryString('a MAYBE b maybe c')).toEqual(maybe(g('a'), g('b'), g('c')));
    expect(parseQueryString('NOT a')).toEqual(not(g('a')));
    expect(parseQueryString('!a')).toEqual(not(g('a')));
    expect(parseQueryString('not not a')).toEqual(not(not(g('a'))));
    expect(parseQueryString('a&b|c')).toEqual(or(and(g('a'), g('b')), g('c')));
    expect(parseQueryString('a!b')).toEqual(g('a!b'));
  });

  it('applies precedence NOT > AND > MAYBE > XOR > OR', () => {
    expect(parseQueryString('a OR b XOR c MAYBE d AND NOT e'))
      .toEqual(or(g('a'), xor(g('b'), maybe(g('c'), and(g('d'), not(g('e')))))));
    expect(parseQueryString('a AND b OR c AND d')).toEqual(or(and(g('a'), g('b')), and(g('c'), g('d'))));
    expect(parseQueryString('a b AND c')).toEqual(or(g('a'), and(g('b'), g('c'))));
    expect(parseQueryString('a NOT b')).toEqual(or(g('a'), not(g('b'))));
    expect(parseQueryString('a MAYBE b XOR c')).toEqual(xor(maybe(g('a'), g('b')), g('c')));
  });

  it('reads parentheses', () => {
    expect(parseQueryString('(a OR b) AND c')).toEqual(and(or(g('a'), g('b')), g('c')));
    expect(parseQueryString('!(a b)')).toEqual(not(or(g('a'), g('b'))));
    expect(parseQueryString('age:[20..30] AND gender:female')).toEqual(and(
      { kind: 'field', path: ['age'], value: { kind: 'range', from: '20', to: '30' } }, f('gender', 'female')));
  });

  it('ANDs several q parameters', () => {
    expect(parseQueryStrings(['a', 'b OR c'])).toEqual(and(g('a'), or(g('b'), g('c'))));
    expect(parseQueryStrings(['a'])).toEqual(g('a'));
    expect(parseQueryStrings([])).toEqual({ kind: 'all' });
  });

  it('reports errors with their position', () => {
    const cases: Array<[string, string]> = [
      ['a AND', "Expected a term after 'AND' at position 5"],
      ['(a', "Missing ')' at position 2"],
      ['a)', "Unexpected ')' at position 1"],
      [')', "Unexpected ')' at position 0"],
      ['AND a', "Unexpected 'AND' at position 0"],
      ['a OR OR b', "Unexpected 'OR' at position 5"],
      ['f:"open', 'Unterminated quote at position 2'],
      ['f:[1..2', "Missing ']' at position 2"],
      ['f:[12]', "Expected '..' in range at position 2"],
      ['f: x', "Expected a value after 'f:' at position 2"],
      ['a..b:x', 'Invalid field name: a..b at position 0'],
      ['_foo:x', 'Invalid field name: _foo at position 0'],
      ['x f:abc~12', 'Edit distance 12 is more than 8 at position 7'],
      ['!', "Expected a term after '!' at position 1"],
      ['a ()', 'Unexpected \')\' at position 3'],
    ];
    for (const [q, message] of cases) {
      expect(errorOf(q)).toMatchObject({ code: 'invalid_query_string', status: 400, message });
    }
  });

  it('bounds depth, leaves and length', () => {
    expect(errorOf('('.repeat(65) + 'a' + ')'.repeat(65))).toMatchObject({ code: 'query_too_complex', status: 400 });
    expect(parseQueryString('('.repeat(60) + 'a' + ')'.repeat(60))).toEqual(g('a'));
    expect(errorOf('!'.repeat(70) + 'a')).toMatchObject({ code: 'query_too_complex' });
    expect(() => parseQueryString(Array.from({ length: 600 }, (_, i) => `w${i}`).join(' '))).toThrow('Query has more than 1024 leaves');
    expect(() => parseQueryString(Array.from({ length: 500 }, (_, i) => `w${i}`).join(' '))).not.toThrow();
    expect(() => parseQueryStrings(['a b c', 'd e'], { leavesMax: 9 })).toThrow('Query has more than 9 leaves');
    expect(() => parseQueryString('x'.repeat(65_537))).toThrow('Query string longer than 65536 characters');
  });
});
