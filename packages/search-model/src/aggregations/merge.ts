/**
 * Aggregations at the coordinator (API.md §10): merge the shards' partials
 * (partial.ts says what each carries) and render the response:
 *
 *   "aggregations": {"_doc_count": <matches>, "<name>": <result>, …}
 *
 * Merging is exact, so any number of shards answers what one shard holding
 * every document would: counts add, buckets merge by their (already
 * formatted) key, sums add as exact partials and are rounded once here, and
 * `_median`/`_mode` merge the shards' distinct values.
 *
 * Rendering applies what only the whole picture allows: `_min_doc_count`,
 * the bucket order (keys compared as byte strings, ties broken by key in the
 * same direction), `_limit` and `_keyed`. Over no values `_count` and
 * `_sum` are 0 and every other metric is null; a variance needs two values.
 */
import { addExact, addProduct, roundExact } from './exact-sum.js';
import type { AggregationPartial, AggregationSpec, AggregationsPartial, MetricPartial } from './partial.js';

type BucketsPartial = Extract<AggregationPartial, { kind: 'buckets' | 'ranges' }>;

interface MergedMetric {
  kind: 'metric';
  count: number;
  min: number | null;
  max: number | null;
  sum: number[];
  squares: number[];
  /** Each shard's distinct values ascending, with counts. */
  valueLists: Array<{ values: number[]; counts: number[] }>;
  /** Computed once, for sorting and rendering. */
  computed?: MetricValues;
}

interface MergedBucket {
  key: string;
  count: number;
  subs: Merged[];
}

interface MergedBuckets {
  kind: 'buckets' | 'ranges';
  /** `buckets`: by key; `ranges`: in listed order. */
  buckets: MergedBucket[];
  byKey: Map<string, MergedBucket> | null;
}

interface MergedFilter {
  kind: 'filter';
  count: number;
  subs: Merged[];
}

type Merged = MergedMetric | MergedBuckets | MergedFilter;

/**
 * The `aggregations` object of a search whose shards answered `replies`
 * (one per shard that ran the search; `matches` = total of the search).
 * Without any reply (no shard searched) only `_doc_count` can be told.
 */
export function renderAggregations(replies: readonly AggregationsPartial[], matches: number): Record<string, unknown> {
  const out: Record<string, unknown> = { _doc_count: matches };
  const first = replies[0];
  if (first === undefined) return out;
  first.spec.forEach((spec, i) => {
    let merged: Merged | undefined;
    for (const reply of replies) merged = mergeInto(spec, merged, reply.partials[i]!);
    out[spec.name] = render(spec, merged!);
  });
  return out;
}

function mergeInto(spec: AggregationSpec, target: Merged | undefined, partial: AggregationPartial): Merged {
  switch (partial.kind) {
    case 'metric': {
      const m = (target as MergedMetric | undefined) ?? { kind: 'metric', count: 0, min: null, max: null, sum: [], squares: [], valueLists: [] };
      mergeMetric(m, partial);
      return m;
    }
    case 'filter': {
      const f = (target as MergedFilter | undefined) ?? { kind: 'filter', count: 0, subs: [] };
      f.count += partial.count;
      mergeSubs(spec, f.subs, partial.subs);
      return f;
    }
    default: {
      const b = (target as MergedBuckets | undefined) ?? { kind: partial.kind, buckets: [], byKey: partial.kind === 'buckets' ? new Map() : null };
      mergeBuckets(spec, b, partial);
      return b;
    }
  }
}

function mergeMetric(m: MergedMetric, p: MetricPartial): void {
  m.count += p.count;
  if (p.min !== null && (m.min === null || p.min < m.min)) m.min = p.min;
  if (p.max !== null && (m.max === null || p.max > m.max)) m.max = p.max;
  if (p.sum !== undefined) for (const x of p.sum) addExact(m.sum, x);
  if (p.squares !== undefined) for (const x of p.squares) addExact(m.squares, x);
  if (p.values !== undefined && p.values.length > 0) m.valueLists.push({ values: p.values, counts: p.valueCounts ?? [] });
}

function mergeSubs(spec: AggregationSpec, into: Merged[], subs: readonly AggregationPartial[]): void {
  const specs = spec.aggs ?? [];
  for (let j = 0; j < subs.length; j++) into[j] = mergeInto(specs[j]!, into[j], subs[j]!);
}

function mergeBuckets(spec: AggregationSpec, into: MergedBuckets, p: BucketsPartial): void {
  for (let i = 0; i < p.keys.length; i++) {
    let bucket: MergedBucket | undefined;
    if (into.byKey !== null) {
      bucket = into.byKey.get(p.keys[i]!);
      if (bucket === undefined) {
        bucket = { key: p.keys[i]!, count: 0, subs: [] };
        into.byKey.set(bucket.key, bucket);
        into.buckets.push(bucket);
      }
    } else {
      // Ranges: every shard lists the same ranges in the same order (keys may repeat).
      bucket = into.buckets[i] ??= { key: p.keys[i]!, count: 0, subs: [] };
    }
    bucket.count += p.counts[i]!;
    mergeSubs(spec, bucket.subs, p.subs[i]!);
  }
}

function render(spec: AggregationSpec, merged: Merged): unknown {
  switch (merged.kind) {
    case 'metric':
      return renderMetric(spec, merged);
    case 'filter':
      return { _doc_count: merged.count, ...renderSubs(spec, merged.subs) };
    default:
      return renderBuckets(spec, merged);
  }
}

function renderSubs(spec: AggregationSpec, subs: readonly Merged[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  (spec.aggs ?? []).forEach((sub, j) => {
    out[sub.name] = subs[j] === undefined ? render(sub, emptyMerged(sub)) : render(sub, subs[j]!);
  });
  return out;
}

/** What a sub-aggregation shows for a bucket no shard sent it for (not expected: shards send every sub). */
function emptyMerged(spec: AggregationSpec): Merged {
  if (spec.type === '_filter') return { kind: 'filter', count: 0, subs: [] };
  if (spec.aggs !== undefined) return { kind: spec.type === '_range' ? 'ranges' : 'buckets', buckets: [], byKey: null };
  return { kind: 'metric', count: 0, min: null, max: null, sum: [], squares: [], valueLists: [] };
}

function renderBuckets(spec: AggregationSpec, merged: MergedBuckets): unknown {
  const minDocCount = spec.minDocCount ?? 1;
  let buckets = merged.buckets.filter((b) => b.count >= minDocCount);
  const order = spec.order ?? { by: '_doc_count', desc: true };
  if (order.by !== 'listed') buckets.sort(bucketComparator(spec, order));
  if (spec.limit !== undefined && buckets.length > spec.limit) buckets = buckets.slice(0, spec.limit);
  if (spec.keyed === true) {
    const out: Record<string, unknown> = {};
    for (const b of buckets) out[b.key] = { _doc_count: b.count, ...renderSubs(spec, b.subs) };
    return out;
  }
  return buckets.map((b) => ({ _doc_count: b.count, ...renderSubs(spec, b.subs), _key: b.key }));
}

type Order = NonNullable<AggregationSpec['order']>;

function bucketComparator(spec: AggregationSpec, order: Order): (a: MergedBucket, b: MergedBucket) => number {
  const dir = order.desc ? -1 : 1;
  const byKey = (a: MergedBucket, b: MergedBucket): number => dir * compareKeys(a.key, b.key);
  if (order.by === '_key') return byKey;
  if (order.by === '_doc_count') return (a, b) => (a.count !== b.count ? dir * (a.count - b.count) : byKey(a, b));
  const sub = order.sub!;
  const subSpec = spec.aggs![sub]!;
  const value = (bucket: MergedBucket): number | null => {
    const merged = bucket.subs[sub];
    if (merged === undefined) return null;
    if (merged.kind === 'filter') return merged.count;
    if (merged.kind !== 'metric') return null;
    return metricValues(subSpec, merged)[order.metric!] ?? null;
  };
  return (a, b) => {
    const x = value(a);
    const y = value(b);
    // Buckets without the value come last in either direction.
    if (x === null || y === null) return x === y ? byKey(a, b) : x === null ? 1 : -1;
    return x !== y ? dir * (x < y ? -1 : 1) : byKey(a, b);
  };
}

/**
 * Byte order of the UTF-8 forms (= code point order) without encoding:
 * UTF-16 units compare the same except surrogates (D800–DFFF, halves of
 * code points above FFFF), which must sort after E000–FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** Every value a metric can show, by output name (`_count`, `_avg`, …). */
type MetricValues = Record<string, number | null>;

function metricValues(spec: AggregationSpec, m: MergedMetric): MetricValues {
  if (m.computed !== undefined) return m.computed;
  const n = m.count;
  const sum = roundExact(m.sum);
  const avg = n > 0 ? sum / n : null;
  const values: MetricValues = {
    _count: n, _min: m.min, _max: m.max, _sum: sum, _avg: avg, _sum_of_squares: roundExact(m.squares),
  };
  if (spec.type === '_variance' || spec.type === '_std_deviation' || spec.type === '_extended_stats') {
    const variance = n >= 2 ? sampleVariance(n, m.sum, m.squares) : null;
    values._variance = variance;
    values._std_deviation = variance === null ? null : Math.sqrt(variance);
  }
  if (spec.type === '_median' || spec.type === '_mode') {
    const merged = mergeValueLists(m.valueLists);
    values._median = median(merged, n);
    values._mode = mode(merged);
  }
  m.computed = values;
  return values;
}

function renderMetric(spec: AggregationSpec, m: MergedMetric): Record<string, unknown> {
  const v = metricValues(spec, m);
  const bounds = (): Record<string, number | null> => {
    const std = v._std_deviation ?? null;
    const avg = v._avg ?? null;
    const sigma = spec.sigma ?? 2;
    return std === null || avg === null ? { _upper: null, _lower: null } : { _upper: avg + sigma * std, _lower: avg - sigma * std };
  };
  switch (spec.type) {
    case '_std_deviation':
      return { _std_deviation: v._std_deviation, _std_deviation_bounds: bounds() };
    case '_stats':
      return { _count: v._count, _min: v._min, _max: v._max, _avg: v._avg, _sum: v._sum };
    case '_extended_stats':
      return {
        _count: v._count, _min: v._min, _max: v._max, _avg: v._avg, _sum: v._sum, _sum_of_squares: v._sum_of_squares,
        _variance: v._variance, _std_deviation: v._std_deviation, _std_deviation_bounds: bounds(),
      };
    default:
      return { [spec.type]: v[spec.type] ?? null };
  }
}

/** The shards' sorted distinct values merged into one sorted list (counts of equal values added). */
function mergeValueLists(lists: ReadonlyArray<{ values: number[]; counts: number[] }>): { values: number[]; counts: number[] } {
  let merged = { values: [] as number[], counts: [] as number[] };
  for (const list of lists) {
    const values: number[] = [];
    const counts: number[] = [];
    let i = 0;
    let j = 0;
    while (i < merged.values.length || j < list.values.length) {
      const a = i < merged.values.length ? merged.values[i]! : Infinity;
      const b = j < list.values.length ? list.values[j]! : Infinity;
      if (j >= list.values.length || (i < merged.values.length && a < b)) {
        values.push(a);
        counts.push(merged.counts[i++]!);
      } else if (i >= merged.values.length || b < a) {
        values.push(b);
        counts.push(list.counts[j++]!);
      } else {
        values.push(a);
        counts.push(merged.counts[i++]! + list.counts[j++]!);
      }
    }
    merged = { values, counts };
  }
  return merged;
}

/** API.md §10.1: the middle value; of an even count, the mean of the middle two. */
function median(list: { values: number[]; counts: number[] }, n: number): number | null {
  if (n === 0 || list.values.length === 0) return null;
  const at = (rank: number): number => {
    let seen = 0;
    for (let i = 0; i < list.values.length; i++) {
      seen += list.counts[i]!;
      if (rank < seen) return list.values[i]!;
    }
    return list.values[list.values.length - 1]!;
  };
  const lower = at(Math.floor((n - 1) / 2));
  const upper = at(Math.floor(n / 2));
  return lower === upper ? lower : (lower + upper) / 2;
}

/** The most frequent value; ties → the smallest (the list ascends). */
function mode(list: { values: number[]; counts: number[] }): number | null {
  let best: number | null = null;
  let bestCount = 0;
  for (let i = 0; i < list.values.length; i++) {
    if (list.counts[i]! > bestCount) {
      bestCount = list.counts[i]!;
      best = list.values[i]!;
    }
  }
  return best;
}

/**
 * Sample variance (÷ n − 1) from the exact sum S1 and sum of squares S2:
 * n·S2 − S1² is formed exactly (every product split exactly) and rounded
 * once, so there is no cancellation error however large the mean.
 */
function sampleVariance(n: number, sum: readonly number[], squares: readonly number[]): number {
  const d: number[] = [];
  for (const q of squares) addProduct(d, n, q, 1);
  for (const p of sum) for (const r of sum) addProduct(d, p, r, -1);
  const numerator = roundExact(d);
  return Math.max(0, numerator) / (n * (n - 1));
}
