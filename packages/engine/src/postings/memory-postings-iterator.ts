/**
 * Doc-at-a-time iterator over a write-buffer term (buffered-postings.ts), in
 * docid order, skipping postings of deleted buffer ordinals (an update leaves
 * the old ordinal deleted and the same docid at a new one, so without the skip
 * a docid could appear twice). It reads the postings present at `reset`.
 *
 * When the buffer's docids were added in ascending order (the common case:
 * new documents), ordinal order is docid order and the iterator decodes the
 * term's streams as it goes; `advance` jumps by the term's skip entries,
 * then steps. Otherwise `reset` decodes the term's ordinals
 * and frequencies and sorts them by docid (positions are decoded at the first
 * `positions()` call): work per term per query, bounded by the buffer.
 */
import { BufferedPostings, DecodedTerm, PostingsCursor } from './buffered-postings.js';
import { NO_MORE_DOCS } from './constants.js';

export class MemoryPostingsIterator {
  docid = -1;
  ordinal = -1;
  freq = 0;
  /** Whether positions() has data. */
  withPositions = false;

  private postings: BufferedPostings | null = null;
  private termId = -1;
  private docidOf: Uint32Array = new Uint32Array(0);
  private deleted: Uint8Array = new Uint8Array(0);
  private readonly cursor = new PostingsCursor();
  /** Out of docid order: the decoded term and its posting indices in docid order; null in order. */
  private decoded: DecodedTerm | null = null;
  private order: Int32Array | null = null;
  private decodedPositions = false;
  private count = 0;
  private index = -1;
  /** Posting index whose positions are in positionsBuffer. */
  private positionsIndex = -1;
  /** 16 entries: 64 bytes, which V8 keeps on its heap (a larger typed array is an off-heap allocation per iterator, per query). */
  private positionsBuffer = new Int32Array(16);

  /**
   * Iterate term `termId` of `postings`. `docidOf[ordinal]` maps buffer
   * ordinals to docids, `deleted[ordinal]` is 1 for replaced or deleted
   * documents; `inDocidOrder` says whether ordinals were assigned in
   * ascending docid order.
   */
  reset(postings: BufferedPostings, termId: number, docidOf: Uint32Array, deleted: Uint8Array, inDocidOrder: boolean): this {
    this.postings = postings;
    this.termId = termId;
    this.docidOf = docidOf;
    this.deleted = deleted;
    this.index = -1;
    this.positionsIndex = -1;
    this.ordinal = -1;
    this.freq = 0;
    if (inDocidOrder) {
      this.cursor.reset(postings, termId);
      this.count = this.cursor.count;
      this.withPositions = this.cursor.withPositions;
      this.order = null;
    } else {
      const decoded = (this.decoded ??= new DecodedTerm()).decode(postings, termId, false);
      this.decodedPositions = false;
      const n = decoded.count;
      this.count = n;
      this.withPositions = decoded.withPositions;
      if (this.order === null || this.order.length < n) this.order = new Int32Array(Math.max(n, 16));
      const order = this.order;
      for (let i = 0; i < n; i++) order[i] = i;
      const ordinals = decoded.ordinals;
      order.subarray(0, n).sort((a, b) => docidOf[ordinals[a]!]! - docidOf[ordinals[b]!]!);
    }
    this.docid = this.count === 0 ? NO_MORE_DOCS : -1;
    return this;
  }

  cost(): number {
    return this.count;
  }

  next(): number {
    const deleted = this.deleted;
    if (this.order === null) {
      const cursor = this.cursor;
      while (cursor.next()) {
        if (deleted[cursor.ordinal] === 0) return this.land(cursor.index, cursor.ordinal, cursor.freq);
      }
      return this.exhaust();
    }
    const order = this.order;
    const ordinals = this.decoded!.ordinals;
    for (let i = this.index + 1; i < this.count; i++) {
      const ordinal = ordinals[order[i]!]!;
      if (deleted[ordinal] === 0) return this.land(i, ordinal, this.decoded!.freqs[order[i]!]!);
    }
    return this.exhaust();
  }

  advance(target: number): number {
    if (this.docid >= target) return this.docid;
    const deleted = this.deleted;
    const docidOf = this.docidOf;
    if (this.order === null) {
      const cursor = this.cursor;
      cursor.skipTo(docidOf, target);
      while (cursor.next()) {
        const ordinal = cursor.ordinal;
        if (docidOf[ordinal]! >= target && deleted[ordinal] === 0) return this.land(cursor.index, ordinal, cursor.freq);
      }
      return this.exhaust();
    }
    const order = this.order;
    const ordinals = this.decoded!.ordinals;
    // Gallop then binary-search the first posting with docid ≥ target.
    let lo = this.index + 1;
    let step = 1;
    let hi = lo;
    while (hi < this.count && docidOf[ordinals[order[hi]!]!]! < target) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    if (hi > this.count) hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docidOf[ordinals[order[mid]!]!]! < target) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.count; i++) {
      const ordinal = ordinals[order[i]!]!;
      if (deleted[ordinal] === 0) return this.land(i, ordinal, this.decoded!.freqs[order[i]!]!);
    }
    return this.exhaust();
  }

  /** Positions of the current document in `[0, freq)` of the returned (reused) array. */
  positions(): Int32Array {
    if (!this.withPositions || this.positionsIndex === this.index) return this.positionsBuffer;
    const n = this.freq;
    if (this.positionsBuffer.length < n) this.positionsBuffer = new Int32Array(Math.max(n, this.positionsBuffer.length * 2));
    const out = this.positionsBuffer;
    if (this.order === null) {
      this.cursor.readPositions(out);
    } else {
      const decoded = this.decoded!;
      if (!this.decodedPositions) {
        decoded.decode(this.postings!, this.termId, true, this.count);
        this.decodedPositions = true;
      }
      const start = decoded.positionsStart[this.order[this.index]!]!;
      const positions = decoded.positions;
      for (let k = 0; k < n; k++) out[k] = positions[start + k]!;
    }
    this.positionsIndex = this.index;
    return out;
  }

  private land(index: number, ordinal: number, freq: number): number {
    this.index = index;
    this.ordinal = ordinal;
    this.freq = freq;
    return (this.docid = this.docidOf[ordinal]!);
  }

  private exhaust(): number {
    this.index = this.count;
    this.ordinal = -1;
    this.freq = 0;
    return (this.docid = NO_MORE_DOCS);
  }
}
