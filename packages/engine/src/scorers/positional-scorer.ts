/**
 * Phrase and proximity matching (API.md §9.3.1): the conjunction of the
 * terms, kept only where their positions fit.
 *
 * - `exact`: `"a b c"`, term i at position p + i for some p;
 * - `ordered`: `_phrase`, positions strictly increasing within `window`
 *   positions (last − first < window);
 * - `near`: `_near`, one position of each term within `window` positions, any order.
 *
 * Weight: the sum of the terms' weights (Xapian's OP_PHRASE / OP_NEAR weigh
 * as an AND). Position arrays are the iterators' own reused buffers; the
 * checks allocate nothing.
 */
import { ConjunctionScorer } from './boolean.js';
import { NO_MORE_DOCS, type Scorer } from './doc-iterator.js';
import type { TermScorer } from './term-scorer.js';

export type PositionalMode = 'exact' | 'ordered' | 'near';

/** Window of `_near` and `_phrase` (§9.3.1: "within 10 positions"). */
export const PROXIMITY_WINDOW = 10;

export class PositionalScorer implements Scorer {
  docid = 0;
  private readonly conjunction: ConjunctionScorer;
  /** Per term: its positions array and count for the current candidate. */
  private readonly lists: Int32Array[];
  private readonly counts: Int32Array;

  constructor(private readonly terms: TermScorer[], private readonly mode: PositionalMode, private readonly window: number) {
    this.conjunction = new ConjunctionScorer(terms);
    this.lists = terms.map(() => new Int32Array(0));
    this.counts = new Int32Array(terms.length);
  }

  next(): number {
    return this.check(this.conjunction.next());
  }

  advance(target: number): number {
    if (this.docid >= target) return this.docid;
    return this.check(this.conjunction.advance(target));
  }

  private check(d: number): number {
    while (d !== NO_MORE_DOCS && !this.fits()) d = this.conjunction.next();
    return (this.docid = d);
  }

  private fits(): boolean {
    const n = this.terms.length;
    for (let i = 0; i < n; i++) {
      const t = this.terms[i]!;
      this.lists[i] = t.positions();
      this.counts[i] = t.freq();
    }
    switch (this.mode) {
      case 'exact':
        return this.exact();
      case 'ordered':
        return this.ordered();
      case 'near':
        return this.near();
    }
  }

  private exact(): boolean {
    const lists = this.lists;
    const counts = this.counts;
    const n = lists.length;
    const first = lists[0]!;
    for (let k = 0; k < counts[0]!; k++) {
      const p = first[k]!;
      let ok = true;
      for (let i = 1; i < n && ok; i++) ok = contains(lists[i]!, counts[i]!, p + i);
      if (ok) return true;
    }
    return false;
  }

  /** Greedy from each start: the earliest position after the previous is the best choice for a fixed start. */
  private ordered(): boolean {
    const lists = this.lists;
    const counts = this.counts;
    const n = lists.length;
    const first = lists[0]!;
    for (let k = 0; k < counts[0]!; k++) {
      const start = first[k]!;
      let previous = start;
      let ok = true;
      for (let i = 1; i < n && ok; i++) {
        const next = firstAbove(lists[i]!, counts[i]!, previous);
        if (next < 0 || next - start >= this.window) ok = false;
        else previous = next;
      }
      if (ok) return true;
    }
    return false;
  }

  /** Some window [a, a + window) starting at a term's position holds a position of every term. */
  private near(): boolean {
    const lists = this.lists;
    const counts = this.counts;
    const n = lists.length;
    for (let j = 0; j < n; j++) {
      const anchorList = lists[j]!;
      for (let k = 0; k < counts[j]!; k++) {
        const a = anchorList[k]!;
        let ok = true;
        for (let i = 0; i < n && ok; i++) {
          if (i === j) continue;
          const p = firstAbove(lists[i]!, counts[i]!, a - 1);
          ok = p >= 0 && p - a < this.window;
        }
        if (ok) return true;
      }
    }
    return false;
  }

  cost(): number {
    return this.conjunction.cost();
  }

  score(): number {
    return this.conjunction.score();
  }

  maxScore(): number {
    return this.conjunction.maxScore();
  }
}

function contains(list: Int32Array, count: number, p: number): boolean {
  let lo = 0;
  let hi = count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = list[mid]!;
    if (v < p) lo = mid + 1;
    else if (v > p) hi = mid - 1;
    else return true;
  }
  return false;
}

/** Smallest position > p, or −1. */
function firstAbove(list: Int32Array, count: number, p: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! <= p) lo = mid + 1;
    else hi = mid;
  }
  return lo < count ? list[lo]! : -1;
}
