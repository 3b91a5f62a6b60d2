/**
 * Weights (Tantivy's cut, ENGINE.md "Query path"): a query bound to the
 * shard's statistics for one search. Each Weight makes one Scorer per reader
 * (`null` when nothing can match in that reader). BM25 statistics (live
 * documents, document frequencies summed over readers, average field
 * lengths) are gathered once per search in `Statistics`; idf once per term in
 * its Bm25Weight.
 */
import { AndMaybeScorer, ConjunctionScorer, DisjunctionScorer, ExclusionScorer } from '../scorers/boolean.js';
import { Bm25Weight } from '../scorers/bm25.js';
import type { Scorer } from '../scorers/doc-iterator.js';
import { NO_MORE_DOCS } from '../scorers/doc-iterator.js';
import { Bitset } from '../values/bitset.js';
import { allDocsScorer, bitsetScorer } from '../scorers/ordinal-scorers.js';
import { PositionalScorer, type PositionalMode } from '../scorers/positional-scorer.js';
import { termDocFreq, visitTerms, type SearchReader } from './reader.js';
import { TermScorer } from '../scorers/term-scorer.js';
import { TermConjunctionScorer } from '../scorers/term-conjunction.js';

export interface Weight {
  scorer(reader: SearchReader): Scorer | null;
}

/** Shard statistics of one search, computed lazily and cached per term and field. */
export class Statistics {
  readonly documents: number;
  private readonly docFreqs = new Map<string, number>();
  private readonly averages = new Map<string, number>();

  /** `scoring` false (counting only): no Bm25Weight is built at all. */
  constructor(readonly readers: readonly SearchReader[], readonly scoring: boolean) {
    let documents = 0;
    for (const r of readers) documents += r.liveCount;
    this.documents = documents;
  }

  docFreq(term: string): number {
    let df = this.docFreqs.get(term);
    if (df === undefined) {
      df = 0;
      for (const r of this.readers) df += termDocFreq(r, term);
      this.docFreqs.set(term, df);
    }
    return df;
  }

  /** Mean length of the field keyed `normsKey` over the documents that have it (0 when none). */
  averageLength(normsKey: string): number {
    let average = this.averages.get(normsKey);
    if (average === undefined) {
      let docs = 0;
      let sum = 0;
      for (const r of this.readers) {
        const stats = r.fieldStats(normsKey);
        if (stats === null) continue;
        docs += stats.docCount;
        sum += stats.sumLength;
      }
      average = docs === 0 ? 0 : sum / docs;
      this.averages.set(normsKey, average);
    }
    return average;
  }

  /** The BM25 weight of `term` in the field keyed `normsKey`, scaled by `factor` (`_weight`); null when not scoring. */
  bm25(term: string, normsKey: string, factor: number): Bm25Weight | null {
    if (!this.scoring) return null;
    return new Bm25Weight({
      documents: this.documents,
      termFrequency: this.docFreq(term),
      averageLength: this.averageLength(normsKey),
      factor,
    });
  }

  /**
   * The largest weight `term` can give (its BM25 term weight), from the
   * statistics alone: the same when counting, so that choices made from it
   * (`_elite_set`) never change what matches.
   */
  maxWeight(term: string, normsKey: string, factor: number): number {
    return new Bm25Weight({
      documents: this.documents,
      termFrequency: this.docFreq(term),
      averageLength: this.averageLength(normsKey),
      factor,
    }).termWeight;
  }
}

/** Matches nothing. */
export const NONE_WEIGHT: Weight = { scorer: () => null };

/** Every live document, weight 0 (`_match_all`, `"*"` at the top). */
export const ALL_WEIGHT: Weight = { scorer: (reader) => allDocsScorer(reader) };

/** One term: BM25-weighted (text) when `bm25` is given, else weight 0. */
export class TermWeight implements Weight {
  constructor(
    readonly term: string,
    private readonly bm25: Bm25Weight | null,
    readonly normsKey: string,
    private readonly averageLength: number,
    /** `_weight` of a text term's field; 0 for a term that weighs nothing (keyword, number, ID). */
    readonly factor = 0,
  ) {}

  scorer(reader: SearchReader): TermScorer | null {
    const postings = reader.postingsIterator(this.term);
    if (postings === null) return null;
    const norms = this.bm25 === null ? null : reader.fieldNorms(this.normsKey);
    return new TermScorer(postings, reader, this.bm25, norms, this.averageLength);
  }
}

/** Terms that must fit by position (phrase, `_phrase`, `_near`); readers without positions fall back to AND. */
export class PositionalWeight implements Weight {
  constructor(readonly terms: readonly TermWeight[], private readonly mode: PositionalMode, private readonly window: number) {}

  scorer(reader: SearchReader): Scorer | null {
    const scorers: TermScorer[] = [];
    for (const t of this.terms) {
      const s = t.scorer(reader);
      if (s === null) return null;
      scorers.push(s);
    }
    for (const s of scorers) if (!s.withPositions) return new ConjunctionScorer(scorers);
    return new PositionalScorer(scorers, this.mode, this.window);
  }
}

/**
 * Weight-0 union of the terms starting with any of `prefixes` that pass
 * `accept` (a field's terms for `"*"`, accuracy buckets of a range, keyword
 * patterns), each reader enumerating its own dictionary: postings are
 * OR-ed into one bitset of ordinals instead of a heap of iterators.
 */
export class TermUnionWeight implements Weight {
  constructor(private readonly prefixes: readonly string[], private readonly accept: ((term: string) => boolean) | null) {}

  scorer(reader: SearchReader): Scorer | null {
    const union = new PostingsUnion(reader);
    for (const prefix of this.prefixes) {
      visitTerms(reader, prefix, (term) => {
        if (this.accept === null || this.accept(term)) union.add(term);
        return true;
      });
    }
    return union.scorer();
  }
}

/**
 * The ordinals of several terms' postings OR-ed into one bitset (weight 0),
 * built lazily: no bitset for a reader where no term has postings.
 */
class PostingsUnion {
  private bits: Bitset | null = null;
  /** Postings added (an upper bound of the documents: the scorer's cost). */
  private count = 0;

  constructor(private readonly reader: SearchReader) {}

  add(term: string): void {
    const postings = this.reader.postingsIterator(term);
    if (postings === null) return;
    this.bits ??= new Bitset(this.reader.docCount);
    const words = this.bits.words;
    for (let d = postings.next(); d !== NO_MORE_DOCS; d = postings.next()) {
      const o = postings.ordinal;
      words[o >>> 5] = words[o >>> 5]! | (1 << (o & 31));
      this.count++;
    }
  }

  scorer(): Scorer | null {
    return this.bits === null ? null : bitsetScorer(this.reader, this.bits, this.count);
  }
}

/** Weight-0 union of explicit terms (ID lists, expansions of keyword patterns). */
export class TermListWeight implements Weight {
  constructor(private readonly terms: readonly string[]) {}

  scorer(reader: SearchReader): Scorer | null {
    const union = new PostingsUnion(reader);
    for (const term of this.terms) union.add(term);
    return union.scorer();
  }
}

export type ValueFilter =
  | { readonly kind: 'numeric'; readonly from: number; readonly to: number }
  | { readonly kind: 'string'; readonly from: string | null; readonly to: string | null }
  | { readonly kind: 'exists' };

/** Exact filter on a slot's doc values (ranges, equality without terms, `"*"`), scanned into a bitset; weight 0. */
export class ValueWeight implements Weight {
  constructor(readonly slot: number, readonly filter: ValueFilter) {}

  scorer(reader: SearchReader): Scorer | null {
    const f = this.filter;
    const bits = new Bitset(reader.docCount);
    let count = 0;
    if (f.kind === 'numeric' || f.kind === 'exists') {
      const column = reader.numericColumn(this.slot);
      if (column !== null) count += column.scanRange(f.kind === 'numeric' ? f.from : -Infinity, f.kind === 'numeric' ? f.to : Infinity, bits);
    }
    if (f.kind === 'string' || f.kind === 'exists') {
      const column = reader.stringColumn(this.slot);
      if (column !== null) count += column.scanRange(f.kind === 'string' ? f.from : null, f.kind === 'string' ? f.to : null, bits);
    }
    return count === 0 ? null : bitsetScorer(reader, bits, count);
  }
}

export type BoolWeightOp = 'and' | 'or' | 'max' | 'xor' | 'not' | 'and_not' | 'and_maybe' | 'filter';

/** Compound operators of API.md §9.3.2 over the scorers/ scorers. */
export class BoolWeight implements Weight {
  constructor(readonly op: BoolWeightOp, readonly children: readonly Weight[]) {}

  scorer(reader: SearchReader): Scorer | null {
    const children = this.children;
    switch (this.op) {
      case 'and':
      case 'filter': {
        const scorers: Scorer[] = [];
        for (const c of children) {
          const s = c.scorer(reader);
          if (s === null) return null;
          scorers.push(s);
        }
        if (scorers.length === 1) return scorers[0]!;
        const scoring = this.op === 'filter' ? 1 : scorers.length;
        if (scorers.every((s) => s instanceof TermScorer)) return new TermConjunctionScorer(scorers as TermScorer[], scoring, reader);
        return new ConjunctionScorer(scorers, scoring);
      }
      case 'or':
      case 'max':
      case 'xor':
        return union(reader, children, this.op === 'or' ? 'sum' : this.op);
      case 'not': {
        const excluded = union(reader, children, 'sum');
        const all = allDocsScorer(reader);
        return excluded === null ? all : new ExclusionScorer(all, excluded);
      }
      case 'and_not':
      case 'and_maybe': {
        const first = children[0]!.scorer(reader);
        if (first === null) return null;
        const rest = union(reader, children.slice(1), 'sum');
        if (rest === null) return first;
        return this.op === 'and_not' ? new ExclusionScorer(first, rest) : new AndMaybeScorer(first, rest);
      }
    }
  }
}

function union(reader: SearchReader, weights: readonly Weight[], combine: 'sum' | 'max' | 'xor'): Scorer | null {
  const scorers: Scorer[] = [];
  for (const w of weights) {
    const s = w.scorer(reader);
    if (s !== null) scorers.push(s);
  }
  if (scorers.length === 0) return null;
  if (scorers.length === 1) return scorers[0]!;
  return new DisjunctionScorer(scorers, combine);
}
