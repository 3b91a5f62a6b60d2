/**
 * `_and` / `_filter` of terms alone (two words, a word and a keyword): the
 * leapfrog of ConjunctionScorer run on the terms' postings directly instead
 * of through their TermScorers, and a document's liveness checked once it
 * matches every term instead of at every posting stepped to (a document is
 * live or deleted in its reader whichever term reaches it). The weight is
 * still the TermScorers' (their postings are on the matched document).
 */
import { cheapestFirst, sumOfMaxScores, sumOfScores } from './boolean.js';
import { NO_MORE_DOCS, type Scorer } from './doc-iterator.js';
import type { TermScorer } from './term-scorer.js';
import type { SearchPostings, SearchReader } from '../search/reader.js';

export class TermConjunctionScorer implements Scorer {
  docid = 0;
  /** The terms' postings, cheapest first: the first leads. */
  private readonly byCost: SearchPostings[];

  /** `scoringCount`: the first n of `terms` add to the weight (the rest only filter). */
  constructor(private readonly terms: readonly TermScorer[], private readonly scoringCount: number, private readonly reader: SearchReader) {
    this.byCost = cheapestFirst(terms.map((t) => t.postings));
  }

  next(): number {
    return this.align((this.byCost[0] as SearchPostings).next());
  }

  advance(target: number): number {
    return this.align((this.byCost[0] as SearchPostings).advance(target));
  }

  /** Move everyone to the lead's candidate; an overshoot becomes the new candidate; a deleted match moves the lead on. */
  private align(candidate: number): number {
    const its = this.byCost;
    const n = its.length;
    const lead = its[0] as SearchPostings;
    const reader = this.reader;
    outer: while (candidate !== NO_MORE_DOCS) {
      for (let i = 1; i < n; i++) {
        const it = its[i] as SearchPostings;
        let d = it.docid;
        if (d < candidate) d = it.advance(candidate);
        if (d > candidate) {
          candidate = lead.advance(d);
          continue outer;
        }
      }
      if (reader.isLiveOrdinal(lead.ordinal)) return (this.docid = candidate);
      candidate = lead.next();
    }
    return (this.docid = NO_MORE_DOCS);
  }

  cost(): number {
    return (this.byCost[0] as SearchPostings).cost();
  }

  score(): number {
    return sumOfScores(this.terms, this.scoringCount);
  }

  maxScore(): number {
    return sumOfMaxScores(this.terms, this.scoringCount);
  }
}
