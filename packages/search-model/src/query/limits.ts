/**
 * Limits of query parsing. Each bounds work an attacker could ask for with a
 * small request: recursion depth (stack), leaves (Weight and Scorer objects
 * per shard), string lengths (parser time, terms), sort keys. Every check
 * happens while parsing, before any shard work.
 */
import { queryErrors } from './errors.js';

export interface QueryLimits {
  /** Nesting of DSL objects/arrays, parentheses of query and text strings. */
  readonly depthMax: number;
  /** Field leaves plus words and phrase words of text strings, per request. */
  readonly leavesMax: number;
  /** Longest query string (`q`, string `_query`) and text string, UTF-16 units. */
  readonly stringLengthMax: number;
  /** Longest field name or path, UTF-16 units. */
  readonly fieldNameLengthMax: number;
  /** Largest edit distance of `t~N`. */
  readonly editDistanceMax: number;
  /**
   * Fuzzy words (`t~N`, `{"_fuzzy": s}`) per request: each walks the field's
   * whole term dictionary in every segment (milliseconds on 10⁵ terms).
   */
  readonly fuzzyWordsMax: number;
  /** Sort keys per request. */
  readonly sortKeysMax: number;
  /** `_offset + _limit` (API.md §13). */
  readonly resultWindowMax: number;
}

export const QUERY_LIMITS: QueryLimits = {
  depthMax: 64,
  leavesMax: 1024,
  stringLengthMax: 65_536,
  fieldNameLengthMax: 1024,
  editDistanceMax: 8,
  fuzzyWordsMax: 32,
  sortKeysMax: 32,
  resultWindowMax: 100_000,
};

/** Counts leaves (and fuzzy words) across one request (all `q` params share one budget). */
export class LeafBudget {
  private used = 0;
  private fuzzy = 0;

  constructor(private readonly max: number, private readonly fuzzyMax = QUERY_LIMITS.fuzzyWordsMax) {}

  take(count = 1): void {
    this.used += count;
    if (this.used > this.max) throw queryErrors.tooComplex(`Query has more than ${this.max} leaves`);
  }

  takeFuzzy(count: number): void {
    this.fuzzy += count;
    if (this.fuzzy > this.fuzzyMax) throw queryErrors.tooComplex(`Query has more than ${this.fuzzyMax} fuzzy words`);
  }
}

export function checkDepth(depth: number, limits: QueryLimits): void {
  if (depth > limits.depthMax) throw queryErrors.tooComplex(`Query nested deeper than ${limits.depthMax} levels`);
}

export function checkStringLength(s: string, what: string, limits: QueryLimits): void {
  if (s.length > limits.stringLengthMax) throw queryErrors.tooComplex(`${what} longer than ${limits.stringLengthMax} characters`);
}
