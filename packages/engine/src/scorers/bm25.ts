/**
 * BM25 with Xapian's defaults (API.md §9.6: k1 = 1, b = 0.5, k3 = 1, minimum
 * normalised length 0.5), over per-field statistics. The per-term constant
 * (idf × query-frequency factor × k1 + 1) is computed once per query, in the
 * Weight; the per-document part is a handful of float operations.
 *
 * As in Xapian's BM25Weight, the idf ratio below 2 is mapped to 0.5·r + 1
 * instead of being clamped, so very common terms keep a small positive weight
 * and never subtract from a document's score. That holds only while the
 * term's document frequency is at most the collection size, which Xapian's
 * statistics guarantee and ours do not (a segment's frequencies still count
 * documents replaced or deleted since, the live count does not): the
 * frequency is capped at the collection size, so a weight is never negative.
 */
export const BM25_DEFAULTS = Object.freeze({ k1: 1, b: 0.5, k3: 1, minNormalisedLength: 0.5 });

export interface Bm25Params {
  k1: number;
  b: number;
  k3: number;
  minNormalisedLength: number;
}

export interface TermStatistics {
  /** Documents in the collection (the shard's live documents, or the whole index's). */
  documents: number;
  /** Documents containing the term. */
  termFrequency: number;
  /** Mean length (terms) of the field over the documents that have it. */
  averageLength: number;
  /** Times the term appears in the query. */
  queryFrequency?: number;
  /** The field's or term's `_weight` factor. */
  factor?: number;
}

export class Bm25Weight {
  /** idf × (k1 + 1) × query-frequency factor × `_weight`. */
  readonly termWeight: number;
  private readonly lengthFactor: number;
  private readonly k1: number;
  private readonly b: number;
  private readonly minNormalisedLength: number;

  constructor(stats: TermStatistics, params: Bm25Params = BM25_DEFAULTS) {
    const n = Math.min(stats.termFrequency, stats.documents);
    let ratio = (stats.documents - n + 0.5) / (n + 0.5);
    if (ratio < 2) ratio = ratio * 0.5 + 1;
    const wqf = stats.queryFrequency ?? 1;
    const queryFactor = params.k3 === 0 ? 1 : ((params.k3 + 1) * wqf) / (params.k3 + wqf);
    this.termWeight = Math.log(ratio) * (params.k1 + 1) * queryFactor * (stats.factor ?? 1);
    this.lengthFactor = stats.averageLength > 0 ? 1 / stats.averageLength : 0;
    this.k1 = params.k1;
    this.b = params.b;
    this.minNormalisedLength = params.minNormalisedLength;
  }

  /** Weight of a document where the term appears `wdf` times in a field of `length` terms. */
  score(wdf: number, length: number): number {
    // Math.max, not a conditional assignment: the two values' merge made V8 box every weight (a HeapNumber per call).
    const normalised = Math.max(length * this.lengthFactor, this.minNormalisedLength);
    const denominator = this.k1 * (normalised * this.b + (1 - this.b)) + wdf;
    return (this.termWeight * wdf) / denominator;
  }

  /** Largest weight for any document with at most `wdfMax` occurrences (block-max bound). */
  maxScore(wdfMax = Number.POSITIVE_INFINITY): number {
    if (wdfMax === Number.POSITIVE_INFINITY) return this.termWeight;
    return this.score(wdfMax, 0);
  }
}
