/**
 * Aggregations of one shard: `_aggs` validation (search-model's request.ts,
 * aggregation-plan.ts) and the partials the collectors produce from real doc
 * values (documents indexed by indexing/document-terms.ts into segments and
 * a write buffer). Merging, ordering and rendering are tested with the model
 * (search-model/src/aggregations/merge.test.ts) and end to end in
 * test/src/aggregations.test.ts.
 */
import { createSchema, type Schema } from '@tessera/schema';
import { ArrayScorer } from '../scorers/doc-iterator.js';
import { documentTerms } from '../indexing/document-terms.js';
import {
  AGGREGATION_DEPTH_MAX, type AggregationPartial, type AggregationsPartial, type MetricPartial, parseAggregations, parseQuery, parseSort,
} from '@tessera/search-model';
import { search, type SearchReader } from '../search/index.js';
import { flushWriteBuffer } from '../segments/flush.js';
import { SegmentReader } from '../segments/segment-reader.js';
import { WriteBuffer } from '../segments/write-buffer.js';
import { Aggregator } from './aggregator.js';
import { EntryBudget } from './aggregation-collector.js';
import { type AggregationPlan, planAggregations as bind } from './aggregation-plan.js';

const SCHEMA = createSchema({
  _id: { _type: 'integer' },
  color: { _type: 'keyword' },
  exact: { _type: 'keyword', _bool_term: true },
  tags: { _type: 'array/keyword' },
  title: { _type: 'text' },
  n: { _type: 'integer' },
  price: { _type: 'floating' },
  scores: { _type: 'array/integer' },
  flag: { _type: 'boolean' },
  when: { _type: 'datetime' },
  hidden: { _type: 'integer', _index: 'field_terms' },
});

const DOCS: Array<Record<string, unknown>> = [
  { color: 'Red', exact: 'Red', tags: ['a', 'b'], title: 'The quick brown fox', n: 15, price: 1000, scores: [1, 1, 2], flag: true, when: '2020-01-01T00:00:00', hidden: 1 },
  { color: 'red', exact: 'red', tags: ['b'], title: 'quick quick dog', n: -3, price: 2.5, scores: [5], flag: false, when: '2020-01-02T12:00:00', hidden: 2 },
  { color: 'blue', tags: [], title: 'brown dog', n: 15, price: 4000, scores: [], flag: true },
  { color: 'Blue', title: 'Fox', n: 7, price: 1999.99 },
  { tags: ['a'], n: 22 },
  { color: 'green', price: 0.1 },
];

/** Readers over `docs` (docid = id = position + 1): the first parts flushed into segments, the last left in a write buffer. */
async function buildReaders(docs: ReadonlyArray<Record<string, unknown>>, parts: number): Promise<SearchReader[]> {
  const readers: SearchReader[] = [];
  const size = Math.ceil(docs.length / parts);
  for (let p = 0; p < parts; p++) {
    const buffer = new WriteBuffer();
    docs.slice(p * size, (p + 1) * size).forEach((body, i) => {
      const id = p * size + i + 1;
      buffer.add(id, documentTerms(SCHEMA, body, id));
    });
    if (p < parts - 1) {
      buffer.freeze();
      readers.push(new SegmentReader(p + 1, await flushWriteBuffer(buffer)));
    } else {
      readers.push(buffer);
    }
  }
  return readers;
}

/** Parse (as the coordinator does) and bind (as the shard does). */
function planAggregations(aggs: unknown, schema: Schema): AggregationPlan {
  return bind(parseAggregations(aggs), schema);
}

let readers: SearchReader[];
beforeAll(async () => {
  readers = await buildReaders(DOCS, 3);
});

function aggregate(aggs: unknown, options: { query?: unknown; k?: number; sort?: unknown; on?: SearchReader[] } = {}): AggregationsPartial {
  const result = search(options.on ?? readers, {
    query: parseQuery(options.query ?? '*'), sort: parseSort(options.sort), k: options.k ?? 0, aggregations: planAggregations(aggs, SCHEMA),
  }, SCHEMA);
  return result.aggregations!;
}

function only(aggs: unknown, options?: Parameters<typeof aggregate>[1]): AggregationPartial {
  return aggregate(aggs, options).partials[0]!;
}

/** A bucket partial as key → count. */
function counts(p: AggregationPartial): Record<string, number> {
  if (p.kind !== 'buckets' && p.kind !== 'ranges') throw new Error(`not buckets: ${p.kind}`);
  const out: Record<string, number> = {};
  p.keys.forEach((k, i) => { out[k] = p.counts[i]!; });
  return out;
}

function metric(p: AggregationPartial): MetricPartial {
  if (p.kind !== 'metric') throw new Error(`not a metric: ${p.kind}`);
  return p;
}

const total = (partials: readonly number[] | undefined): number => (partials ?? []).reduce((a, b) => a + b, 0);

function invalid(aggs: unknown): string {
  try {
    planAggregations(aggs, SCHEMA);
  } catch (err) {
    expect((err as { status?: number }).status).toBe(400);
    return (err as Error).message;
  }
  throw new Error('expected a 400');
}

describe('metrics', () => {
  it('count, min, max, exact sums and distinct values; every value of a multi-valued field counts', () => {
    const n = metric(only({ x: { _extended_stats: { _field: 'n' } } }));
    expect(n).toMatchObject({ count: 5, min: -3, max: 22 });
    expect(total(n.sum)).toBe(56);
    expect(total(n.squares)).toBe(225 + 9 + 225 + 49 + 484);
    const scores = metric(only({ x: { _median: { _field: 'scores' } } }));
    expect(scores.count).toBe(4);
    expect(scores.values).toEqual([1, 2, 5]);
    expect(scores.valueCounts).toEqual([2, 1, 1]);
    expect(metric(only({ x: { _mode: { _field: 'n' } } }))).toMatchObject({ values: [-3, 7, 15, 22], valueCounts: [1, 1, 2, 1] });
    // Dates aggregate as epoch seconds.
    expect(metric(only({ x: { _max: { _field: 'when' } } })).max).toBe(Date.UTC(2020, 0, 2, 12) / 1000);
  });

  it('keeps only what the type needs', () => {
    const count = metric(only({ x: { _count: { _field: 'price' } } }));
    expect(count).toEqual({ kind: 'metric', count: 5, min: 0.1, max: 4000 });
    const avg = metric(only({ x: { _avg: { _field: 'price' } } }));
    expect(avg.sum).toBeDefined();
    expect(avg.squares).toBeUndefined();
    expect(avg.values).toBeUndefined();
  });

  it('_count counts the values of string fields; unknown fields and fields without values aggregate nothing', () => {
    expect(metric(only({ x: { _count: { _field: 'color' } } })).count).toBe(5);
    expect(metric(only({ x: { _count: { _field: 'tags' } } })).count).toBe(4);
    expect(only({ x: { _sum: { _field: 'nope' } } })).toEqual({ kind: 'metric', count: 0, min: null, max: null, sum: [] });
    expect(metric(only({ x: { _count: { _field: 'hidden' } } })).count).toBe(0);
  });

  it('aggregates every match, not only the best k, on each collecting path', () => {
    const aggs = { x: { _stats: { _field: 'n' } }, c: { _values: { _field: 'color' } } };
    const query = { n: { _in: { _range: { _from: 0 } } } };
    const counted = aggregate(aggs, { query });
    expect(metric(counted.partials[0]!)).toMatchObject({ count: 4, min: 7, max: 22 });
    expect(counts(counted.partials[1]!)).toEqual({ Red: 1, blue: 1, Blue: 1 });
    for (const options of [{ k: 1 }, { k: 2, sort: '-n' }]) {
      const result = search(readers, {
        query: parseQuery(query), sort: parseSort(options.sort), k: options.k, aggregations: planAggregations(aggs, SCHEMA),
      }, SCHEMA);
      expect(result.total).toBe(4);
      expect(result.hits).toHaveLength(options.k);
      expect(result.aggregations).toEqual(counted);
    }
  });
});

describe('bucket keys', () => {
  it('_values: strings as stored, integers "15", floats with a fraction, booleans, dates ISO 8601', () => {
    expect(counts(only({ x: { _values: { _field: 'color' } } }))).toEqual({ Red: 1, red: 1, blue: 1, Blue: 1, green: 1 });
    expect(counts(only({ x: { _value: { _field: 'n' } } }))).toEqual({ 15: 2, '-3': 1, 7: 1, 22: 1 });
    expect(counts(only({ x: { _values: { _field: 'price' } } }))).toEqual({ '1000.0': 1, 2.5: 1, '4000.0': 1, 1999.99: 1, 0.1: 1 });
    expect(counts(only({ x: { _values: { _field: 'flag' } } }))).toEqual({ true: 2, false: 1 });
    expect(counts(only({ x: { _values: { _field: 'when' } } }))).toEqual({ '2020-01-01T00:00:00': 1, '2020-01-02T12:00:00': 1 });
  });

  it('_terms: keyword terms lower-cased unless _bool_term, text fields by their tokens; a document counts once per bucket', () => {
    expect(counts(only({ x: { _terms: { _field: 'color' } } }))).toEqual({ red: 2, blue: 2, green: 1 });
    expect(counts(only({ x: { _term: { _field: 'exact' } } }))).toEqual({ Red: 1, red: 1 });
    expect(counts(only({ x: { _terms: { _field: 'title' } } }))).toEqual({ the: 1, quick: 2, brown: 2, fox: 2, dog: 2 });
    expect(counts(only({ x: { _values: { _field: 'tags' } } }))).toEqual({ a: 2, b: 2 });
    expect(counts(only({ x: { _values: { _field: 'scores' } } }))).toEqual({ 1: 1, 2: 1, 5: 1 });
    expect(counts(only({ x: { _values: { _field: 'nope' } } }))).toEqual({});
  });

  it('the facet path (top level, no sub-aggregations) counts as the general path does, repeated values once', async () => {
    const docs = [{ tags: ['b', 'B', 'b'] }, { tags: ['B'] }, { tags: ['a', 'a'] }, { color: 'x' }, { tags: ['b'] }];
    const on = await buildReaders(docs, 2);
    const withSub = (type: string): Record<string, number> => {
      const p = only({ x: { [type]: { _field: 'tags' }, _aggs: { c: { _count: { _field: 'tags' } } } } }, { on });
      return counts(p);
    };
    expect(counts(only({ x: { _values: { _field: 'tags' } } }, { on }))).toEqual({ b: 2, B: 2, a: 1 });
    expect(withSub('_values')).toEqual({ b: 2, B: 2, a: 1 });
    expect(counts(only({ x: { _terms: { _field: 'tags' } } }, { on }))).toEqual({ b: 3, a: 1 });
    expect(withSub('_terms')).toEqual({ b: 3, a: 1 });
    // Under a top-level filter the owner is still always 0: the facet path again.
    const filtered = only({ f: { _filter: { _term: { tags: ['b', 'a'] } }, _aggs: { t: { _terms: { _field: 'tags' } } } } }, { on });
    if (filtered.kind !== 'filter') throw new Error('not a filter');
    expect(filtered.count).toBe(3);
    expect(counts(filtered.subs[0]!)).toEqual({ b: 2, a: 1 });
  });

  it('_histogram: floor((v − shift) / interval) · interval + shift, formatted as the field', () => {
    expect(counts(only({ x: { _histogram: { _field: 'n', _interval: 10 } } }))).toEqual({ 10: 2, '-10': 1, 0: 1, 20: 1 });
    expect(counts(only({ x: { _histogram: { _field: 'n', _interval: 10, _shift: 5 } } }))).toEqual({ 15: 3, '-5': 1, 5: 1 });
    expect(counts(only({ x: { _histogram: { _field: 'n', _interval: 10, _shift: 0.5 } } }))).toEqual({ 10.5: 2, '-9.5': 1, 0.5: 1, 20.5: 1 });
    expect(counts(only({ x: { _histogram: { _field: 'price', _interval: 1000 } } }))).toEqual({ '0.0': 2, '1000.0': 2, '4000.0': 1 });
    expect(counts(only({ x: { _histogram: { _field: 'scores', _interval: 2 } } }))).toEqual({ 0: 1, 2: 1, 4: 1 });
    // Dates: intervals in seconds, keys ISO 8601.
    expect(counts(only({ x: { _histogram: { _field: 'when', _interval: 86400 } } }))).toEqual({ '2020-01-01T00:00:00': 1, '2020-01-02T00:00:00': 1 });
  });

  it('_range: [from, to), every listed range in order with empty ones, keys from the bounds or _key', () => {
    const p = only({ x: { _range: { _field: 'price', _ranges: [{ _to: 2000 }, { _from: 2000, _to: 4000 }, { _from: 4000 }, { _key: 'cheap', _to: 2.5 }] } } });
    expect(p).toMatchObject({ kind: 'ranges', keys: ['..2000.0', '2000.0..4000.0', '4000.0..', 'cheap'], counts: [4, 0, 1, 1] });
    // Integer fields: integer bounds; a multi-valued document counts once per range.
    expect(only({ x: { _range: { _field: 'scores', _ranges: [{ _from: 1, _to: 2 }, { _from: 1 }, {}] } } }))
      .toMatchObject({ keys: ['1..2', '1..', '..'], counts: [1, 2, 2] });
    expect(only({ x: { _range: { _field: 'when', _ranges: [{ _from: '2020-01-02' }] } } }))
      .toMatchObject({ keys: ['2020-01-02T00:00:00..'], counts: [1] });
    expect(only({ x: { _range: { _field: 'nope', _ranges: [{ _from: 1, _to: 'b' }] } } })).toMatchObject({ keys: ['1.0..b'], counts: [0] });
  });

  it('_filter: exact stored values of any listed field, not analysed', () => {
    const count = (term: unknown): number => {
      const p = only({ x: { _filter: { _term: term } } });
      if (p.kind !== 'filter') throw new Error('not a filter');
      return p.count;
    };
    expect(count({ color: 'Red' })).toBe(1);
    expect(count({ color: ['Red', 'blue'], n: 22 })).toBe(3);
    expect(count({ flag: true })).toBe(2);
    expect(count({ n: '15' })).toBe(2);
    expect(count({ tags: 'b' })).toBe(2);
    expect(count({ title: 'brown dog' })).toBe(1);
    expect(count({ title: 'brown' })).toBe(0);
    expect(count({ n: 'abc', nope: 1 })).toBe(0);
    expect(count({ when: '2020-01-01' })).toBe(1);
  });
});

describe('nesting', () => {
  it('sub-aggregations per bucket, including buckets inside buckets', () => {
    const p = only({
      c: {
        _terms: { _field: 'color' },
        _aggs: { s: { _sum: { _field: 'n' } }, t: { _values: { _field: 'tags' }, _aggs: { h: { _histogram: { _field: 'price', _interval: 1000 } } } } },
      },
    });
    if (p.kind !== 'buckets') throw new Error('not buckets');
    const byKey = Object.fromEntries(p.keys.map((k, i) => [k, p.subs[i]!]));
    expect(total(metric(byKey.red![0]!).sum)).toBe(12);
    expect(total(metric(byKey.blue![0]!).sum)).toBe(22);
    expect(metric(byKey.green![0]!).count).toBe(0);
    expect(counts(byKey.red![1]!)).toEqual({ a: 1, b: 2 });
    expect(counts(byKey.blue![1]!)).toEqual({});
    const redTags = byKey.red![1]!;
    if (redTags.kind !== 'buckets') throw new Error('not buckets');
    const b = redTags.keys.indexOf('b');
    expect(counts(redTags.subs[b]![0]!)).toEqual({ '1000.0': 1, '0.0': 1 });
  });

  it('filters and ranges pass their buckets down', () => {
    const p = only({
      f: { _filter: { _term: { flag: true } }, _aggs: { v: { _values: { _field: 'color' } }, r: { _range: { _field: 'n', _ranges: [{ _to: 10 }, { _from: 10 }] }, _aggs: { m: { _max: { _field: 'price' } } } } } },
    });
    if (p.kind !== 'filter') throw new Error('not a filter');
    expect(p.count).toBe(2);
    expect(counts(p.subs[0]!)).toEqual({ Red: 1, blue: 1 });
    const ranges = p.subs[1]!;
    if (ranges.kind !== 'ranges') throw new Error('not ranges');
    expect(ranges.counts).toEqual([0, 2]);
    expect(metric(ranges.subs[0]![0]!).max).toBeNull();
    expect(metric(ranges.subs[1]![0]!).max).toBe(4000);
  });

  it('one reader or several, segments or buffer: the same partial', async () => {
    const aggs = {
      c: { _terms: { _field: 'title' }, _aggs: { s: { _stats: { _field: 'price' } }, m: { _median: { _field: 'scores' } } } },
      h: { _histogram: { _field: 'n', _interval: 5 } },
    };
    const normalise = (partial: AggregationsPartial): unknown => JSON.parse(JSON.stringify(partial, (_k, v: unknown) => {
      if (v !== null && typeof v === 'object' && 'kind' in v && (v as { kind: string }).kind === 'buckets') {
        const b = v as unknown as { keys: string[]; counts: number[]; subs: unknown[] };
        return Object.fromEntries(b.keys.map((k, i) => [k, [b.counts[i], b.subs[i]]]).sort());
      }
      if (v !== null && typeof v === 'object' && 'sum' in v) return { ...v, sum: total((v as MetricPartial).sum) };
      return v;
    }));
    const one = normalise(aggregate(aggs, { on: await buildReaders(DOCS, 1) }));
    expect(normalise(aggregate(aggs, { on: await buildReaders(DOCS, 2) }))).toEqual(one);
    expect(normalise(aggregate(aggs))).toEqual(one);
  });
});

describe('validation', () => {
  it('normalises types and options into the spec the coordinator renders from', () => {
    const plan = planAggregations({
      a: { _std: { _field: 'n' } },
      b: { _value: { _field: 'color', _size: 3, _keyed: true, _min_doc_count: 2, _meta: { any: 1 } }, _aggs: { m: { _stats: { _field: 'n' } } } },
      c: { _range: { _field: 'n', _ranges: [] } },
      d: { _histogram: { _field: 'n', _interval: 1, _sort: { 'm._max': { _order: 'desc' } } }, _aggregations: { m: { _stats: { _field: 'n' } } } },
      e: { _term: { _field: 'color', _sort: '_key' } },
    }, SCHEMA);
    expect(plan.spec).toEqual([
      { name: 'a', type: '_std_deviation', sigma: 2 },
      {
        name: 'b', type: '_values', order: { by: '_doc_count', desc: true }, limit: 3, minDocCount: 2, keyed: true,
        aggs: [{ name: 'm', type: '_stats' }],
      },
      { name: 'c', type: '_range', order: { by: 'listed', desc: false }, limit: 10_000, minDocCount: 1, keyed: false, aggs: [] },
      {
        name: 'd', type: '_histogram', order: { by: 'sub', desc: true, sub: 0, metric: '_max' }, limit: 10_000, minDocCount: 1, keyed: false,
        aggs: [{ name: 'm', type: '_stats' }],
      },
      { name: 'e', type: '_terms', order: { by: '_key', desc: false }, limit: 10_000, minDocCount: 1, keyed: false, aggs: [] },
    ]);
  });

  it('refuses bad names, types, options and nesting with a 400 that says why', () => {
    expect(invalid([])).toMatch(/object of named aggregations/);
    expect(invalid({ _x: { _avg: { _field: 'n' } } })).toMatch(/Invalid aggregation name '_x'/);
    expect(invalid({ x: { _avgg: { _field: 'n' } } })).toMatch(/Unknown aggregation type '_avgg'/);
    expect(invalid({ x: { _percentiles: { _field: 'n' } } })).toMatch(/'_percentiles' is not supported/);
    expect(invalid({ x: { _cardinality: { _field: 'n' } } })).toMatch(/'_cardinality' is not supported/);
    expect(invalid({ x: { _avg: { _field: 'n' }, _sum: { _field: 'n' } } })).toMatch(/exactly one type/);
    expect(invalid({ x: {} })).toMatch(/has no aggregation type/);
    expect(invalid({ x: { _avg: {} } })).toMatch(/needs '_field'/);
    expect(invalid({ x: { _avg: { _field: 'n' }, _aggs: { y: { _sum: { _field: 'n' } } } } })).toMatch(/cannot have sub-aggregations/);
    for (const option of ['_missing', '_include', '_exclude']) {
      expect(invalid({ x: { _terms: { _field: 'color', [option]: 'a' } } })).toMatch(new RegExp(`Option '${option}' .* is not supported`));
    }
    expect(invalid({ x: { _terms: { _field: 'color', _bogus: 1 } } })).toMatch(/Unknown option '_bogus'/);
    expect(invalid({ x: { _terms: { _field: 'color', _limit: -1 } } })).toMatch(/'_limit' .* unsigned integer/);
    expect(invalid({ x: { _terms: { _field: 'color', _keyed: 'yes' } } })).toMatch(/'_keyed' .* boolean/);
    expect(invalid({ x: { _std_deviation: { _field: 'n', _sigma: -1 } } })).toMatch(/'_sigma'/);
    expect(invalid({ x: { _histogram: { _field: 'n' } } })).toMatch(/needs '_interval'/);
    expect(invalid({ x: { _histogram: { _field: 'n', _interval: 0 } } })).toMatch(/'_interval' .* > 0/);
    expect(invalid({ x: { _histogram: { _field: 'n', _interval: 10, _shift: 10 } } })).toMatch(/'_shift'/);
    expect(invalid({ x: { _range: { _field: 'n', _ranges: {} } } })).toMatch(/'_ranges' .* array/);
    expect(invalid({ x: { _range: { _field: 'n', _ranges: [{ _from: true }] } } })).toMatch(/'_from'/);
    expect(invalid({ x: { _range: { _field: 'when', _ranges: [{ _from: 'yesterday-ish' }] } } })).toMatch(/'_from' of a range/);
    expect(invalid({ x: { _filter: { _field: 'n' } } })).toMatch(/Unknown option '_field'/);
    expect(invalid({ x: { _filter: { _term: { n: [{}] } } } })).toMatch(/strings, numbers or booleans/);
  });

  it('refuses numeric aggregations of non-numeric fields', () => {
    expect(invalid({ x: { _sum: { _field: 'color' } } })).toMatch(/needs a numeric or date field; 'color' is keyword/);
    expect(invalid({ x: { _avg: { _field: 'flag' } } })).toMatch(/'flag' is boolean/);
    expect(invalid({ x: { _histogram: { _field: 'title', _interval: 1 } } })).toMatch(/'title' is text/);
    expect(invalid({ x: { _range: { _field: 'tags', _ranges: [] } } })).toMatch(/'tags' is keyword/);
    expect(() => planAggregations({ x: { _values: { _field: 'flag' } }, y: { _count: { _field: 'title' } } }, SCHEMA)).not.toThrow();
  });

  it('checks _sort paths against the sub-aggregations', () => {
    const subs = { s: { _stats: { _field: 'n' } }, a: { _avg: { _field: 'n' } }, f: { _filter: { _term: { n: 1 } } }, v: { _values: { _field: 'n' } } };
    const sorted = (sort: unknown) => planAggregations({ x: { _values: { _field: 'color', _sort: sort }, _aggs: subs } }, SCHEMA).spec[0]!.order;
    expect(sorted({ a: 'asc' })).toEqual({ by: 'sub', desc: false, sub: 1, metric: '_avg' });
    expect(sorted({ 's._sum': 'desc' })).toEqual({ by: 'sub', desc: true, sub: 0, metric: '_sum' });
    expect(sorted({ f: 'desc' })).toEqual({ by: 'sub', desc: true, sub: 2, metric: '_doc_count' });
    expect(sorted({ _doc_count: { _order: 'asc' } })).toEqual({ by: '_doc_count', desc: false });
    const bad = (sort: unknown): string => invalid({ x: { _values: { _field: 'color', _sort: sort }, _aggs: subs } });
    expect(bad({ 's._std_deviation_bounds._upper': 'asc' })).toMatch(/too deep/);
    expect(bad({ s: 'asc' })).toMatch(/must name a value of 's'/);
    expect(bad({ 's._median': 'asc' })).toMatch(/has no '_median'/);
    expect(bad({ zz: 'asc' })).toMatch(/not one of its sub-aggregations/);
    expect(bad({ v: 'asc' })).toMatch(/multi-bucket/);
    expect(bad({ _key: 'up' })).toMatch(/"asc" or "desc"/);
    expect(bad({ _key: 'asc', _doc_count: 'desc' })).toMatch(/exactly one criterion/);
  });

  it(`nests ${AGGREGATION_DEPTH_MAX} levels, not more`, () => {
    const nest = (levels: number): unknown => {
      let aggs: Record<string, unknown> = { leaf: { _count: { _field: 'n' } } };
      for (let i = 1; i < levels; i++) aggs = { [`l${i}`]: { _values: { _field: 'color' }, _aggs: aggs } };
      return aggs;
    };
    expect(parseAggregations(nest(AGGREGATION_DEPTH_MAX))).toHaveLength(1);
    expect(invalid(nest(AGGREGATION_DEPTH_MAX + 1))).toMatch(/nest at most 10 levels/);
  });

  it('bounds the buckets and values one shard keeps', () => {
    const plan = planAggregations({ x: { _values: { _field: 'n' } } }, SCHEMA);
    const run = (max: number): void => {
      const aggregator = new Aggregator(plan, new EntryBudget(max));
      for (const reader of readers) aggregator.collectAll(reader, new ArrayScorer(Array.from(reader.docidOf.subarray(0, reader.docCount)).sort((a, b) => a - b)));
      aggregator.result();
    };
    expect(() => run(4)).not.toThrow();
    expect(() => run(3)).toThrow(expect.objectContaining({ code: 'aggregation_too_large', status: 400 }));
  });
});
