/**
 * Boolean combinations of scorers, document at a time (API.md §9.3.2):
 * conjunction (leapfrog over `advance`), disjunction (a binary heap on
 * docid), exclusion, xor, and-maybe, filter and max. Inner loops are indexed
 * loops over arrays of scorers: no closures, no per-document allocation.
 */
import { NO_MORE_DOCS, type Scorer } from './doc-iterator.js';

/** `_and` / `_filter`: documents matching every scorer. Weight: the sum over `scoring` scorers. */
export class ConjunctionScorer implements Scorer {
  docid = 0;
  private readonly byCost: Scorer[];

  /** `scoringCount`: the first n of `scorers` add to the weight (the rest only filter). */
  constructor(private readonly scorers: Scorer[], private readonly scoringCount = scorers.length) {
    this.byCost = cheapestFirst([...scorers]);
  }

  next(): number {
    const lead = this.byCost[0] as Scorer;
    return this.align(lead.next());
  }

  advance(target: number): number {
    const lead = this.byCost[0] as Scorer;
    return this.align(lead.advance(target));
  }

  /** Leapfrog: move everyone to the lead's candidate; any overshoot becomes the new candidate. */
  private align(candidate: number): number {
    const its = this.byCost;
    const n = its.length;
    outer: while (candidate !== NO_MORE_DOCS) {
      for (let i = 1; i < n; i++) {
        const it = its[i] as Scorer;
        let d = it.docid;
        if (d < candidate) d = it.advance(candidate);
        if (d > candidate) {
          candidate = (its[0] as Scorer).advance(d);
          continue outer;
        }
      }
      return (this.docid = candidate);
    }
    return (this.docid = NO_MORE_DOCS);
  }

  cost(): number {
    return (this.byCost[0] as Scorer).cost();
  }

  score(): number {
    return sumOfScores(this.scorers, this.scoringCount);
  }

  maxScore(): number {
    return sumOfMaxScores(this.scorers, this.scoringCount);
  }
}

/**
 * `items` ordered by cost, cheapest first, in place: by insertion (a
 * conjunction has a few; Array.prototype.sort allocates work space on every
 * call, ~6 KB per two-term query over the 8 readers of the Debian index).
 */
export function cheapestFirst<T extends { cost(): number }>(items: T[]): T[] {
  for (let i = 1; i < items.length; i++) {
    const item = items[i] as T;
    const cost = item.cost();
    let j = i - 1;
    while (j >= 0 && (items[j] as T).cost() > cost) {
      items[j + 1] = items[j] as T;
      j--;
    }
    items[j + 1] = item;
  }
  return items;
}

/** The weight of a conjunction: the sum over its first `count` scorers (the rest only filter). */
export function sumOfScores(scorers: readonly Scorer[], count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += (scorers[i] as Scorer).score();
  return sum;
}

/** The bound of sumOfScores. */
export function sumOfMaxScores(scorers: readonly Scorer[], count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += (scorers[i] as Scorer).maxScore();
  return sum;
}

/**
 * Union of scorers on a binary min-heap keyed by docid. `combine` chooses the
 * weight of a document from the weights of the scorers positioned on it:
 * 'sum' (`_or`), 'max' (`_max`), or parity for `_xor` (odd count matches).
 */
export class DisjunctionScorer implements Scorer {
  docid = 0;
  private readonly heap: Scorer[];
  private readonly size: number;
  private started = false;
  private currentScore = 0;
  private currentCount = 0;

  /** Indexes of heap entries still to visit in `gather` (at most 2 per entry + 1). */
  private readonly stack: Int32Array;

  constructor(scorers: Scorer[], private readonly combine: 'sum' | 'max' | 'xor' = 'sum') {
    this.heap = [...scorers];
    this.size = this.heap.length;
    this.stack = new Int32Array(2 * this.size + 2);
  }

  next(): number {
    if (!this.started) {
      this.started = true;
      for (let i = 0; i < this.size; i++) (this.heap[i] as Scorer).next();
      this.heapify();
    } else {
      this.popCurrent();
    }
    return this.settle();
  }

  advance(target: number): number {
    if (!this.started) {
      this.started = true;
      for (let i = 0; i < this.size; i++) (this.heap[i] as Scorer).advance(target);
      this.heapify();
      return this.settle();
    }
    if (this.docid >= target) return this.docid;
    // Move every scorer below target forward, restoring the heap as we go.
    while (this.size > 0) {
      const top = this.heap[0] as Scorer;
      if (top.docid >= target) break;
      top.advance(target);
      this.siftTop();
    }
    return this.settle();
  }

  /** Step every scorer on the current docid past it. */
  private popCurrent(): void {
    const current = this.docid;
    while (this.size > 0) {
      const top = this.heap[0] as Scorer;
      if (top.docid !== current) break;
      top.next();
      this.siftTop();
    }
  }

  /** Position on the smallest docid, gathering the weight of the scorers on it; skip even counts for xor. */
  private settle(): number {
    for (;;) {
      if (this.size === 0) return (this.docid = NO_MORE_DOCS);
      const d = (this.heap[0] as Scorer).docid;
      if (d === NO_MORE_DOCS) return (this.docid = NO_MORE_DOCS);
      this.docid = d;
      this.gather(d);
      if (this.combine !== 'xor' || (this.currentCount & 1) === 1) return d;
      this.popCurrent();
    }
  }

  /**
   * Weigh the heap entries positioned on docid `d`: they form a subtree at the
   * root, walked with a reused index stack (no recursion, no closures).
   */
  private gather(d: number): void {
    const heap = this.heap;
    const stack = this.stack;
    const max = this.combine === 'max';
    let top = 0;
    let count = 0;
    let score = 0;
    stack[top++] = 0;
    while (top > 0) {
      const i = stack[--top] as number;
      if (i >= this.size) continue;
      const s = heap[i] as Scorer;
      if (s.docid !== d) continue;
      count++;
      const w = s.score();
      score = max ? (w > score ? w : score) : score + w;
      stack[top++] = 2 * i + 1;
      stack[top++] = 2 * i + 2;
    }
    this.currentCount = count;
    this.currentScore = score;
  }

  private heapify(): void {
    // Exhausted scorers stay in the heap with docid NO_MORE_DOCS: they sink to the bottom.
    for (let i = (this.size >>> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private siftTop(): void {
    this.siftDown(0);
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = this.size;
    const item = heap[i] as Scorer;
    const key = item.docid;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && (heap[right] as Scorer).docid < (heap[child] as Scorer).docid) child = right;
      if ((heap[child] as Scorer).docid >= key) break;
      heap[i] = heap[child] as Scorer;
      i = child;
    }
    heap[i] = item;
  }

  cost(): number {
    let sum = 0;
    for (let i = 0; i < this.heap.length; i++) sum += (this.heap[i] as Scorer).cost();
    return sum;
  }

  score(): number {
    return this.currentScore;
  }

  /** Scorers on the current document (xor parity, elite sets). */
  matchingCount(): number {
    return this.currentCount;
  }

  maxScore(): number {
    let result = 0;
    for (let i = 0; i < this.heap.length; i++) {
      const m = (this.heap[i] as Scorer).maxScore();
      result = this.combine === 'max' ? Math.max(result, m) : result + m;
    }
    return result;
  }
}

/** `_and_not` / `_not`: documents of `positive` matched by none of `negative`. Weight: positive's. */
export class ExclusionScorer implements Scorer {
  docid = 0;

  constructor(private readonly positive: Scorer, private readonly negative: Scorer) {}

  next(): number {
    return this.skipExcluded(this.positive.next());
  }

  advance(target: number): number {
    return this.skipExcluded(this.positive.advance(target));
  }

  private skipExcluded(d: number): number {
    const neg = this.negative;
    while (d !== NO_MORE_DOCS) {
      let n = neg.docid;
      if (n < d) n = neg.advance(d);
      if (n !== d) break;
      d = this.positive.next();
    }
    return (this.docid = d);
  }

  cost(): number {
    return this.positive.cost();
  }

  score(): number {
    return this.positive.score();
  }

  maxScore(): number {
    return this.positive.maxScore();
  }
}

/** `_and_maybe`: documents of `required`; weight adds `optional`'s when it matches too. */
export class AndMaybeScorer implements Scorer {
  docid = 0;

  constructor(private readonly required: Scorer, private readonly optional: Scorer) {}

  next(): number {
    return (this.docid = this.required.next());
  }

  advance(target: number): number {
    return (this.docid = this.required.advance(target));
  }

  cost(): number {
    return this.required.cost();
  }

  score(): number {
    const d = this.docid;
    const opt = this.optional;
    let o = opt.docid;
    if (o < d) o = opt.advance(d);
    return this.required.score() + (o === d ? opt.score() : 0);
  }

  maxScore(): number {
    return this.required.maxScore() + this.optional.maxScore();
  }
}

/** Scales a scorer's weight (a term's `_weight`, or 0 for pure filters: ranges, `"*"`). */
export class ConstantWeightScorer implements Scorer {
  constructor(private readonly inner: Scorer, private readonly weight: number) {}

  get docid(): number {
    return this.inner.docid;
  }

  next(): number {
    return this.inner.next();
  }

  advance(target: number): number {
    return this.inner.advance(target);
  }

  cost(): number {
    return this.inner.cost();
  }

  score(): number {
    return this.weight;
  }

  maxScore(): number {
    return this.weight;
  }
}
