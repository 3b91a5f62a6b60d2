/**
 * Top-k by sort keys (API.md §9.5): per key a document's smallest value when
 * ascending, its largest when descending (with a reference value: its
 * smallest/largest distance to it), documents without a value last; then
 * relevance (weight descending), then docid ascending (the coordinator
 * re-breaks ties by `_id` when it merges shards).
 *
 * A binary heap of k entries whose root is the worst kept hit. A document's
 * key values go into a scratch array and are compared with the root before
 * anything is allocated; once the heap is full an entering document reuses
 * the evicted entry. String values are decoded from the reader's dictionary
 * (readers have separate dictionaries, so ordinals do not compare across them).
 *
 * With a cursor (`_search_after`, search-model cursor.ts) only the documents
 * ordered after it compete for the heap; those before it are counted
 * (`before`, for `#rank`) and dropped, on the first key alone when it can
 * tell. The total still counts every match.
 */
import { compareSortValues, type SearchAfter, type SortValue } from '@tessera/search-model';
import { NO_MORE_DOCS, type Scorer } from '../scorers/doc-iterator.js';
import type { NumericColumn } from '../values/numeric-column.js';
import { indexOfSorted } from '../values/sorted-search.js';
import type { StringColumn } from '../values/string-column.js';
import { OrderedBitsetScorer } from '../scorers/ordinal-scorers.js';
import { ordinalsInDocidOrder, type SearchReader } from '../search/reader.js';

export type { SortValue };

/**
 * A resolved sort key: relevance, a slot's values (optionally as distance to
 * the number `reference`), a distance measured by a ValueDistance (strings:
 * distance-sort.ts), or one that orders nothing.
 */
export type SortPlan =
  | { readonly kind: 'score'; readonly order: 'asc' | 'desc' }
  | { readonly kind: 'slot'; readonly slot: number; readonly order: 'asc' | 'desc'; readonly reference: number | null }
  | { readonly kind: 'distance'; readonly slot: number; readonly order: 'asc' | 'desc'; readonly distance: ValueDistance }
  | { readonly kind: 'ignored' };

/** Distances of documents' values to a sort key's reference, bound to one reader at a time. */
export interface ValueDistance {
  /** The measure over `reader`'s values, or null when the reader has no values in the slot. */
  bind(reader: SearchReader): ReaderDistance | null;
}

export interface ReaderDistance {
  /** The smallest (or, `largest`, the largest) distance over the document's values; NaN when it has none. */
  distance(ordinal: number, largest: boolean): number;
}

interface Entry {
  docid: number;
  score: number;
  values: SortValue[];
}

export interface SortedHit {
  docid: number;
  score: number;
  sortValues: SortValue[];
}

export class SortCollector {
  total = 0;
  /** Matches ordered before the cursor (none without one). */
  before = 0;
  private readonly heap: Entry[] = [];
  private readonly scratch: SortValue[];
  private readonly numeric: Array<NumericColumn | null>;
  private readonly strings: Array<StringColumn | null>;
  private readonly distances: Array<ReaderDistance | null>;

  constructor(private readonly plans: readonly SortPlan[], private readonly k: number, private readonly after: SearchAfter | null = null) {
    this.scratch = plans.map(() => null);
    this.numeric = plans.map(() => null);
    this.strings = plans.map(() => null);
    this.distances = plans.map(() => null);
  }

  /** Collect every document of `scorer`, which walks `reader`. */
  collectAll(reader: SearchReader, scorer: Scorer): void {
    this.prepare(reader);
    if (scorer instanceof OrderedBitsetScorer && scorer.reader === reader) {
      this.collectBits(scorer);
      return;
    }
    const docidOrdered = ordinalsInDocidOrder(reader);
    const docids = reader.docidOf;
    let ordinal = 0;
    for (let d = scorer.next(); d !== NO_MORE_DOCS; d = scorer.next()) {
      if (docidOrdered) {
        // Matches come in docid order: move the cursor forward (galloping) rather than search from scratch.
        const found = seekOrdinal(docids, ordinal, reader.docCount, d);
        if (found < 0) continue; // not this reader's document: cannot happen for a scorer over it
        ordinal = found;
      } else {
        ordinal = reader.ordinalOf(d);
        if (ordinal < 0) continue;
      }
      this.collect(d, ordinal, scorer);
    }
  }

  private prepare(reader: SearchReader): void {
    for (let i = 0; i < this.plans.length; i++) {
      const plan = this.plans[i]!;
      this.numeric[i] = plan.kind === 'slot' ? reader.numericColumn(plan.slot) : null;
      this.strings[i] = plan.kind === 'slot' ? reader.stringColumn(plan.slot) : null;
      this.distances[i] = plan.kind === 'distance' ? plan.distance.bind(reader) : null;
    }
    this.prepareFirstKey();
  }

  /**
   * A weight-0 range on the first sort key's own column, given as its run of
   * the column's value-sorted index (ascending values in [lo, hi)): the
   * matches are read best first and the walk stops once the heap is full and
   * the next value is strictly worse than the worst kept one (equal values
   * still compete on the later keys). The total is exact: the run's live
   * documents.
   */
  collectSortedRun(reader: SearchReader, ordinals: Uint32Array, values: Float64Array, lo: number, hi: number): void {
    this.prepare(reader);
    const allLive = reader.liveCount === reader.docCount;
    if (allLive) {
      this.total += hi - lo;
    } else {
      for (let i = lo; i < hi; i++) if (reader.isLiveOrdinal(ordinals[i]!)) this.total++;
    }
    if (this.k === 0) return;
    const descending = (this.plans[0] as { order: 'asc' | 'desc' }).order === 'desc';
    const docids = reader.docidOf;
    const heap = this.heap;
    for (let n = 0; n < hi - lo; n++) {
      const i = descending ? hi - 1 - n : lo + n;
      const ordinal = ordinals[i]!;
      if (!allLive && !reader.isLiveOrdinal(ordinal)) continue;
      if (heap.length >= this.k) {
        const worst = heap[0]!.values[0];
        const v = values[i]!;
        if (typeof worst === 'number' && (descending ? v < worst : v > worst)) break;
      }
      this.offer(docids[ordinal]!, ordinal, ZERO_SCORE);
    }
  }

  /** A weight-0 bitset match (ranges, filters): walk the set bits word by word, no per-document calls. */
  private collectBits(scorer: OrderedBitsetScorer): void {
    const reader = scorer.reader;
    const words = scorer.bits.words;
    const docids = reader.docidOf;
    for (let w = 0; w < words.length; w++) {
      let word = words[w]!;
      while (word !== 0) {
        const low = word & -word;
        word ^= low;
        const ordinal = (w << 5) + 31 - Math.clz32(low);
        if (ordinal >= reader.docCount) return;
        if (!reader.isLiveOrdinal(ordinal)) continue;
        this.collect(docids[ordinal]!, ordinal, scorer);
      }
    }
  }

  private collect(docid: number, ordinal: number, scorer: Scorer): void {
    this.total++;
    if (this.k === 0) return;
    this.offer(docid, ordinal, scorer);
  }

  /** Consider one match for the heap (the total is counted by the caller). */
  private offer(docid: number, ordinal: number, scorer: { score(): number }): void {
    const heap = this.heap;
    const full = heap.length >= this.k;
    // Most candidates lose on the first key alone once the heap is full: decide that from the typed array.
    if (full && this.firstColumn !== null && this.rejectedByFirstKey(ordinal)) return;
    if (this.after !== null && this.firstColumn !== null && this.beforeCursorByFirstKey(ordinal)) {
      this.before++;
      return;
    }
    const score = scorer.score();
    const values = this.scratch;
    for (let i = 0; i < this.plans.length; i++) values[i] = this.valueOf(i, ordinal, score);
    if (this.after !== null && !this.isAfterCursor(values, score, this.after)) {
      this.before++;
      return;
    }
    if (!full) {
      heap.push({ docid, score, values: values.slice() });
      this.siftUp(heap.length - 1);
      return;
    }
    const worst = heap[0]!;
    if (this.compare(values, score, docid, worst.values, worst.score, worst.docid) >= 0) return;
    worst.docid = docid;
    worst.score = score;
    for (let i = 0; i < values.length; i++) worst.values[i] = values[i]!;
    this.siftDown(0);
  }

  /** The first key's column when it is a plain numeric slot key (no reference) of this reader. */
  private firstColumn: Float64Array | null = null;
  private firstCount = 0;
  private firstDescending = false;

  private prepareFirstKey(): void {
    this.firstColumn = null;
    const plan = this.plans[0];
    const numbers = this.numeric[0];
    if (plan === undefined || plan.kind !== 'slot' || plan.reference !== null || numbers === null || numbers === undefined) return;
    // A string value in the same slot would order after numbers: keep the exact path then.
    if (this.strings[0] !== null) return;
    this.firstDescending = plan.order === 'desc';
    this.firstColumn = this.firstDescending ? numbers.max : numbers.min;
    this.firstCount = numbers.docCount;
  }

  /** True when the document's first key is strictly worse than the worst kept hit's (it cannot enter). */
  private rejectedByFirstKey(ordinal: number): boolean {
    const column = this.firstColumn!;
    const worst = this.heap[0]!.values[0]!;
    const v = ordinal < this.firstCount ? column[ordinal]! : NaN;
    if (v !== v) return worst !== null; // no value: last, unless the worst kept has none either
    if (worst === null || typeof worst !== 'number') return false;
    return this.firstDescending ? v < worst : v > worst;
  }

  /** True when the document's first key alone orders it strictly before the cursor. */
  private beforeCursorByFirstKey(ordinal: number): boolean {
    const cursor = this.after!.values[0]!;
    // A string or missing cursor value: the exact comparison decides.
    if (typeof cursor !== 'number') return false;
    const column = this.firstColumn!;
    const v = ordinal < this.firstCount ? column[ordinal]! : NaN;
    // No value orders last: never before a cursor.
    if (v !== v) return false;
    return this.firstDescending ? v > cursor : v < cursor;
  }

  /** True when values (with `score` for relevance keys) order strictly after the cursor, or equal to an inclusive one. */
  private isAfterCursor(values: readonly SortValue[], score: number, after: SearchAfter): boolean {
    for (let i = 0; i < this.plans.length; i++) {
      const plan = this.plans[i]!;
      if (plan.kind === 'ignored') continue;
      const cursor = after.values[i] ?? null;
      let c: number;
      if (plan.kind === 'score') {
        // `_score` ascending is best first (see compare()).
        c = typeof cursor !== 'number' || score === cursor ? 0 : (plan.order === 'asc') === (score > cursor) ? -1 : 1;
      } else {
        c = compareSortValues(values[i]!, cursor, plan.order);
      }
      if (c !== 0) return c > 0;
    }
    return after.inclusive;
  }

  private valueOf(i: number, ordinal: number, score: number): SortValue {
    const plan = this.plans[i]!;
    if (plan.kind === 'score') return score;
    if (plan.kind === 'ignored') return null;
    const desc = plan.order === 'desc';
    if (plan.kind === 'distance') {
      const measure = this.distances[i];
      const d = measure === null || measure === undefined ? NaN : measure.distance(ordinal, desc);
      return d === d ? d : null;
    }
    const numbers = this.numeric[i];
    if (numbers !== null && numbers !== undefined && ordinal < numbers.docCount) {
      if (plan.reference === null) {
        const v = desc ? numbers.max[ordinal]! : numbers.min[ordinal]!;
        if (v === v) return v;
      } else {
        const n = numbers.valueCount(ordinal);
        if (n > 0) {
          let best = desc ? -Infinity : Infinity;
          for (let k = 0; k < n; k++) {
            const distance = Math.abs(numbers.valueAt(ordinal, k) - plan.reference);
            if (desc ? distance > best : distance < best) best = distance;
          }
          return best;
        }
      }
    }
    const strings = this.strings[i];
    if (strings !== null && strings !== undefined && plan.reference === null && ordinal < strings.docCount) {
      const ord = desc ? strings.max[ordinal]! : strings.min[ordinal]!;
      if (ord >= 0) return strings.dictionary.term(ord);
    }
    return null;
  }

  /** Negative when hit a ranks before hit b. */
  private compare(a: SortValue[], aScore: number, aDocid: number, b: SortValue[], bScore: number, bDocid: number): number {
    for (let i = 0; i < this.plans.length; i++) {
      const plan = this.plans[i]!;
      if (plan.kind === 'ignored') continue;
      if (plan.kind === 'score') {
        // `_score` ascending is the natural relevance order: best first.
        if (aScore !== bScore) return (plan.order === 'asc') === (aScore > bScore) ? -1 : 1;
        continue;
      }
      const c = compareSortValues(a[i]!, b[i]!, plan.order);
      if (c !== 0) return c;
    }
    if (aScore !== bScore) return aScore > bScore ? -1 : 1;
    return aDocid - bDocid;
  }

  /** The kept hits, best first. */
  hits(): SortedHit[] {
    const out = this.heap.map((e) => ({ docid: e.docid, score: e.score, sortValues: e.values }));
    return out.sort((x, y) => this.compare(x.sortValues, x.score, x.docid, y.sortValues, y.score, y.docid));
  }

  /** Heap order: a parent ranks after (is worse than) its children. */
  private worse(i: number, j: number): boolean {
    const a = this.heap[i]!;
    const b = this.heap[j]!;
    return this.compare(a.values, a.score, a.docid, b.values, b.score, b.docid) > 0;
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      if (!this.worse(i, parent)) break;
      const t = heap[i]!;
      heap[i] = heap[parent]!;
      heap[parent] = t;
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) return;
      let child = left;
      if (left + 1 < n && this.worse(left + 1, left)) child = left + 1;
      if (!this.worse(child, i)) return;
      const t = heap[i]!;
      heap[i] = heap[child]!;
      heap[child] = t;
      i = child;
    }
  }
}

/** The weight of a weight-0 match (ranges, filters). */
const ZERO_SCORE = { score: (): number => 0 };

/**
 * The ordinal of `docid` at or after `from` in the ascending `docids`
 * (galloping then binary search): amortised O(1) for dense matches, O(log
 * gap) for sparse ones. −1 when absent.
 */
function seekOrdinal(docids: Uint32Array, from: number, count: number, docid: number): number {
  let lo = from;
  let step = 1;
  let hi = from;
  while (hi < count && docids[hi]! < docid) {
    lo = hi + 1;
    hi += step;
    step <<= 1;
  }
  return indexOfSorted(docids, docid, lo, Math.min(hi, count - 1));
}
