/**
 * The iterator every matching structure speaks (Tantivy's DocSet): a current
 * `docid`, `next()`, `advance(target)` to the first docid ≥ target, and one
 * numeric sentinel at the end, NO_MORE_DOCS (postings/constants.ts: the
 * postings iterators end on the same value). Docids are shard-local positive
 * integers.
 */
import { NO_MORE_DOCS } from '../postings/constants.js';

export { NO_MORE_DOCS };

export interface DocIterator {
  /** Current docid: 0 before the first `next()`/`advance()`, NO_MORE_DOCS when exhausted. */
  readonly docid: number;
  /** Move to the next matching docid and return it (or NO_MORE_DOCS). */
  next(): number;
  /** Move to the first matching docid ≥ target (never backwards) and return it. */
  advance(target: number): number;
  /** Upper bound of the number of docids it yields: conjunctions lead with the cheapest. */
  cost(): number;
}

/** A DocIterator that also weighs the current document. */
export interface Scorer extends DocIterator {
  /** Weight of the current document (call only on a real docid). */
  score(): number;
  /** An upper bound of `score()` over all documents (for MaxScore pruning). */
  maxScore(): number;
}

/** Matches nothing. */
export class EmptyScorer implements Scorer {
  docid = 0;
  next(): number {
    return (this.docid = NO_MORE_DOCS);
  }
  advance(): number {
    return (this.docid = NO_MORE_DOCS);
  }
  cost(): number {
    return 0;
  }
  score(): number {
    return 0;
  }
  maxScore(): number {
    return 0;
  }
}

/** Matches a sorted array of docids with a constant weight (tests, small filters, ID lookups). */
export class ArrayScorer implements Scorer {
  docid = 0;
  private i = -1;

  constructor(private readonly docids: ArrayLike<number>, private readonly weight = 0) {}

  next(): number {
    this.i++;
    return (this.docid = this.i < this.docids.length ? (this.docids[this.i] as number) : NO_MORE_DOCS);
  }

  advance(target: number): number {
    // Galloping search from the current position: cheap for short and long jumps alike.
    const a = this.docids;
    let lo = this.i + 1;
    let step = 1;
    let hi = lo;
    while (hi < a.length && (a[hi] as number) < target) {
      lo = hi + 1;
      hi += step;
      step <<= 1;
    }
    if (hi > a.length) hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((a[mid] as number) < target) lo = mid + 1;
      else hi = mid;
    }
    this.i = lo;
    return (this.docid = lo < a.length ? (a[lo] as number) : NO_MORE_DOCS);
  }

  cost(): number {
    return this.docids.length;
  }

  score(): number {
    return this.weight;
  }

  maxScore(): number {
    return this.weight;
  }
}
