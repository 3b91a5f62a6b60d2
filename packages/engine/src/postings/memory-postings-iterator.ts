/**
 * Doc-at-a-time iterator over a write-buffer term (term-postings.ts), in
 * docid order, skipping postings of deleted buffer ordinals (an update leaves
 * the old ordinal deleted and the same docid at a new one, so without the skip
 * a docid could appear twice).
 *
 * When the buffer's docids were added in ascending order (the common case:
 * new documents), ordinal order is docid order and the iterator walks the
 * arrays as they are. Otherwise `reset` sorts this term's postings by docid
 * into an index array: one allocation per term per query, bounded by the
 * write buffer's budget.
 */
import { NO_MORE_DOCS } from './constants.js';
import type { TermPostings } from './term-postings.js';

export class MemoryPostingsIterator {
  docid = -1;
  ordinal = -1;
  freq = 0;

  private postings: TermPostings | null = null;
  private docidOf: Uint32Array = new Uint32Array(0);
  private deleted: Uint8Array = new Uint8Array(0);
  /** Posting indices in docid order, or null when posting order is docid order. */
  private order: Int32Array | null = null;
  /** Positions start of each posting (only with `order`). */
  private positionsStart: Uint32Array | null = null;
  private count = 0;
  private index = -1;
  private positionsIndex = 0;
  private positionsPointer = 0;
  private positionsBuffer = new Int32Array(64);

  /**
   * `docidOf[ordinal]` maps buffer ordinals to docids, `deleted[ordinal]` is 1
   * for replaced or deleted documents; `inDocidOrder` says whether ordinals
   * were assigned in ascending docid order.
   */
  reset(postings: TermPostings, docidOf: Uint32Array, deleted: Uint8Array, inDocidOrder: boolean): this {
    this.postings = postings;
    this.docidOf = docidOf;
    this.deleted = deleted;
    this.count = postings.count;
    this.index = -1;
    this.positionsIndex = 0;
    this.positionsPointer = 0;
    this.docid = postings.count === 0 ? NO_MORE_DOCS : -1;
    this.ordinal = -1;
    this.freq = 0;
    if (inDocidOrder) {
      this.order = null;
      this.positionsStart = null;
    } else {
      const n = postings.count;
      const order = new Int32Array(n);
      const starts = new Uint32Array(n);
      let p = 0;
      for (let i = 0; i < n; i++) {
        order[i] = i;
        starts[i] = p;
        p += postings.freqs[i]!;
      }
      const ordinals = postings.ordinals;
      order.sort((a, b) => docidOf[ordinals[a]!]! - docidOf[ordinals[b]!]!);
      this.order = order;
      this.positionsStart = starts;
    }
    return this;
  }

  /** Whether positions() has data. */
  get withPositions(): boolean {
    return this.postings !== null && this.postings.hasPositions;
  }

  cost(): number {
    return this.count;
  }

  next(): number {
    const postings = this.postings!;
    const ordinals = postings.ordinals;
    const order = this.order;
    const deleted = this.deleted;
    let i = this.index + 1;
    while (i < this.count) {
      const ordinal = ordinals[order === null ? i : order[i]!]!;
      if (deleted[ordinal] === 0) return this.land(i, ordinal);
      i++;
    }
    return this.exhaust();
  }

  advance(target: number): number {
    if (this.docid >= target) return this.docid;
    const postings = this.postings!;
    const ordinals = postings.ordinals;
    const order = this.order;
    const deleted = this.deleted;
    const docidOf = this.docidOf;
    // Gallop then binary-search the first posting with docid ≥ target.
    let lo = this.index + 1;
    let step = 1;
    let hi = lo;
    while (hi < this.count && docidOf[ordinals[order === null ? hi : order[hi]!]!]! < target) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    if (hi > this.count) hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docidOf[ordinals[order === null ? mid : order[mid]!]!]! < target) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.count; i++) {
      const ordinal = ordinals[order === null ? i : order[i]!]!;
      if (deleted[ordinal] === 0) return this.land(i, ordinal);
    }
    return this.exhaust();
  }

  /** Positions of the current document in `[0, freq)` of the returned (reused) array. */
  positions(): Int32Array {
    const postings = this.postings!;
    if (!postings.hasPositions) return this.positionsBuffer;
    let start: number;
    if (this.order !== null) {
      start = this.positionsStart![this.order[this.index]!]!;
    } else {
      let p = this.positionsPointer;
      const freqs = postings.freqs;
      for (let i = this.positionsIndex; i < this.index; i++) p += freqs[i]!;
      this.positionsPointer = p;
      this.positionsIndex = this.index;
      start = p;
    }
    const n = this.freq;
    if (this.positionsBuffer.length < n) this.positionsBuffer = new Int32Array(Math.max(n, this.positionsBuffer.length * 2));
    const out = this.positionsBuffer;
    const src = postings.positions;
    for (let k = 0; k < n; k++) out[k] = src[start + k]!;
    return out;
  }

  private land(i: number, ordinal: number): number {
    this.index = i;
    this.ordinal = ordinal;
    this.freq = this.postings!.freqs[this.order === null ? i : this.order[i]!]!;
    return (this.docid = this.docidOf[ordinal]!);
  }

  private exhaust(): number {
    this.index = this.count;
    this.ordinal = -1;
    this.freq = 0;
    return (this.docid = NO_MORE_DOCS);
  }
}
