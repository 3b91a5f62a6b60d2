/**
 * Numeric doc values of one slot over a segment's ordinals.
 *
 * Layout (measured and chosen in segments.bench.ts / the report):
 * - single-valued slot (every doc has at most one value, the common case):
 *   one Float64Array `values[ordinal]`, NaN = missing; `min` and `max` are
 *   the same array and `offsets` is null. A range scan is one pass over it.
 * - multi-valued slot (some doc has an array): `min[ordinal]` and
 *   `max[ordinal]` (NaN = missing) serve sorting (API §9.5: ascending sorts by
 *   a document's smallest value, descending by its largest), and CSR
 *   `offsets` (docCount + 1) + `values` hold every value for range filters
 *   (a doc matches when any value is in range) and aggregations.
 */
import type { Bitset } from './bitset.js';

export class NumericColumn {
  constructor(
    readonly docCount: number,
    readonly min: Float64Array,
    readonly max: Float64Array,
    /** Per ordinal start into `values` (docCount + 1 entries); null when single-valued. */
    readonly offsets: Uint32Array | null,
    /** Single-valued: by ordinal (NaN = missing). Multi-valued: all values, CSR by `offsets`. */
    readonly values: Float64Array,
    /**
     * The column never changes (a segment's): a value-sorted index may be
     * built on the first range scan and kept, so narrow ranges cost
     * O(log n + matches) instead of a pass over every value.
     */
    private readonly immutable = false,
  ) {}

  /** Every value's ordinal, by ascending value (NaN left out); built on demand for immutable columns. */
  private sortedOrdinals: Uint32Array | null = null;
  /** The values in that order. */
  private sortedValues: Float64Array | null = null;

  get multiValued(): boolean {
    return this.offsets !== null;
  }

  hasValue(ordinal: number): boolean {
    return this.min[ordinal] === this.min[ordinal];
  }

  /** Number of values of one doc. */
  valueCount(ordinal: number): number {
    if (this.offsets === null) return this.values[ordinal] === this.values[ordinal] ? 1 : 0;
    return this.offsets[ordinal + 1]! - this.offsets[ordinal]!;
  }

  /** The k-th value of one doc (k < valueCount). */
  valueAt(ordinal: number, k: number): number {
    return this.offsets === null ? this.values[ordinal]! : this.values[this.offsets[ordinal]! + k]!;
  }

  /**
   * Add every ordinal with a value in [from, to] (inclusive; use ±Infinity for
   * open ends) to `into`. Returns how many were added.
   */
  scanRange(from: number, to: number, into: Bitset): number {
    if (this.immutable && this.docCount >= SORTED_INDEX_DOCS_MIN) {
      const matched = this.scanSorted(from, to, into);
      if (matched >= 0) return matched;
    }
    let matched = 0;
    const n = this.docCount;
    const words = into.words;
    if (this.offsets === null) {
      const values = this.values;
      for (let i = 0; i < n; i++) {
        const v = values[i]!;
        if (v >= from && v <= to) {
          words[i >>> 5] = words[i >>> 5]! | (1 << (i & 31));
          matched++;
        }
      }
      return matched;
    }
    const { min, max, offsets, values } = this;
    for (let i = 0; i < n; i++) {
      // min/max prune docs whose whole value span misses the range (and missing docs: NaN).
      if (!(max[i]! >= from && min[i]! <= to)) continue;
      for (let k = offsets[i]!, end = offsets[i + 1]!; k < end; k++) {
        const v = values[k]!;
        if (v >= from && v <= to) {
          words[i >>> 5] = words[i >>> 5]! | (1 << (i & 31));
          matched++;
          break;
        }
      }
    }
    return matched;
  }

  /**
   * The values in [from, to] in ascending order with their ordinals (a
   * slice [lo, hi) of the sorted index), for a single-valued immutable
   * column; null otherwise. Sorting by this column then reads matches in
   * order instead of collecting them all.
   */
  sortedRun(from: number, to: number): { ordinals: Uint32Array; values: Float64Array; lo: number; hi: number } | null {
    if (!this.immutable || this.offsets !== null || this.docCount < SORTED_INDEX_DOCS_MIN) return null;
    if (this.sortedValues === null) this.buildSortedIndex();
    const values = this.sortedValues!;
    return { ordinals: this.sortedOrdinals!, values, lo: lowerBound(values, from, false), hi: lowerBound(values, to, true) };
  }

  /**
   * The range through the sorted index when it selects few enough values
   * (a quarter of the docs at most: beyond that the sequential pass wins);
   * −1 when the caller should scan.
   */
  private scanSorted(from: number, to: number, into: Bitset): number {
    if (this.sortedValues === null) this.buildSortedIndex();
    const values = this.sortedValues!;
    const ordinals = this.sortedOrdinals!;
    const lo = lowerBound(values, from, false);
    const hi = lowerBound(values, to, true);
    if ((hi - lo) * 4 > this.docCount) return -1;
    const words = into.words;
    let matched = 0;
    for (let i = lo; i < hi; i++) {
      const o = ordinals[i]!;
      const w = o >>> 5;
      const bit = 1 << (o & 31);
      // A multi-valued doc may have several values in range: count it once.
      if ((words[w]! & bit) === 0) {
        words[w] = words[w]! | bit;
        matched++;
      }
    }
    return matched;
  }

  private buildSortedIndex(): void {
    const offsets = this.offsets;
    const values = this.values;
    let count = 0;
    for (let i = 0; i < values.length; i++) if (values[i] === values[i]) count++;
    const order = new Uint32Array(count);
    const ordinalOfValue = new Uint32Array(count);
    let k = 0;
    for (let o = 0; o < this.docCount; o++) {
      const start = offsets === null ? o : offsets[o]!;
      const end = offsets === null ? o + 1 : offsets[o + 1]!;
      for (let v = start; v < end; v++) {
        if (values[v] !== values[v]) continue;
        order[k] = v;
        ordinalOfValue[k] = o;
        k++;
      }
    }
    const positions = Array.from({ length: count }, (_, i) => i);
    positions.sort((a, b) => values[order[a]!]! - values[order[b]!]! || a - b);
    const sortedValues = new Float64Array(count);
    const sortedOrdinals = new Uint32Array(count);
    for (let i = 0; i < count; i++) {
      const p = positions[i]!;
      sortedValues[i] = values[order[p]!]!;
      sortedOrdinals[i] = ordinalOfValue[p]!;
    }
    this.sortedValues = sortedValues;
    this.sortedOrdinals = sortedOrdinals;
  }
}

/** Columns smaller than this are scanned: the sequential pass is cheap and the index not worth its memory. */
const SORTED_INDEX_DOCS_MIN = 4096;

/** First index whose value is ≥ x (or > x when `after`), in ascending `values`. */
function lowerBound(values: Float64Array, x: number, after: boolean): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = values[mid]!;
    if (after ? v <= x : v < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
