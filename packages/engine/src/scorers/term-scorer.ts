/**
 * A term's postings in one reader as a Scorer: skips deleted documents (so
 * every combination above sees live documents only) and weighs each posting
 * with the query's Bm25Weight and the field length of its ordinal. `bm25`
 * null: the term only matches (weight 0: keyword, numeric and ID terms).
 */
import { NO_MORE_DOCS, type Scorer } from './doc-iterator.js';
import type { Bm25Weight } from './bm25.js';
import type { TopKCollector } from '../collect/top-k.js';
import { PostingsIterator } from '../postings/postings-iterator.js';
import type { SearchPostings, SearchReader } from '../search/reader.js';

export class TermScorer implements Scorer {
  /** 0 before the first next()/advance() (the Scorer convention), NO_MORE_DOCS at the end. */
  docid = 0;

  constructor(
    /** Read by TermConjunctionScorer, which steps the postings of its terms itself. */
    readonly postings: SearchPostings,
    private readonly reader: SearchReader,
    private readonly bm25: Bm25Weight | null,
    /** Field lengths by ordinal; null when the reader has none for the field. */
    private readonly norms: Uint16Array | null,
    /** Length used when `norms` is null (the average: a neutral normalisation). */
    private readonly defaultLength: number,
  ) {}

  next(): number {
    const postings = this.postings;
    const reader = this.reader;
    let d = postings.next();
    while (d !== NO_MORE_DOCS && !reader.isLiveOrdinal(postings.ordinal)) d = postings.next();
    return (this.docid = d);
  }

  advance(target: number): number {
    const postings = this.postings;
    const reader = this.reader;
    let d = postings.advance(target);
    while (d !== NO_MORE_DOCS && !reader.isLiveOrdinal(postings.ordinal)) d = postings.next();
    return (this.docid = d);
  }

  cost(): number {
    return this.postings.cost();
  }

  score(): number {
    if (this.bm25 === null) return 0;
    const norms = this.norms;
    const length = norms === null ? this.defaultLength : norms[this.postings.ordinal]!;
    return this.bm25.score(this.postings.freq, length);
  }

  /**
   * Relevance top-k of this term alone with block-max pruning (Lucene's
   * block-max WAND for one term): once the heap is full, a block whose best
   * possible weight — its largest frequency at the shortest normalised
   * length — cannot beat the heap's threshold is counted without being
   * decoded or scored. The total stays exact.
   */
  collectTopK(collector: TopKCollector): void {
    const postings = this.postings;
    const bm25 = this.bm25;
    if (!(postings instanceof PostingsIterator) || bm25 === null || !(bm25.termWeight > 0)) {
      collector.collectAll(this);
      return;
    }
    const reader = this.reader;
    const allLive = reader.liveCount === reader.docCount;
    const countLive = (ordinals: Uint32Array, n: number): void => {
      for (let i = 0; i < n; i++) if (reader.isLiveOrdinal(ordinals[i]!)) collector.total++;
    };
    for (;;) {
      if (!postings.inBlock) {
        const b = postings.nextBlock;
        if (b >= postings.blocks) break;
        if (bm25.maxScore(postings.maxFreqOfBlock(b)) < collector.threshold()) {
          if (allLive) {
            collector.total += postings.blockDocCount(b);
            postings.skipBlock(b);
          } else {
            postings.skipBlock(b, countLive);
          }
          continue;
        }
      }
      const d = this.next();
      if (d === NO_MORE_DOCS) break;
      collector.collect(d, this.score());
    }
    this.docid = NO_MORE_DOCS;
  }

  maxScore(): number {
    return this.bm25 === null ? 0 : this.bm25.maxScore();
  }

  /** Whether positions() has data for this term. */
  get withPositions(): boolean {
    return this.postings.withPositions;
  }

  /** Positions of the term in the current document, in `[0, freq())`. */
  positions(): Int32Array {
    return this.postings.positions();
  }

  freq(): number {
    return this.postings.freq;
  }

  /** Reader ordinal of the current document (index into the reader's norms and columns). */
  get ordinal(): number {
    return this.postings.ordinal;
  }
}
