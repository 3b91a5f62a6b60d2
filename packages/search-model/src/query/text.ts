/**
 * Text strings of API.md §9.3.1 (a string value on a field, or the string of
 * `{"_and" | "_or" | "_near" | … : s}`) parsed into a `TextNode`.
 *
 * Plain mode (plain strings; `_near _phrase _elite_set _synonym _max`):
 * whitespace-separated words combined with the default operator; `"a b"` is
 * a phrase (an unterminated quote runs to the end); `+t` required, `-t`
 * excluded (also before a phrase). As in Xapian's QueryParser, `a +b -c d`
 * is `(b AND_MAYBE (a OP d)) AND_NOT c`; only excluded items give
 * `all AND_NOT …`; nothing gives `none`.
 *
 * Boolean mode (`_and`, `_or`): additionally `AND`, `OR`, `NOT` (upper case,
 * as Xapian's FLAG_BOOLEAN; lower-case `and` stays a word) and parentheses.
 * Adjacent items form a group joined by the default operator (with the `+`/`-`
 * rule above), groups bind tighter than `AND`/`NOT`, which bind tighter than
 * `OR`; `a NOT b` = `a AND_NOT b`, a leading `NOT b` = `all AND_NOT b`.
 * Unbalanced parentheses are forgiven (a missing `)` closes at the end, a
 * stray one is ignored): the same string may be a keyword value, where it is
 * no syntax at all. Only limits and edit distances raise errors.
 */
import type { MatchKind, Pattern, TextNode, TextOp } from './ast.js';
import type { SyntaxErrorFactory } from './errors.js';
import { checkDepth, type LeafBudget, type QueryLimits } from './limits.js';

export interface TextContext {
  readonly limits: QueryLimits;
  readonly budget: LeafBudget;
  /** Builds the error for a bad edit distance at a position of the string. */
  readonly fail: SyntaxErrorFactory;
  /** Nesting depth already used by the enclosing query. */
  readonly depth: number;
}

/** Edit distance of `t~` without N (§9.3.1). */
export const DEFAULT_EDIT_DISTANCE = 2;
const FUZZY_SUFFIX = /~(\d*)$/;

/**
 * The pattern of a word or whole keyword value, from its suffix: `t~`/`t~N`
 * fuzzy, `t**` prefix, `*`/`?` anywhere but first → wildcard, else exact.
 * `offset` is where `s` starts in the reported string (for error positions).
 */
export function parsePattern(s: string, limits: QueryLimits, fail: SyntaxErrorFactory, offset = 0): Pattern {
  const fuzzy = FUZZY_SUFFIX.exec(s);
  if (fuzzy !== null && fuzzy.index > 0) {
    const digits = fuzzy[1]!;
    const distance = digits.length === 0 ? DEFAULT_EDIT_DISTANCE : Number(digits);
    if (distance > limits.editDistanceMax) {
      throw fail(`Edit distance ${digits} is more than ${limits.editDistanceMax}`, offset + fuzzy.index);
    }
    return pattern('fuzzy', s.slice(0, fuzzy.index), distance);
  }
  if (s.length > 2 && s.endsWith('**')) {
    let end = s.length;
    while (end > 0 && s.charCodeAt(end - 1) === 0x2a) end--;
    if (end > 0 && !isWildcard(s.charCodeAt(0))) return pattern('prefix', s.slice(0, end), 0);
  }
  if (s.length > 1 && !isWildcard(s.charCodeAt(0)) && (s.includes('*') || s.includes('?'))) return pattern('wildcard', s, 0);
  return pattern('exact', s, 0);
}

function pattern(match: MatchKind, text: string, distance: number): Pattern {
  return { match, text, distance };
}

function isWildcard(code: number): boolean {
  return code === 0x2a || code === 0x3f; // * ?
}

function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x3000 || code === 0x2028 || code === 0x2029;
}

const ALL: TextNode = { kind: 'all' };
const NONE: TextNode = { kind: 'none' };

type Modifier = 0 | 1 | 2; // none, required (+), excluded (-)

/** Parse a text string with default operator `op`; `booleans` enables AND/OR/NOT and parentheses. */
export function parseText(s: string, op: TextOp, booleans: boolean, ctx: TextContext): TextNode {
  return new TextParser(s, op, booleans, ctx).parse();
}

class TextParser {
  private i = 0;

  constructor(
    private readonly s: string,
    private readonly op: TextOp,
    private readonly booleans: boolean,
    private readonly ctx: TextContext,
  ) {}

  parse(): TextNode {
    if (!this.booleans) return this.group(this.ctx.depth);
    let node = this.or(this.ctx.depth);
    // Forgive stray ')': skip it and OR what follows.
    while (this.skipSpaces(), this.i < this.s.length) {
      this.i++;
      const rest = this.or(this.ctx.depth);
      if (rest.kind !== 'none') node = node.kind === 'none' ? rest : combine('or', node, rest);
    }
    return node;
  }

  private or(depth: number): TextNode {
    let node = this.and(depth);
    while (this.operator('OR')) {
      const right = this.and(depth);
      if (right.kind === 'none') continue;
      node = node.kind === 'none' ? right : combine('or', node, right);
    }
    return node;
  }

  private and(depth: number): TextNode {
    // A leading `NOT b` is `all AND_NOT b`.
    let node = this.operator('NOT') ? this.withNot(ALL, depth) : this.group(depth);
    for (;;) {
      if (this.operator('AND')) {
        if (this.operator('NOT')) {
          node = this.withNot(node, depth);
        } else {
          const right = this.group(depth);
          if (right.kind !== 'none') node = node.kind === 'none' ? right : combine('and', node, right);
        }
      } else if (this.operator('NOT')) {
        node = this.withNot(node, depth);
      } else {
        return node;
      }
    }
  }

  private withNot(left: TextNode, depth: number): TextNode {
    const right = this.group(depth);
    if (right.kind === 'none') return left;
    if (left.kind === 'bool' && left.op === 'and_not') return { kind: 'bool', op: 'and_not', children: [...left.children, right] };
    return { kind: 'bool', op: 'and_not', children: [left, right] };
  }

  /** Adjacent items up to an operator, ')' or the end, joined by the default operator. */
  private group(depth: number): TextNode {
    checkDepth(depth, this.ctx.limits);
    const required: TextNode[] = [];
    const optional: TextNode[] = [];
    const excluded: TextNode[] = [];
    const s = this.s;
    for (;;) {
      this.skipSpaces();
      if (this.i >= s.length) break;
      let code = s.charCodeAt(this.i);
      if (this.booleans && (code === 0x29 || this.atOperator())) break; // ')'
      let modifier: Modifier = 0;
      if ((code === 0x2b || code === 0x2d) && this.i + 1 < s.length && !isSpace(s.charCodeAt(this.i + 1))) { // + -
        modifier = code === 0x2b ? 1 : 2;
        this.i++;
        code = s.charCodeAt(this.i);
      }
      let item: TextNode;
      if (code === 0x22) { // "
        item = this.phrase();
      } else if (this.booleans && code === 0x28) { // (
        this.i++;
        item = this.or(depth + 1);
        this.skipSpaces();
        if (this.i < s.length && s.charCodeAt(this.i) === 0x29) this.i++;
      } else {
        item = this.word(modifier !== 0);
      }
      if (item.kind === 'none') continue;
      (modifier === 1 ? required : modifier === 2 ? excluded : optional).push(item);
    }
    let base: TextNode;
    const opNode = (nodes: TextNode[]): TextNode => (nodes.length === 1 ? nodes[0]! : { kind: 'bool', op: this.op, children: nodes });
    if (required.length > 0) {
      base = required.length === 1 ? required[0]! : { kind: 'bool', op: 'and', children: required };
      if (optional.length > 0) base = { kind: 'bool', op: 'and_maybe', children: [base, opNode(optional)] };
    } else if (optional.length > 0) {
      base = opNode(optional);
    } else {
      base = excluded.length > 0 ? ALL : NONE;
    }
    return excluded.length > 0 ? { kind: 'bool', op: 'and_not', children: [base, ...excluded] } : base;
  }

  private phrase(): TextNode {
    const s = this.s;
    const start = ++this.i;
    let end = s.indexOf('"', start);
    if (end < 0) end = s.length;
    this.i = Math.min(end + 1, s.length);
    const words = s.slice(start, end).split(/\s+/u).filter((w) => w.length > 0);
    if (words.length === 0) return NONE;
    this.ctx.budget.take(words.length);
    return { kind: 'phrase', words };
  }

  private word(keepStopWords: boolean): TextNode {
    const s = this.s;
    let start = this.i;
    while (this.i < s.length) {
      const code = s.charCodeAt(this.i);
      if (isSpace(code) || (this.booleans && (code === 0x28 || code === 0x29))) break;
      this.i++;
    }
    // A leading wildcard is not supported (§9.3.1): drop it.
    while (start < this.i && isWildcard(s.charCodeAt(start))) start++;
    if (start === this.i) return NONE;
    this.ctx.budget.take();
    return { kind: 'word', pattern: parsePattern(s.slice(start, this.i), this.ctx.limits, this.ctx.fail, start), keepStopWords };
  }

  private skipSpaces(): void {
    while (this.i < this.s.length && isSpace(this.s.charCodeAt(this.i))) this.i++;
  }

  /** Whether an upper-case operator word starts at the cursor. */
  private atOperator(): boolean {
    return this.operatorLength('AND') > 0 || this.operatorLength('OR') > 0 || this.operatorLength('NOT') > 0;
  }

  private operatorLength(word: string): number {
    if (!this.booleans || !this.s.startsWith(word, this.i)) return 0;
    const after = this.i + word.length;
    if (after < this.s.length) {
      const code = this.s.charCodeAt(after);
      if (!isSpace(code) && code !== 0x28 && code !== 0x29 && code !== 0x22) return 0;
    }
    return word.length;
  }

  /** Consume operator `word` if it is next. */
  private operator(word: string): boolean {
    this.skipSpaces();
    const length = this.operatorLength(word);
    this.i += length;
    return length > 0;
  }
}

/** Join two nodes with `op`, flattening a left operand of the same operator. */
function combine(op: 'and' | 'or', left: TextNode, right: TextNode): TextNode {
  if (left.kind === 'bool' && left.op === op) return { kind: 'bool', op, children: [...left.children, right] };
  return { kind: 'bool', op, children: [left, right] };
}
