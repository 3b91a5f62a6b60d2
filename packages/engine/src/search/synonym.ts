/**
 * `_synonym` (API.md §9.3.2: matches any, weighs "as one term") and the
 * expansions of a fuzzy word: as Xapian's OP_SYNONYM, a matching document is
 * weighed by BM25 as if the subqueries were one term, whose within-document
 * frequency is the sum of the frequencies of the text terms inside them on
 * that document and whose document frequency is the union's, estimated as
 * Xapian estimates an OR: N·(1 − Π(1 − dfᵢ/N)), assuming independence.
 *
 * Field length, average length and `_weight` are those of the first text
 * term (a synonym normally stays within one field). Without text terms
 * (keywords, numbers, ranges) the synonym only matches, with weight 0.
 */
import { Bm25Weight } from '../scorers/bm25.js';
import { ConstantWeightScorer, DisjunctionScorer } from '../scorers/boolean.js';
import type { Scorer } from '../scorers/doc-iterator.js';
import type { SearchReader } from './reader.js';
import type { TermScorer } from '../scorers/term-scorer.js';
import { BoolWeight, PositionalWeight, TermWeight, type Statistics, type Weight } from './weight.js';

/**
 * The BM25-weighted terms whose frequencies count for a subquery: its text
 * terms, not those it excludes (`_and_not`'s others, `_not`) nor pure filters.
 */
export function textTermsOf(weight: Weight, into: TermWeight[] = []): TermWeight[] {
  if (weight instanceof TermWeight) {
    if (weight.factor !== 0) into.push(weight);
  } else if (weight instanceof PositionalWeight) {
    for (const t of weight.terms) textTermsOf(t, into);
  } else if (weight instanceof SynonymWeight) {
    for (const t of weight.leaves) into.push(t);
  } else if (weight instanceof BoolWeight) {
    switch (weight.op) {
      case 'not':
        break;
      case 'and_not':
      case 'filter':
        textTermsOf(weight.children[0]!, into);
        break;
      default:
        for (const c of weight.children) textTermsOf(c, into);
    }
  }
  return into;
}

export class SynonymWeight implements Weight {
  /** Distinct text terms of the children, first occurrence first. */
  readonly leaves: readonly TermWeight[];
  /** The synonym's largest weight, from the statistics alone (also when counting). */
  readonly maxWeight: number;
  private readonly bm25: Bm25Weight | null;
  private readonly normsKey: string;
  private readonly averageLength: number;

  constructor(private readonly children: readonly Weight[], stats: Statistics) {
    const seen = new Set<string>();
    const leaves: TermWeight[] = [];
    for (const c of children) {
      for (const t of textTermsOf(c)) {
        if (seen.has(t.term)) continue;
        seen.add(t.term);
        leaves.push(t);
      }
    }
    this.leaves = leaves;
    const first = leaves[0];
    if (first === undefined) {
      this.maxWeight = 0;
      this.bm25 = null;
      this.normsKey = '';
      this.averageLength = 0;
      return;
    }
    this.normsKey = first.normsKey;
    this.averageLength = stats.averageLength(first.normsKey);
    const n = stats.documents;
    let missing = 1;
    let largest = 0;
    for (const t of leaves) {
      const df = stats.docFreq(t.term);
      if (df > largest) largest = df;
      if (n > 0) missing *= 1 - Math.min(df, n) / n;
    }
    const union = Math.max(largest, n * (1 - missing));
    const weight = new Bm25Weight({ documents: n, termFrequency: union, averageLength: this.averageLength, factor: first.factor });
    this.maxWeight = weight.termWeight;
    this.bm25 = stats.scoring ? weight : null;
  }

  scorer(reader: SearchReader): Scorer | null {
    const scorers: Scorer[] = [];
    for (const c of this.children) {
      const s = c.scorer(reader);
      if (s !== null) scorers.push(s);
    }
    if (scorers.length === 0) return null;
    const union = scorers.length === 1 ? scorers[0]! : new DisjunctionScorer(scorers, 'sum');
    if (this.bm25 === null) return new ConstantWeightScorer(union, 0);
    // When the children are the text terms themselves (fuzzy expansions, a synonym of words), their
    // scorers are the union's own and already sit on the document; otherwise they are walked beside it.
    const direct = this.leaves.length === this.children.length && this.children.every((c, i) => c === this.leaves[i]);
    const leaves: TermScorer[] = [];
    if (direct) {
      for (const s of scorers) leaves.push(s as TermScorer);
    } else {
      for (const t of this.leaves) {
        const s = t.scorer(reader);
        if (s !== null) leaves.push(s);
      }
    }
    return new SynonymScorer(union, leaves, this.bm25, reader.fieldNorms(this.normsKey), this.averageLength);
  }
}

/** The union's documents, weighed by BM25 on the summed frequency of the leaf terms on each. */
class SynonymScorer implements Scorer {
  constructor(
    private readonly union: Scorer,
    private readonly leaves: readonly TermScorer[],
    private readonly bm25: Bm25Weight,
    private readonly norms: Uint16Array | null,
    private readonly defaultLength: number,
  ) {}

  get docid(): number {
    return this.union.docid;
  }

  next(): number {
    return this.union.next();
  }

  advance(target: number): number {
    return this.union.advance(target);
  }

  cost(): number {
    return this.union.cost();
  }

  score(): number {
    const d = this.union.docid;
    const leaves = this.leaves;
    let wdf = 0;
    let ordinal = -1;
    for (let i = 0; i < leaves.length; i++) {
      const leaf = leaves[i]!;
      let at = leaf.docid;
      // Leaves that are the union's own scorers never lag behind it; separate ones catch up here.
      if (at < d) at = leaf.advance(d);
      if (at === d) {
        wdf += leaf.freq();
        ordinal = leaf.ordinal;
      }
    }
    if (wdf === 0) return 0;
    const length = this.norms === null ? this.defaultLength : this.norms[ordinal]!;
    return this.bm25.score(wdf, length);
  }

  maxScore(): number {
    return this.bm25.maxScore();
  }
}
