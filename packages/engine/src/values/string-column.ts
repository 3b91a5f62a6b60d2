/**
 * String doc values of one slot over a segment's ordinals: a sorted unique
 * dictionary (string-dictionary.ts) and per-doc dictionary ordinals, so sorts
 * compare integers and terms aggregations count into an array by ordinal.
 *
 * Layout, as for numbers (numeric-column.ts): single-valued slots keep one
 * Int32Array `ords[ordinal]` (−1 = missing, `min` = `max` = it); multi-valued
 * slots keep `min`/`max` ordinals per doc plus CSR `offsets` + `ords`.
 */
import type { Bitset } from './bitset.js';
import type { StringDictionary } from './string-dictionary.js';

export class StringColumn {
  constructor(
    readonly docCount: number,
    readonly dictionary: StringDictionary,
    readonly min: Int32Array,
    readonly max: Int32Array,
    readonly offsets: Uint32Array | null,
    readonly ords: Int32Array,
  ) {}

  get multiValued(): boolean {
    return this.offsets !== null;
  }

  valueCount(ordinal: number): number {
    if (this.offsets === null) return this.ords[ordinal]! >= 0 ? 1 : 0;
    return this.offsets[ordinal + 1]! - this.offsets[ordinal]!;
  }

  /** Dictionary ordinal of the k-th value of one doc. */
  ordAt(ordinal: number, k: number): number {
    return this.offsets === null ? this.ords[ordinal]! : this.ords[this.offsets[ordinal]! + k]!;
  }

  /** The k-th value of one doc, decoded (allocates a string). */
  valueAt(ordinal: number, k: number): string {
    return this.dictionary.term(this.ordAt(ordinal, k));
  }

  /**
   * Add every ordinal with a value in [from, to] (code point order; null =
   * open end) to `into`. Returns how many were added.
   */
  scanRange(from: string | null, to: string | null, into: Bitset): number {
    let lo = 0;
    let hi = this.dictionary.count - 1;
    if (from !== null) {
      const at = this.dictionary.lookup(from);
      lo = at >= 0 ? at : -at - 1;
    }
    if (to !== null) {
      const at = this.dictionary.lookup(to);
      hi = at >= 0 ? at : -at - 2;
    }
    if (lo > hi) return 0;
    return this.scanOrdinals(lo, hi, into);
  }

  /** Add every ordinal with a dictionary ordinal in [lo, hi] to `into`. */
  scanOrdinals(lo: number, hi: number, into: Bitset): number {
    let matched = 0;
    const n = this.docCount;
    const words = into.words;
    if (this.offsets === null) {
      const ords = this.ords;
      for (let i = 0; i < n; i++) {
        const v = ords[i]!;
        if (v >= lo && v <= hi) {
          words[i >>> 5] = words[i >>> 5]! | (1 << (i & 31));
          matched++;
        }
      }
      return matched;
    }
    const { min, max, offsets, ords } = this;
    for (let i = 0; i < n; i++) {
      if (max[i]! < lo || min[i]! > hi || min[i]! < 0) continue;
      for (let k = offsets[i]!, end = offsets[i + 1]!; k < end; k++) {
        const v = ords[k]!;
        if (v >= lo && v <= hi) {
          words[i >>> 5] = words[i >>> 5]! | (1 << (i & 31));
          matched++;
          break;
        }
      }
    }
    return matched;
  }
}
