/**
 * Top-k by weight (Tantivy's TopDocs): a binary min-heap of the k best hits
 * so far in parallel typed arrays, plus the exact number of matches. Ties on
 * weight go to the smaller docid (API.md §9.5 orders ties by `_id`; the
 * coordinator applies that when it merges shards). `threshold()` is the
 * weight a document must beat to enter: what MaxScore pruning reads.
 */
import { NO_MORE_DOCS, type Scorer } from '../scorers/doc-iterator.js';

export interface Hit {
  docid: number;
  score: number;
}

export class TopKCollector {
  private readonly scores: Float64Array;
  private readonly docids: Int32Array;
  private size = 0;
  /** Every document offered, kept or not: the exact total (API.md §9.2). */
  total = 0;

  constructor(readonly k: number) {
    this.scores = new Float64Array(Math.max(1, k));
    this.docids = new Int32Array(Math.max(1, k));
  }

  /** Offer one matching document. */
  collect(docid: number, score: number): void {
    this.total++;
    const k = this.k;
    if (k === 0) return;
    if (this.size < k) {
      this.siftUp(this.size++, docid, score);
      return;
    }
    // Worse than the worst kept hit (lower weight, or equal weight and larger docid): skip.
    const worstScore = this.scores[0] as number;
    if (score < worstScore || (score === worstScore && docid > (this.docids[0] as number))) return;
    this.siftDown(0, docid, score);
  }

  /** Weight a new document must exceed to matter once the heap is full (-Infinity before). */
  threshold(): number {
    return this.size < this.k ? Number.NEGATIVE_INFINITY : (this.scores[0] as number);
  }

  /** The kept hits, best first. */
  hits(): Hit[] {
    const out: Hit[] = [];
    for (let i = 0; i < this.size; i++) out.push({ docid: this.docids[i] as number, score: this.scores[i] as number });
    out.sort((a, b) => b.score - a.score || a.docid - b.docid);
    return out;
  }

  /** Run a scorer to exhaustion into this collector. */
  collectAll(scorer: Scorer): this {
    for (let d = scorer.next(); d !== NO_MORE_DOCS; d = scorer.next()) this.collect(d, scorer.score());
    return this;
  }

  /** Heap order: the root is the worst kept hit (smallest weight, then largest docid). */
  private worse(i: number, docid: number, score: number): boolean {
    const s = this.scores[i] as number;
    return s < score || (s === score && (this.docids[i] as number) > docid);
  }

  private siftUp(i: number, docid: number, score: number): void {
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      // Parent better than the new entry: the entry moves up.
      if (!this.better(parent, docid, score)) break;
      this.scores[i] = this.scores[parent] as number;
      this.docids[i] = this.docids[parent] as number;
      i = parent;
    }
    this.scores[i] = score;
    this.docids[i] = docid;
  }

  private better(i: number, docid: number, score: number): boolean {
    const s = this.scores[i] as number;
    return s > score || (s === score && (this.docids[i] as number) < docid);
  }

  private siftDown(i: number, docid: number, score: number): void {
    const n = this.size;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && this.worse(right, this.docids[child] as number, this.scores[child] as number)) child = right;
      if (!this.worse(child, docid, score)) break;
      this.scores[i] = this.scores[child] as number;
      this.docids[i] = this.docids[child] as number;
      i = child;
    }
    this.scores[i] = score;
    this.docids[i] = docid;
  }
}

/** Counting only (COUNT, `_limit: 0`): no weights computed. */
export function countMatches(scorer: Scorer): number {
  let n = 0;
  for (let d = scorer.next(); d !== NO_MORE_DOCS; d = scorer.next()) n++;
  return n;
}
