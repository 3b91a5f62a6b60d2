/**
 * Leaves shared by the DSL and query strings: field paths, string leaves
 * (text and keyword readings of one string) and range strings.
 */
import type { LeafValue, RangeEnd, TextNode, TextOp } from './ast.js';
import type { SyntaxErrorFactory } from './errors.js';
import { checkStringLength, type LeafBudget, type QueryLimits } from './limits.js';
import { parsePattern, parseText } from './text.js';

/** State of one parse: limits and the leaf budget every part of a request shares. */
export interface ParseContext {
  readonly limits: QueryLimits;
  readonly budget: LeafBudget;
}

const EXISTS: LeafValue = { kind: 'exists' };

/**
 * The leaf of string `s`: `"*"` = exists; otherwise both readings, the text
 * expression (with default operator `op`; `booleans` for `_and`/`_or`) and
 * the keyword pattern.
 */
export function stringLeaf(
  s: string, op: TextOp, booleans: boolean, ctx: ParseContext, depth: number, fail: SyntaxErrorFactory, offset = 0,
): LeafValue {
  const leaf = uncountedStringLeaf(s, op, booleans, ctx, depth, fail, offset);
  countFuzzy(leaf, ctx);
  return leaf;
}

/** `stringLeaf` without counting its fuzzy words (for a caller that rewrites the leaf first, then counts). */
export function uncountedStringLeaf(
  s: string, op: TextOp, booleans: boolean, ctx: ParseContext, depth: number, fail: SyntaxErrorFactory, offset = 0,
): LeafValue {
  checkStringLength(s, 'Query text', ctx.limits);
  if (s === '*') return EXISTS;
  const text = parseText(s, op, booleans, { limits: ctx.limits, budget: ctx.budget, fail: (m, p) => fail(m, offset + p), depth });
  const keyword = parsePattern(s, ctx.limits, fail, offset);
  return { kind: 'string', value: s, op, text, keyword };
}

/** Charge a string leaf's fuzzy walks to the request: its fuzzy words, or 1 for a fuzzy keyword value. */
export function countFuzzy(leaf: LeafValue, ctx: ParseContext): void {
  if (leaf.kind !== 'string') return;
  const words = fuzzyWords(leaf.text);
  const count = Math.max(words, leaf.keyword.match === 'fuzzy' ? 1 : 0);
  if (count > 0) ctx.budget.takeFuzzy(count);
}

function fuzzyWords(node: TextNode): number {
  if (node.kind === 'word') return node.pattern.match === 'fuzzy' ? 1 : 0;
  if (node.kind !== 'bool') return 0;
  let n = 0;
  for (const c of node.children) n += fuzzyWords(c);
  return n;
}

/**
 * Split a range string `[a..b]`, `a..b`, `..b`, `a..` at its first `..`;
 * ends are trimmed, empty = open. Null when `s` is not a range.
 */
export function parseRangeString(s: string): { from: RangeEnd; to: RangeEnd } | null {
  let inner = s.trim();
  const open = inner.startsWith('[');
  const close = inner.endsWith(']') && inner.length >= 2;
  // One bracket without the other is a malformed range, not an end that happens to start with `[`.
  if (open !== close) return null;
  if (open) inner = inner.slice(1, -1);
  const dots = inner.indexOf('..');
  if (dots < 0) return null;
  const from = inner.slice(0, dots).trim();
  const to = inner.slice(dots + 2).trim();
  return { from: from.length === 0 ? null : from, to: to.length === 0 ? null : to };
}

/**
 * Split a dotted field name into its path. Segments must be non-empty; a
 * segment starting with `_` is reserved for operators, except `_id` as a
 * whole name. Returns the reason when invalid.
 */
export function splitFieldName(name: string, limits: QueryLimits): string[] | string {
  if (name.length === 0) return 'Empty field name';
  if (name.length > limits.fieldNameLengthMax) return `Field name longer than ${limits.fieldNameLengthMax} characters`;
  if (name === '_id') return ['_id'];
  const path = name.split('.');
  for (const segment of path) {
    if (segment.length === 0) return `Invalid field name: ${name}`;
    if (segment.charCodeAt(0) === 0x5f) return `Invalid field name: ${name}`; // _
  }
  return path;
}
