/**
 * Fuzzy expansion (API.md §9.3.1 `t~N`, `{"_fuzzy": s}`): the terms of a
 * field within N edits of a word. An edit inserts, deletes or substitutes one
 * character or transposes two adjacent ones (optimal string alignment, the
 * restricted Damerau distance: a transposed pair is not edited again),
 * counted in code points.
 *
 * The term dictionary is walked in order from the field's prefix, keeping one
 * dynamic-programming row per character of the current term. A term sharing k
 * leading characters with the previous one reuses its first k rows (a trie
 * walk without building the trie), and each row is computed only within N of
 * the diagonal, so a term costs O(new characters × (2N + 1)). When every cell
 * of a row exceeds N, no extension of that prefix comes within N: row minima
 * satisfy min(d + 1) ≥ min(min(d), min(d − 1) + 1) and min(d) ≤ min(d − 1) + 1,
 * so once min(d) > N every later row stays above N. The walk then skips the
 * whole prefix: a few steps forward, then a seek in the segment's block index
 * past it (fuzzy.bench.ts measures the walk against a full DP per term).
 */
import type { TermDictionary } from '../segments/term-dictionary.js';
import { TermsIterator } from '../segments/term-dictionary.js';
import { compareCodePoints } from '../segments/write-buffer.js';
import { compareBytes } from '../values/string-dictionary.js';
import type { BufferSearchReader, SearchReader, SegmentSearchReader } from './reader.js';

/**
 * A fuzzy word expands to at most this many terms, nearest first (then most
 * frequent, then in term order): the limit of `t**` and Lucene's FuzzyQuery
 * default. Every expansion is one postings iterator in a union; beyond a few
 * dozen the extra terms are the farthest and rarest, and only add cost.
 */
export const FUZZY_EXPANSIONS_MAX = 50;

/**
 * Terms with a dead prefix stepped over one by one before seeking past them:
 * a seek costs a binary search over the block index plus half a block of
 * entries (~30 steps), so short runs are cheaper to step through.
 */
const LINEAR_SKIP_STEPS = 16;

const encoder = new TextEncoder();

/** The code points of `s`. */
export function codePoints(s: string): Int32Array {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0)!);
  return Int32Array.from(out);
}

/**
 * Optimal-string-alignment distance of terms to one token, computed row by
 * row over a term's characters with rows shared between terms with a common
 * prefix. Cells above the maximum are clamped to maximum + 1.
 */
export class EditDistanceAutomaton {
  private readonly query: Int32Array;
  private readonly width: number;
  private readonly rows: Int32Array;
  /** Rows 1..valid hold the last term's first `valid` characters. */
  private valid = 0;
  /**
   * After `distance()`: the depth whose row exceeded the maximum (every term
   * starting with the term's first `deadAt` characters is too far), or 0.
   */
  deadAt = 0;

  constructor(token: string, readonly maxDistance: number) {
    this.query = codePoints(token);
    const m = this.query.length;
    this.width = m + 1;
    // A row deeper than m + N lies entirely outside the band, so a walk dies by depth m + N + 1.
    this.rows = new Int32Array((m + maxDistance + 2) * this.width);
    for (let j = 0; j <= m; j++) this.rows[j] = j <= maxDistance ? j : maxDistance + 1;
  }

  get tokenLength(): number {
    return this.query.length;
  }

  /**
   * Distance from `chars[0, length)` to the token when at most the maximum,
   * else −1. `shared`: how many leading characters the term has in common with
   * the one of the previous call (their rows are reused).
   */
  distance(chars: Int32Array, length: number, shared: number): number {
    this.deadAt = 0;
    for (let d = this.resume(shared) + 1; d <= length; d++) {
      if (!this.extend(chars, d)) return -1;
    }
    return this.result(length);
  }

  /** Keep the rows of the first `shared` characters; returns the depth to continue from. */
  resume(shared: number): number {
    if (shared < this.valid) this.valid = shared;
    this.deadAt = 0;
    return this.valid;
  }

  /**
   * Compute the row of character `chars[d − 1]` (rows up to d − 1 hold
   * `chars[0, d − 1)`). False when the whole row exceeds the maximum: `deadAt`
   * is then d.
   */
  extend(chars: Int32Array, d: number): boolean {
    const rows = this.rows;
    const query = this.query;
    const n = this.maxDistance;
    const cap = n + 1;
    const m = query.length;
    const w = this.width;
    const row = d * w;
    const prev = row - w;
    const prev2 = prev - w;
    const c = chars[d - 1]!;
    const before = d > 1 ? chars[d - 2]! : -1;
    const lo = d - n > 1 ? d - n : 1;
    const hi = d + n < m ? d + n : m;
    const first = d <= n ? d : cap;
    rows[row] = first;
    if (lo > 1) rows[row + lo - 1] = cap;
    let min = first;
    for (let j = lo; j <= hi; j++) {
      const q = query[j - 1]!;
      let v = rows[prev + j - 1]! + (c === q ? 0 : 1);
      const up = rows[prev + j]! + 1;
      if (up < v) v = up;
      const left = rows[row + j - 1]! + 1;
      if (left < v) v = left;
      if (j > 1 && c === query[j - 2] && before === q) {
        const swapped = rows[prev2 + j - 2]! + 1;
        if (swapped < v) v = swapped;
      }
      if (v > cap) v = cap;
      rows[row + j] = v;
      if (v < min) min = v;
    }
    if (hi < m) rows[row + hi + 1] = cap;
    this.valid = d;
    if (min > n) {
      this.deadAt = d;
      return false;
    }
    return true;
  }

  /** The distance of a term of `length` characters whose rows are all computed, or −1. */
  result(length: number): number {
    const m = this.query.length;
    const n = this.maxDistance;
    if (length - m > n || m - length > n) return -1;
    const v = this.rows[length * this.width + m]!;
    return v <= n ? v : -1;
  }
}

/** Receives a matching term, its distance and its document frequency in the reader. */
export type FuzzyVisitor = (term: string, distance: number, df: number) => void;

/**
 * Visit each term of `reader` that starts with `base` and whose rest is
 * within the automaton's maximum of its token.
 */
export function visitFuzzyTerms(reader: SearchReader, base: string, automaton: EditDistanceAutomaton, visit: FuzzyVisitor): void {
  if ('dictionary' in reader) walkSegment(reader, base, automaton, visit);
  else walkBuffer(reader, base, automaton, visit);
}

/**
 * The write buffer's terms, in the order they were first added: no sorting
 * (sorting its ~10⁵ terms per query cost more than the whole walk), so no
 * rows are shared, but each term stops at the first row beyond the maximum.
 */
function walkBuffer(reader: BufferSearchReader, base: string, automaton: EditDistanceAutomaton, visit: FuzzyVisitor): void {
  const postings = reader.postings;
  const names = postings.names;
  let chars: Int32Array = new Int32Array(64);
  for (let id = 0; id < names.length; id++) {
    const term = names[id]!;
    if (!term.startsWith(base)) continue;
    let d = automaton.resume(0);
    let alive = true;
    for (let i = base.length; i < term.length;) {
      const cp = term.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      if (d === chars.length) chars = grow(chars, d + 1);
      chars[d++] = cp;
      if (!automaton.extend(chars, d)) {
        alive = false;
        break;
      }
    }
    if (!alive) continue;
    const distance = automaton.result(d);
    if (distance >= 0) visit(term, distance, postings.docFreq(id));
  }
}

function grow(a: Int32Array, atLeast: number): Int32Array {
  const b = new Int32Array(Math.max(atLeast, a.length * 2));
  b.set(a);
  return b;
}

function growBytes(a: Uint8Array, atLeast: number): Uint8Array {
  const b = new Uint8Array(Math.max(atLeast, a.length * 2));
  b.set(a);
  return b;
}

/** Position `cursor` on the first term ≥ `key[0, keyLength)`; false past the end. */
function seek(cursor: TermsIterator, dictionary: TermDictionary, key: Uint8Array, keyLength: number): boolean {
  cursor.startBlock(dictionary.blockFor(key, keyLength));
  while (cursor.step()) {
    if (compareBytes(cursor.termBytes, 0, cursor.termLength, key, keyLength) >= 0) return true;
  }
  return false;
}

/**
 * A segment's dictionary, walked on its UTF-8 bytes: a term's characters are
 * decoded only as far as the rows need them (most terms die within N + 2
 * characters), and it is decoded to a string only when it matches.
 */
function walkSegment(reader: SegmentSearchReader, base: string, automaton: EditDistanceAutomaton, visit: FuzzyVisitor): void {
  const dictionary = reader.dictionary;
  if (dictionary.termCount === 0) return;
  const cursor = new TermsIterator(dictionary);
  const baseKey = encoder.encode(base);
  const baseLength = baseKey.length;
  if (!seek(cursor, dictionary, baseKey, baseLength)) return;
  // The last walked term: its bytes up to what was decoded, its code points and where each ends.
  let previous: Uint8Array = new Uint8Array(256);
  previous.set(baseKey);
  let previousBytes = baseLength;
  let previousCount = 0;
  let chars: Int32Array = new Int32Array(64);
  let ends: Int32Array = new Int32Array(64);
  /** Bytes of the prefix that died on the last walked term (0: none). */
  let deadBytes = 0;
  let skipped = 0;
  let seekKey: Uint8Array = new Uint8Array(64);
  for (;;) {
    const bytes = cursor.termBytes;
    const length = cursor.termLength;
    if (length < baseLength) return;
    for (let i = 0; i < baseLength; i++) if (bytes[i] !== baseKey[i]) return;
    // Bytes in common with the last walked term, from the base on.
    let sharedBytes = baseLength;
    const limit = length < previousBytes ? length : previousBytes;
    while (sharedBytes < limit && bytes[sharedBytes] === previous[sharedBytes]) sharedBytes++;
    if (deadBytes > 0 && sharedBytes >= deadBytes) {
      if (++skipped < LINEAR_SKIP_STEPS) {
        if (!cursor.step()) return;
        continue;
      }
      // Past every extension of the dead prefix: UTF-8 never uses byte 0xff, so its last byte can grow by one.
      const keyLength = deadBytes;
      if (seekKey.length < keyLength) seekKey = growBytes(seekKey, keyLength);
      for (let i = 0; i < keyLength; i++) seekKey[i] = previous[i]!;
      seekKey[keyLength - 1]!++;
      deadBytes = 0;
      skipped = 0;
      if (!seek(cursor, dictionary, seekKey, keyLength)) return;
      continue;
    }
    skipped = 0;
    // Characters wholly inside the common bytes are the last term's: keep them and their rows.
    let count = previousCount;
    while (count > 0 && ends[count - 1]! > sharedBytes) count--;
    let position = count > 0 ? ends[count - 1]! : baseLength;
    let d = automaton.resume(count);
    let alive = true;
    for (;;) {
      if (d === count) {
        if (position >= length) break;
        const b = bytes[position]!;
        let cp: number;
        if (b < 0x80) {
          cp = b;
          position += 1;
        } else if (b < 0xe0) {
          cp = ((b & 0x1f) << 6) | (bytes[position + 1]! & 0x3f);
          position += 2;
        } else if (b < 0xf0) {
          cp = ((b & 0x0f) << 12) | ((bytes[position + 1]! & 0x3f) << 6) | (bytes[position + 2]! & 0x3f);
          position += 3;
        } else {
          cp = ((b & 0x07) << 18) | ((bytes[position + 1]! & 0x3f) << 12) | ((bytes[position + 2]! & 0x3f) << 6) | (bytes[position + 3]! & 0x3f);
          position += 4;
        }
        if (count === chars.length) {
          chars = grow(chars, count + 1);
          ends = grow(ends, count + 1);
        }
        chars[count] = cp;
        ends[count] = position;
        count++;
      }
      d++;
      if (!automaton.extend(chars, d)) {
        alive = false;
        break;
      }
    }
    // Remember this term as far as it was decoded (the cursor rewrites its buffer on the next step).
    const decodedBytes = count > 0 ? ends[count - 1]! : baseLength;
    if (previous.length < decodedBytes) previous = growBytes(previous, decodedBytes);
    for (let i = sharedBytes; i < decodedBytes; i++) previous[i] = bytes[i]!;
    previousBytes = decodedBytes;
    previousCount = count;
    if (alive) {
      const distance = automaton.result(d);
      if (distance >= 0) visit(cursor.term(), distance, cursor.info.df);
      deadBytes = 0;
    } else {
      deadBytes = ends[automaton.deadAt - 1]!;
    }
    if (!cursor.step()) return;
  }
}

/** A fuzzy expansion: a term, its edit distance and its document frequency over the readers. */
export interface FuzzyExpansion {
  readonly term: string;
  readonly distance: number;
  readonly df: number;
}

/**
 * The terms of all readers starting with `base` whose rest is within
 * `maxDistance` edits of `token`: the `max` best, nearest first, then most
 * frequent (document frequency summed over readers), then in term order.
 */
export function expandFuzzy(
  readers: readonly SearchReader[], base: string, token: string, maxDistance: number, max = FUZZY_EXPANSIONS_MAX,
): FuzzyExpansion[] {
  const automaton = new EditDistanceAutomaton(token, maxDistance);
  const found = new Map<string, { distance: number; df: number }>();
  for (const reader of readers) {
    visitFuzzyTerms(reader, base, automaton, (term, distance, df) => {
      const entry = found.get(term);
      if (entry === undefined) found.set(term, { distance, df });
      else entry.df += df;
    });
  }
  const all: FuzzyExpansion[] = [];
  for (const [term, { distance, df }] of found) all.push({ term, distance, df });
  all.sort((a, b) => a.distance - b.distance || b.df - a.df || compareCodePoints(a.term, b.term));
  return all.length > max ? all.slice(0, max) : all;
}
