/**
 * Query strings (API.md §9.4: `q` parameters, a string `_query`):
 *
 *     expr  = term *( [op] term )              ; no op = OR
 *     op    = AND | OR | XOR | MAYBE | "&" | "|"   ; words in any case
 *     term  = [ NOT | "!" ] ( "(" expr ")" | leaf )
 *     leaf  = [ field ":" ] ( word | "quoted" | 'quoted' ) | field ":" range
 *     range = "[" [a] ".." [b] "]" | [a] ".." [b]  ; inclusive
 *
 * Precedence, tightest first: NOT, AND, MAYBE, XOR, OR (the implicit
 * operator is OR, so `a b AND c` = `a OR (b AND c)` and `a NOT b` =
 * `a OR (NOT b)`, as the grammar says). `&&`/`||` are read as `&`/`|`.
 * `f:v` is `{"f": {"_value": "v"}}`: a string leaf whose text reading gives
 * `*`, `**`, `~N`, `+`/`-` their §9.3.1 meaning; `f:*` = f has a value. A
 * quoted leaf is a phrase (text) and the exact value (keyword); a `'` that is
 * never closed is an ordinary character (`'90s`), an unclosed `"` an error.
 * A leaf without field searches global terms; `*` alone = all; an empty
 * string = all. Errors are 400 `invalid_query_string` ending with the
 * 0-based position.
 */
import type { LeafValue, Query } from './ast.js';
import { queryErrors, type SyntaxErrorFactory } from './errors.js';
import { parseRangeString, splitFieldName, stringLeaf, type ParseContext } from './leaf.js';
import { checkDepth, checkStringLength } from './limits.js';

type OpName = 'and' | 'or' | 'xor' | 'maybe' | 'not';

type Token =
  | { readonly type: 'op'; readonly op: OpName; readonly pos: number; readonly text: string }
  | { readonly type: '(' | ')'; readonly pos: number }
  | {
    readonly type: 'leaf'; readonly pos: number; readonly field: string | null; readonly fieldPos: number;
    readonly value: string; readonly valuePos: number; readonly form: 'word' | 'quoted' | 'bracket';
  };

const OP_WORDS: ReadonlyMap<string, OpName> = new Map([['and', 'and'], ['or', 'or'], ['xor', 'xor'], ['maybe', 'maybe'], ['not', 'not']]);

const fail: SyntaxErrorFactory = (message, position) => queryErrors.invalidQueryString(message, position);

function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x3000 || code === 0x2028 || code === 0x2029;
}

/** Ends an unquoted word: whitespace, `(`, `)`, `&`, `|`. */
function isDelimiter(code: number): boolean {
  return isSpace(code) || code === 0x28 || code === 0x29 || code === 0x26 || code === 0x7c;
}

function lex(s: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    const code = s.charCodeAt(i);
    if (isSpace(code)) { i++; continue; }
    const pos = i;
    if (code === 0x28 || code === 0x29) { tokens.push({ type: code === 0x28 ? '(' : ')', pos }); i++; continue; }
    if (code === 0x26 || code === 0x7c) { // & |
      i += s.charCodeAt(i + 1) === code ? 2 : 1;
      tokens.push({ type: 'op', op: code === 0x26 ? 'and' : 'or', pos, text: s.slice(pos, i) });
      continue;
    }
    if (code === 0x21) { tokens.push({ type: 'op', op: 'not', pos, text: '!' }); i++; continue; }
    const quoted = readQuoted(s, i);
    if (quoted !== null) {
      tokens.push({ type: 'leaf', pos, field: null, fieldPos: pos, value: quoted.value, valuePos: pos + 1, form: 'quoted' });
      i = quoted.end;
      continue;
    }
    let end = i;
    while (end < n && !isDelimiter(s.charCodeAt(end))) end++;
    const chunk = s.slice(i, end);
    const colon = chunk.indexOf(':');
    if (colon > 0) {
      const field = chunk.slice(0, colon);
      const valuePos = i + colon + 1;
      const first = s.charCodeAt(valuePos);
      const fieldQuoted = readQuoted(s, valuePos);
      if (fieldQuoted !== null) {
        tokens.push({ type: 'leaf', pos, field, fieldPos: pos, value: fieldQuoted.value, valuePos: valuePos + 1, form: 'quoted' });
        i = fieldQuoted.end;
        continue;
      }
      if (first === 0x5b) { // [
        const close = s.indexOf(']', valuePos);
        if (close < 0) throw fail("Missing ']'", valuePos);
        tokens.push({ type: 'leaf', pos, field, fieldPos: pos, value: s.slice(valuePos, close + 1), valuePos, form: 'bracket' });
        i = close + 1;
        continue;
      }
      if (valuePos >= end) throw fail(`Expected a value after '${field}:'`, valuePos);
      tokens.push({ type: 'leaf', pos, field, fieldPos: pos, value: s.slice(valuePos, end), valuePos, form: 'word' });
      i = end;
      continue;
    }
    const op = OP_WORDS.get(chunk.toLowerCase());
    if (op !== undefined) tokens.push({ type: 'op', op, pos, text: chunk });
    else tokens.push({ type: 'leaf', pos, field: null, fieldPos: pos, value: chunk, valuePos: pos, form: 'word' });
    i = end;
  }
  return tokens;
}

/**
 * A quoted string starting at `i`: `"…"` (unclosed → error) or `'…'` (only
 * when closed). `\"`, `\'` and `\\` escape inside. Null when none starts there.
 */
function readQuoted(s: string, i: number): { value: string; end: number } | null {
  const quote = s.charCodeAt(i);
  if (quote !== 0x22 && quote !== 0x27) return null;
  let value = '';
  let j = i + 1;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c === 0x5c && j + 1 < s.length) { // backslash
      const next = s.charCodeAt(j + 1);
      if (next === quote || next === 0x5c) { value += s[j + 1]; j += 2; continue; }
    }
    if (c === quote) return { value, end: j + 1 };
    value += s[j];
    j++;
  }
  if (quote === 0x22) throw fail('Unterminated quote', i);
  return null;
}

class QueryStringParser {
  private next = 0;

  constructor(private readonly tokens: Token[], private readonly end: number, private readonly ctx: ParseContext) {}

  parse(): Query {
    if (this.tokens.length === 0) return { kind: 'all' };
    const query = this.or(1);
    const token = this.tokens[this.next];
    if (token !== undefined) throw fail(`Unexpected '${describe(token)}'`, token.pos);
    return query;
  }

  private peek(): Token | undefined {
    return this.tokens[this.next];
  }

  private takeOp(op: OpName): Token | undefined {
    const token = this.tokens[this.next];
    if (token !== undefined && token.type === 'op' && token.op === op) {
      this.next++;
      return token;
    }
    return undefined;
  }

  /** Whether the next token starts a term (for the implicit OR). */
  private atTerm(): boolean {
    const token = this.peek();
    return token !== undefined && (token.type === 'leaf' || token.type === '(' || (token.type === 'op' && token.op === 'not'));
  }

  private or(depth: number): Query {
    const children = [this.xor(depth)];
    for (;;) {
      if (this.takeOp('or') === undefined && !this.atTerm()) break;
      children.push(this.xor(depth));
    }
    return children.length === 1 ? children[0]! : { kind: 'bool', op: 'or', children };
  }

  private xor(depth: number): Query {
    const children = [this.maybe(depth)];
    while (this.takeOp('xor') !== undefined) children.push(this.maybe(depth));
    return children.length === 1 ? children[0]! : { kind: 'bool', op: 'xor', children };
  }

  private maybe(depth: number): Query {
    const children = [this.and(depth)];
    while (this.takeOp('maybe') !== undefined) children.push(this.and(depth));
    return children.length === 1 ? children[0]! : { kind: 'bool', op: 'and_maybe', children };
  }

  private and(depth: number): Query {
    const children = [this.unary(depth)];
    while (this.takeOp('and') !== undefined) children.push(this.unary(depth));
    return children.length === 1 ? children[0]! : { kind: 'bool', op: 'and', children };
  }

  private unary(depth: number): Query {
    checkDepth(depth, this.ctx.limits);
    const token = this.peek();
    if (token === undefined) {
      const previous = this.tokens[this.next - 1];
      throw fail(previous !== undefined && previous.type === 'op' ? `Expected a term after '${previous.text}'` : 'Expected a term', this.end);
    }
    this.next++;
    switch (token.type) {
      case 'op':
        if (token.op === 'not') return { kind: 'bool', op: 'not', children: [this.unary(depth + 1)] };
        throw fail(`Unexpected '${token.text}'`, token.pos);
      case '(': {
        const inner = this.or(depth + 1);
        const close = this.peek();
        if (close === undefined || close.type !== ')') throw fail("Missing ')'", close === undefined ? this.end : close.pos);
        this.next++;
        return inner;
      }
      case ')':
        throw fail("Unexpected ')'", token.pos);
      case 'leaf':
        return this.leaf(token, depth);
    }
  }

  private leaf(token: Extract<Token, { type: 'leaf' }>, depth: number): Query {
    this.ctx.budget.take();
    let path: string[] | null = null;
    if (token.field !== null) {
      const split = splitFieldName(token.field, this.ctx.limits);
      if (typeof split === 'string') throw fail(split, token.fieldPos);
      path = split;
    } else if (token.form === 'word' && token.value === '*') {
      return { kind: 'all' };
    }
    return { kind: 'field', path, value: this.leafValue(token, path !== null, depth) };
  }

  private leafValue(token: Extract<Token, { type: 'leaf' }>, hasField: boolean, depth: number): LeafValue {
    switch (token.form) {
      case 'quoted': {
        const words = token.value.split(/\s+/u).filter((w) => w.length > 0);
        this.ctx.budget.take(words.length);
        return {
          kind: 'string', value: token.value, op: 'or',
          text: words.length === 0 ? { kind: 'none' } : { kind: 'phrase', words },
          keyword: { match: 'exact', text: token.value, distance: 0 },
        };
      }
      case 'bracket': {
        const range = parseRangeString(token.value);
        if (range === null) throw fail("Expected '..' in range", token.valuePos);
        return { kind: 'range', from: range.from, to: range.to };
      }
      case 'word': {
        if (hasField) {
          const range = token.value.includes('..') ? parseRangeString(token.value) : null;
          if (range !== null) return { kind: 'range', from: range.from, to: range.to };
        }
        return stringLeaf(token.value, 'or', false, this.ctx, depth, fail, token.valuePos);
      }
    }
  }
}

function describe(token: Token): string {
  switch (token.type) {
    case 'op': return token.text;
    case '(': case ')': return token.type;
    case 'leaf': return token.field === null ? token.value : `${token.field}:${token.value}`;
  }
}

/** Parse one query string. */
export function parseQueryStringIn(s: string, ctx: ParseContext): Query {
  checkStringLength(s, 'Query string', ctx.limits);
  return new QueryStringParser(lex(s), s.length, ctx).parse();
}
