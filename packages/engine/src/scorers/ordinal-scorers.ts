/**
 * Scorers over sets of reader ordinals, weight 0 (API.md §9.3: ranges,
 * non-text equality and `"*"` weigh nothing): every live document of a
 * reader, and the ordinals a value scan or a term union wrote into a Bitset.
 * Segments (and a buffer filled in docid order) walk the bitset directly,
 * since ordinal order is docid order there; otherwise the matching docids are
 * gathered and sorted once per query (the buffer is small).
 */
import { ArrayScorer, NO_MORE_DOCS, type Scorer } from './doc-iterator.js';
import { Bitset } from '../values/bitset.js';
import { ordinalsInDocidOrder, type SearchReader } from '../search/reader.js';

/**
 * Live ordinals of `bits` in docid order, for a reader whose ordinal order is
 * docid order. Collectors that work on ordinals may read `bits` directly
 * (a bulk pass over the words) instead of calling `next()` per document.
 */
export class OrderedBitsetScorer implements Scorer {
  docid = 0;
  private ordinal = -1;

  constructor(readonly reader: SearchReader, readonly bits: Bitset, private readonly count: number) {}

  next(): number {
    return this.from(this.ordinal + 1);
  }

  advance(target: number): number {
    if (this.docid >= target) return this.docid;
    // First ordinal whose docid ≥ target (docidOf ascending).
    const docids = this.reader.docidOf;
    let lo = this.ordinal + 1;
    let hi = this.reader.docCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docids[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return this.from(lo);
  }

  private from(start: number): number {
    const reader = this.reader;
    let o = this.bits.nextSetBit(start);
    while (o >= 0 && !reader.isLiveOrdinal(o)) o = this.bits.nextSetBit(o + 1);
    if (o < 0) {
      this.ordinal = reader.docCount;
      return (this.docid = NO_MORE_DOCS);
    }
    this.ordinal = o;
    return (this.docid = reader.docidOf[o]!);
  }

  cost(): number {
    return this.count;
  }

  score(): number {
    return 0;
  }

  maxScore(): number {
    return 0;
  }
}

/** A weight-0 scorer over the live ordinals set in `bits` (`count`: an upper bound of them, for cost). */
export function bitsetScorer(reader: SearchReader, bits: Bitset, count: number): Scorer {
  if (ordinalsInDocidOrder(reader)) return new OrderedBitsetScorer(reader, bits, count);
  const docids: number[] = [];
  for (let o = bits.nextSetBit(0); o >= 0; o = bits.nextSetBit(o + 1)) if (reader.isLiveOrdinal(o)) docids.push(reader.docidOf[o]!);
  return new ArrayScorer(Uint32Array.from(docids).sort(), 0);
}

/** Every live document of the reader, weight 0. */
export function allDocsScorer(reader: SearchReader): Scorer {
  const bits = new Bitset(reader.docCount);
  bits.fill();
  return bitsetScorer(reader, bits, reader.liveCount);
}
