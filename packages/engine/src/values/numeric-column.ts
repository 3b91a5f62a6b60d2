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
  ) {}

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
}
