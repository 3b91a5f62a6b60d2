import { TesseraError } from '@tessera/errors';
import type { Pattern, TextNode, TextOp } from './ast.js';
import { queryErrors } from './errors.js';
import { LeafBudget, QUERY_LIMITS } from './limits.js';
import { parsePattern, parseText } from './text.js';

const fail = (m: string, p: number): Error => queryErrors.invalidQueryString(m, p);
const text = (s: string, op: TextOp = 'or', booleans = false): TextNode =>
  parseText(s, op, booleans, { limits: QUERY_LIMITS, budget: new LeafBudget(1024), fail, depth: 1 });
const exact = (w: string, keepStopWords = false): TextNode => ({ kind: 'word', pattern: { match: 'exact', text: w, distance: 0 }, keepStopWords });
const pat = (s: string): Pattern => parsePattern(s, QUERY_LIMITS, fail);

describe('parsePattern', () => {
  it('reads suffixes', () => {
    expect(pat('cate*')).toEqual({ match: 'wildcard', text: 'cate*', distance: 0 });
    expect(pat('c?t')).toEqual({ match: 'wildcard', text: 'c?t', distance: 0 });
    expect(pat('dynamic cate*')).toEqual({ match: 'wildcard', text: 'dynamic cate*', distance: 0 });
    expect(pat('cate**')).toEqual({ match: 'prefix', text: 'cate', distance: 0 });
    expect(pat('unserten~')).toEqual({ match: 'fuzzy', text: 'unserten', distance: 2 });
    expect(pat('unserten~3')).toEqual({ match: 'fuzzy', text: 'unserten', distance: 3 });
    expect(pat('plain')).toEqual({ match: 'exact', text: 'plain', distance: 0 });
    expect(pat('*lead')).toEqual({ match: 'exact', text: '*lead', distance: 0 });
    expect(pat('~3')).toEqual({ match: 'exact', text: '~3', distance: 0 });
    expect(pat('**')).toEqual({ match: 'exact', text: '**', distance: 0 });
  });

  it('bounds the edit distance', () => {
    expect(pat('a~8').distance).toBe(8);
    expect(() => pat('abc~9')).toThrow(new TesseraError('invalid_query_string', 400, 'Edit distance 9 is more than 8 at position 3'));
  });
});

describe('parseText, plain mode', () => {
  it('joins words with the default operator', () => {
    expect(text('a')).toEqual(exact('a'));
    expect(text(' a  b ')).toEqual({ kind: 'bool', op: 'or', children: [exact('a'), exact('b')] });
    expect(text('a b', 'near')).toEqual({ kind: 'bool', op: 'near', children: [exact('a'), exact('b')] });
    expect(text('AND or NOT (x)')).toEqual({ kind: 'bool', op: 'or', children: [exact('AND'), exact('or'), exact('NOT'), exact('(x)')] });
  });

  it('reads phrases, unterminated ones to the end', () => {
    expect(text('"new york" city')).toEqual({ kind: 'bool', op: 'or', children: [{ kind: 'phrase', words: ['new', 'york'] }, exact('city')] });
    expect(text('"open end')).toEqual({ kind: 'phrase', words: ['open', 'end'] });
    expect(text('""')).toEqual({ kind: 'none' });
  });

  it('applies +required and -excluded like Xapian', () => {
    expect(text('a +b -c d')).toEqual({
      kind: 'bool', op: 'and_not', children: [
        { kind: 'bool', op: 'and_maybe', children: [exact('b', true), { kind: 'bool', op: 'or', children: [exact('a'), exact('d')] }] },
        exact('c', true),
      ],
    });
    expect(text('+a +b')).toEqual({ kind: 'bool', op: 'and', children: [exact('a', true), exact('b', true)] });
    expect(text('-a')).toEqual({ kind: 'bool', op: 'and_not', children: [{ kind: 'all' }, exact('a', true)] });
    expect(text('-"a b" c')).toEqual({ kind: 'bool', op: 'and_not', children: [exact('c'), { kind: 'phrase', words: ['a', 'b'] }] });
    expect(text('a - b')).toEqual({ kind: 'bool', op: 'or', children: [exact('a'), exact('-'), exact('b')] });
  });

  it('reads patterns and drops leading wildcards and empty strings', () => {
    expect(text('cat* dog** fox~1 *')).toEqual({
      kind: 'bool', op: 'or', children: [
        { kind: 'word', pattern: { match: 'wildcard', text: 'cat*', distance: 0 }, keepStopWords: false },
        { kind: 'word', pattern: { match: 'prefix', text: 'dog', distance: 0 }, keepStopWords: false },
        { kind: 'word', pattern: { match: 'fuzzy', text: 'fox', distance: 1 }, keepStopWords: false },
      ],
    });
    expect(text('*foo')).toEqual(exact('foo'));
    expect(text('')).toEqual({ kind: 'none' });
    expect(text('   ')).toEqual({ kind: 'none' });
  });
});

describe('parseText, boolean mode (_and, _or)', () => {
  const or = (...children: TextNode[]): TextNode => ({ kind: 'bool', op: 'or', children });
  const and = (...children: TextNode[]): TextNode => ({ kind: 'bool', op: 'and', children });
  const andNot = (...children: TextNode[]): TextNode => ({ kind: 'bool', op: 'and_not', children });

  it('groups adjacent words with the default operator, tighter than AND/OR', () => {
    expect(text('a b OR c', 'and', true)).toEqual(or(and(exact('a'), exact('b')), exact('c')));
    expect(text('a b AND c', 'or', true)).toEqual(and(or(exact('a'), exact('b')), exact('c')));
  });

  it('gives AND/NOT precedence over OR and reads NOT as AND_NOT', () => {
    expect(text('a OR b AND c', 'or', true)).toEqual(or(exact('a'), and(exact('b'), exact('c'))));
    expect(text('a NOT b', 'or', true)).toEqual(andNot(exact('a'), exact('b')));
    expect(text('a AND NOT b NOT c', 'or', true)).toEqual(andNot(exact('a'), exact('b'), exact('c')));
    expect(text('NOT b', 'or', true)).toEqual(andNot({ kind: 'all' }, exact('b')));
    expect(text('a and b', 'or', true)).toEqual(or(exact('a'), exact('and'), exact('b')));
  });

  it('reads parentheses, forgiving unbalanced ones', () => {
    expect(text('(a OR b) c', 'and', true)).toEqual(and(or(exact('a'), exact('b')), exact('c')));
    expect(text('(a OR b', 'and', true)).toEqual(or(exact('a'), exact('b')));
    expect(text('a) b', 'and', true)).toEqual(or(exact('a'), exact('b')));
    expect(text('a OR', 'and', true)).toEqual(exact('a'));
    expect(text('-(a b) c', 'or', true)).toEqual(andNot(exact('c'), or(exact('a'), exact('b'))));
  });

  it('bounds nesting and words', () => {
    expect(() => text('('.repeat(70) + 'a', 'and', true)).toThrow(expect.objectContaining({ code: 'query_too_complex', status: 400 }) as Error);
    expect(() => parseText('a '.repeat(11), 'or', false, { limits: QUERY_LIMITS, budget: new LeafBudget(10), fail, depth: 1 }))
      .toThrow('Query has more than 10 leaves');
  });
});
