/**
 * Query execution of one shard (ENGINE.md "Query path"): Query → Weight
 * (bound to this search's statistics over all readers) → one Scorer per
 * reader → one Collector across readers (docids are disjoint once deletions
 * apply, so per-reader matches simply add up).
 *
 * The shard returns its best `k` = offset + limit; the coordinator merges
 * shards by `sortValues` (or weight), then `_id`, and cuts the page.
 */
import { fieldSpec, type Schema } from '@tessera/schema';
import { Aggregator } from '../collect/aggregator.js';
import type { AggregationsPartial, Query, SearchAfter, SortKey } from '@tessera/search-model';
import type { AggregationPlan } from '../collect/aggregation-plan.js';
import { countMatches, TopKCollector } from '../collect/top-k.js';
import { TermScorer } from '../scorers/term-scorer.js';
import { QueryCompiler } from './compile.js';
import { ID_SLOT, VERSION_SLOT } from '../indexing/document-terms.js';
import { distanceSortPlan } from './distance-sort.js';
import type { SearchReader } from './reader.js';
import { SortCollector, type SortPlan, type SortValue } from '../collect/sort-collector.js';
import { Statistics, ValueWeight, type Weight } from './weight.js';

export interface SearchRequest {
  readonly query: Query;
  /** Most significant first; empty = relevance. */
  readonly sort: readonly SortKey[];
  /** Hits to return: offset + limit of the page. */
  readonly k: number;
  /** Count only (COUNT, `_limit: 0`): no weights are computed and no hits returned. */
  readonly countOnly?: boolean;
  /** `_aggs` bound to the schema: aggregated over every match, not only the best k. */
  readonly aggregations?: AggregationPlan;
  /** A cursor (`_search_after`): the best `k` ordered after it; its values follow `sort` key by key. */
  readonly after?: SearchAfter;
}

export interface SearchHit {
  docid: number;
  score: number;
  /** One value per requested sort key (null: no value, or a key that orders nothing); only when `sort` is not empty. */
  sortValues?: SortValue[];
}

export interface SearchResult {
  /** Matching live documents, exact. */
  total: number;
  /** The best `k`, best first. */
  hits: SearchHit[];
  /** This shard's partial of the requested aggregations. */
  aggregations?: AggregationsPartial;
  /** With a cursor: the matches ordered before it (counted in `total`, never in `hits`). */
  before?: number;
}

export function search(readers: readonly SearchReader[], request: SearchRequest, schema: Schema): SearchResult {
  const countOnly = request.countOnly === true || request.k <= 0;
  const stats = new Statistics(readers, !countOnly);
  const weight = new QueryCompiler(schema, stats).compile(request.query);
  // Aggregations only when asked: the loops below stay as they are without them.
  const aggregator = request.aggregations === undefined ? null : new Aggregator(request.aggregations);
  const result = run(readers, request, schema, weight, countOnly, aggregator);
  if (aggregator !== null) result.aggregations = aggregator.result();
  return result;
}

function run(
  readers: readonly SearchReader[], request: SearchRequest, schema: Schema, weight: Weight, countOnly: boolean, aggregator: Aggregator | null,
): SearchResult {
  if (countOnly) {
    let total = 0;
    for (const reader of readers) {
      const scorer = weight.scorer(reader);
      if (scorer !== null) total += aggregator === null ? countMatches(scorer) : aggregator.collectAll(reader, scorer);
    }
    return { total, hits: [] };
  }
  const plans = request.sort.map((key) => sortPlan(key, schema));
  if (request.after === undefined && plans.every((p) => p.kind === 'ignored' || (p.kind === 'score' && p.order === 'asc'))) {
    // Relevance order: the plain top-k heap on typed arrays.
    const collector = new TopKCollector(request.k);
    for (const reader of readers) {
      const scorer = weight.scorer(reader);
      if (scorer === null) continue;
      if (aggregator !== null) collector.collectAll(aggregator.wrap(reader, scorer));
      else if (scorer instanceof TermScorer) scorer.collectTopK(collector);
      else collector.collectAll(scorer);
    }
    const hits: SearchHit[] = collector.hits();
    if (plans.length > 0) for (const hit of hits) hit.sortValues = plans.map((p) => (p.kind === 'score' ? hit.score : null));
    return { total: collector.total, hits };
  }
  const collector = new SortCollector(plans, request.k, request.after ?? null);
  const first = plans[0];
  // A range sorted by its own field: read the matches in value order from the sorted index.
  const range = aggregator === null && weight instanceof ValueWeight && weight.filter.kind === 'numeric'
    && first !== undefined && first.kind === 'slot' && first.slot === weight.slot && first.reference === null
    ? { slot: weight.slot, from: weight.filter.from, to: weight.filter.to } : null;
  for (const reader of readers) {
    if (range !== null && reader.stringColumn(range.slot) === null) {
      const run = reader.numericColumn(range.slot)?.sortedRun(range.from, range.to) ?? null;
      if (run !== null) {
        collector.collectSortedRun(reader, run.ordinals, run.values, run.lo, run.hi);
        continue;
      }
    }
    const scorer = weight.scorer(reader);
    if (scorer !== null) collector.collectAll(reader, aggregator === null ? scorer : aggregator.wrap(reader, scorer));
  }
  const result: SearchResult = { total: collector.total, hits: collector.hits() };
  if (request.after !== undefined) result.before = collector.before;
  return result;
}

/**
 * A sort key against the schema: `_score` relevance, `_id` slot 0, a field
 * its slot; unknown fields order nothing (§9.5). A `_value` reference sorts
 * by distance to it (distance-sort.ts).
 */
export function sortPlan(key: SortKey, schema: Schema): SortPlan {
  if (key.path === '_score') return { kind: 'score', order: key.order };
  if (key.path === '_id') return { kind: 'slot', slot: ID_SLOT, order: key.order, reference: null };
  const spec = fieldSpec(schema, key.path);
  if (spec === undefined) return { kind: 'ignored' };
  // A geo field has no order without a reference: distanceSortPlan's 400 (geo-sort.ts).
  if (key.value === undefined && spec.type !== 'geo') return { kind: 'slot', slot: spec.slot, order: key.order, reference: null };
  return distanceSortPlan(key, spec);
}

/**
 * The `_id` of a live document, read from the readers' `_id` value column
 * (slot 0, indexed with every document), so that fetching a hit needs no
 * read of the docid → ID key first; undefined when no reader holds it live
 * (a write since the snapshot) or its column has no value.
 */
export function liveDocumentId(readers: readonly SearchReader[], docid: number): string | number | undefined {
  return liveDocumentFields(readers, docid)?.id;
}

/**
 * The `_id` and `_version` of a live document as the snapshot indexed them
 * (value slots 0 and 1): a hit without its document, for a page that shows
 * no body. Undefined as liveDocumentId, or when the version column has no
 * value (a segment written before versions were indexed).
 */
export function liveDocumentFields(readers: readonly SearchReader[], docid: number): { id: string | number; version: number | undefined } | undefined {
  for (const reader of readers) {
    const ordinal = reader.ordinalOf(docid);
    if (ordinal < 0 || !reader.isLiveOrdinal(ordinal)) continue;
    let id: string | number | undefined;
    const strings = reader.stringColumn(ID_SLOT);
    if (strings !== null && strings.valueCount(ordinal) === 1) id = strings.valueAt(ordinal, 0);
    else {
      const numbers = reader.numericColumn(ID_SLOT);
      if (numbers !== null && numbers.valueCount(ordinal) === 1) id = numbers.valueAt(ordinal, 0);
    }
    if (id === undefined) return undefined;
    const versions = reader.numericColumn(VERSION_SLOT);
    const version = versions !== null && versions.valueCount(ordinal) === 1 ? versions.valueAt(ordinal, 0) : undefined;
    return { id, version };
  }
  return undefined;
}
