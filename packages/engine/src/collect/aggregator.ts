/**
 * The root of a search's aggregations: builds one collector per planned
 * aggregation, is fed every matching document of every reader (all matches,
 * not the top k: API.md §9.2), and answers the shard's partial.
 *
 * Search hooks it in only when `_aggs` is asked (search.ts), so searches
 * without aggregations keep their loops untouched:
 * - counting (`_limit: 0`, COUNT): `collectAll` walks the scorer itself;
 * - top-k: `wrap` returns a scorer that collects each document its inner
 *   scorer yields before handing it on to the top-k collector.
 *
 * Scorers yield docids; collectors read columns by reader ordinal. Where the
 * reader's ordinals are in docid order (segments, and a buffer filled in
 * docid order) the ordinal is found by galloping forward from the previous
 * one, since docids arrive ascending; otherwise by the reader's lookup.
 */
import { NO_MORE_DOCS, type Scorer } from '../scorers/doc-iterator.js';
import { ordinalsInDocidOrder, type SearchReader } from '../search/reader.js';
import { type Collector, EntryBudget } from './aggregation-collector.js';
import { FilterCollector } from './filter-collector.js';
import { MetricCollector } from './metric-collector.js';
import { NumericBucketCollector } from './numeric-buckets.js';
import type { AggregationPartial, AggregationsPartial } from '@tessera/search-model';
import type { AggregationPlan, PlanNode } from './aggregation-plan.js';
import { RangeCollector } from './range-collector.js';
import { StringBucketCollector } from './string-buckets.js';

/** What an aggregation over a field without values answers: no buckets. */
const NO_BUCKETS: Collector = {
  setReader: () => undefined,
  collect: () => undefined,
  partial: (): AggregationPartial => ({ kind: 'buckets', keys: [], counts: [], subs: [] }),
};

export class Aggregator {
  private readonly collectors: Collector[];
  private reader: SearchReader | null = null;
  private ordered = false;
  private docids: Uint32Array = new Uint32Array(0);
  private docCount = 0;
  /** First ordinal that may hold the next docid (ordered readers). */
  private position = 0;

  constructor(private readonly plan: AggregationPlan, budget = new EntryBudget()) {
    this.collectors = plan.nodes.map((node) => build(node, true, budget));
  }

  /** Collect every document of `scorer` (walking `reader`) and return how many there were. */
  collectAll(reader: SearchReader, scorer: Scorer): number {
    this.begin(reader);
    let n = 0;
    for (let d = scorer.next(); d !== NO_MORE_DOCS; d = scorer.next()) {
      this.collect(d);
      n++;
    }
    return n;
  }

  /** `scorer` (walking `reader`), collecting each document it yields. */
  wrap(reader: SearchReader, scorer: Scorer): Scorer {
    this.begin(reader);
    return new CollectingScorer(scorer, this);
  }

  /** The shard's partial result. */
  result(): AggregationsPartial {
    return { spec: this.plan.spec, partials: this.collectors.map((c) => c.partial(0)) };
  }

  private begin(reader: SearchReader): void {
    this.reader = reader;
    this.ordered = ordinalsInDocidOrder(reader);
    this.docids = reader.docidOf;
    this.docCount = reader.docCount;
    this.position = 0;
    for (const c of this.collectors) c.setReader(reader);
  }

  /** One matching document of the current reader. */
  collect(docid: number): void {
    const ordinal = this.ordinalOf(docid);
    if (ordinal < 0) return;
    const collectors = this.collectors;
    for (let i = 0; i < collectors.length; i++) collectors[i]!.collect(ordinal, 0);
  }

  private ordinalOf(docid: number): number {
    if (!this.ordered) return this.reader!.ordinalOf(docid);
    const docids = this.docids;
    let lo = this.position;
    // Dense matches (every document, frequent terms): the very next ordinal.
    if (docids[lo] === docid) {
      this.position = lo + 1;
      return lo;
    }
    const n = this.docCount;
    // Gallop from the last position to bracket docid, then binary search.
    let hi = lo;
    let step = 1;
    while (hi < n && docids[hi]! < docid) {
      lo = hi + 1;
      hi += step;
      step <<= 1;
    }
    if (hi > n) hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docids[mid]! < docid) lo = mid + 1;
      else hi = mid;
    }
    if (lo < n && docids[lo] === docid) {
      this.position = lo + 1;
      return lo;
    }
    return this.reader!.ordinalOf(docid);
  }
}

/**
 * A scorer that collects every document its inner scorer yields. `advance`
 * steps with `next` so that a caller skipping ahead still has every match
 * aggregated.
 */
class CollectingScorer implements Scorer {
  constructor(private readonly inner: Scorer, private readonly aggregator: Aggregator) {}

  get docid(): number {
    return this.inner.docid;
  }

  next(): number {
    const d = this.inner.next();
    if (d !== NO_MORE_DOCS) this.aggregator.collect(d);
    return d;
  }

  advance(target: number): number {
    let d = this.inner.docid;
    while (d < target) d = this.next();
    return d;
  }

  cost(): number {
    return this.inner.cost();
  }

  score(): number {
    return this.inner.score();
  }

  maxScore(): number {
    return this.inner.maxScore();
  }
}

function build(node: PlanNode, topLevel: boolean, budget: EntryBudget): Collector {
  switch (node.kind) {
    case 'metric':
      return new MetricCollector(node.type, node.field, budget);
    case 'strings':
      return new StringBucketCollector(node.field.slot, node.keys, node.analyzer, node.subs.map((s) => build(s, false, budget)), topLevel, budget);
    case 'numbers':
      return new NumericBucketCollector(node.field.slot, node.format, node.histogram, node.subs.map((s) => build(s, false, budget)), topLevel, budget);
    case 'range':
      return new RangeCollector(node.field?.slot ?? null, node.from, node.to, node.keys, node.subs.map((s) => build(s, false, budget)), budget);
    case 'filter':
      // One bucket per owner: its sub-collectors see the same owners as the filter.
      return new FilterCollector(node.tests, node.subs.map((s) => build(s, topLevel, budget)));
    case 'no-buckets':
      return NO_BUCKETS;
  }
}
