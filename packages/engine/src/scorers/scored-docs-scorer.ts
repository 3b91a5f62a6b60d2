/**
 * A scorer over precomputed matches: ascending docids, each with its own
 * weight (geo shapes weighted by their distance, geo-weight.ts).
 */
import { NO_MORE_DOCS, type Scorer } from './doc-iterator.js';

export class ScoredDocsScorer implements Scorer {
  docid = 0;
  private i = -1;
  private readonly max: number;

  constructor(private readonly docids: Uint32Array, private readonly scores: Float64Array) {
    let max = 0;
    for (let k = 0; k < scores.length; k++) if (scores[k]! > max) max = scores[k]!;
    this.max = max;
  }

  next(): number {
    this.i++;
    return (this.docid = this.i < this.docids.length ? this.docids[this.i]! : NO_MORE_DOCS);
  }

  advance(target: number): number {
    if (this.i >= 0 && this.docid >= target) return this.docid;
    const a = this.docids;
    let lo = this.i + 1;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    this.i = lo;
    return (this.docid = lo < a.length ? a[lo]! : NO_MORE_DOCS);
  }

  cost(): number {
    return this.docids.length;
  }

  score(): number {
    return this.scores[this.i]!;
  }

  maxScore(): number {
    return this.max;
  }
}
