/**
 * Merging and rendering aggregations (API.md §10) from shard partials made
 * by hand: metric arithmetic over exact sums and distinct values, bucket
 * order (byte order of keys, ties by key in the same direction), limits,
 * `_min_doc_count`, `_keyed`, ordering by sub-aggregation values, and that
 * any split of the same values among shards renders the same answer.
 */
import fc from 'fast-check';
import { roundExact } from './exact-sum.js';
import { compareKeys, renderAggregations } from './merge.js';
import type { AggregationPartial, AggregationSpec, AggregationsPartial } from './partial.js';

type Metric = Extract<AggregationPartial, { kind: 'metric' }>;

/** A shard's metric partial over `values`, as the engine builds it (exact sums as plain sums: fine for these values). */
function metricPartial(values: number[], needs: { sum?: boolean; squares?: boolean; values?: boolean } = {}): Metric {
  const out: Metric = {
    kind: 'metric', count: values.length,
    min: values.length === 0 ? null : Math.min(...values), max: values.length === 0 ? null : Math.max(...values),
  };
  if (needs.sum) out.sum = values.length === 0 ? [] : [values.reduce((a, b) => a + b, 0)];
  if (needs.squares) out.squares = values.length === 0 ? [] : [values.reduce((a, b) => a + b * b, 0)];
  if (needs.values) {
    const distinct = [...new Set(values)].sort((a, b) => a - b);
    out.values = distinct;
    out.valueCounts = distinct.map((v) => values.filter((x) => x === v).length);
  }
  return out;
}

const ALL = { sum: true, squares: true, values: true };

function one(spec: AggregationSpec, partials: AggregationPartial[], matches = 100): unknown {
  const replies: AggregationsPartial[] = partials.map((p) => ({ spec: [spec], partials: [p] }));
  return renderAggregations(replies, matches)[spec.name];
}

function buckets(keys: string[], counts: number[], subs: AggregationPartial[][] = keys.map(() => [])): AggregationPartial {
  return { kind: 'buckets', keys, counts, subs };
}

const terms = (extra: Partial<AggregationSpec> = {}): AggregationSpec => ({
  name: 't', type: '_values', order: { by: '_doc_count', desc: true }, limit: 10_000, minDocCount: 1, keyed: false, aggs: [], ...extra,
});

describe('metrics', () => {
  it('render each type from merged shards', () => {
    const shards = [metricPartial([1, 2, 2], ALL), metricPartial([10, 3], ALL)];
    expect(one({ name: 'x', type: '_count' }, shards)).toEqual({ _count: 5 });
    expect(one({ name: 'x', type: '_sum' }, shards)).toEqual({ _sum: 18 });
    expect(one({ name: 'x', type: '_avg' }, shards)).toEqual({ _avg: 3.6 });
    expect(one({ name: 'x', type: '_min' }, shards)).toEqual({ _min: 1 });
    expect(one({ name: 'x', type: '_max' }, shards)).toEqual({ _max: 10 });
    expect(one({ name: 'x', type: '_median' }, shards)).toEqual({ _median: 2 });
    expect(one({ name: 'x', type: '_mode' }, shards)).toEqual({ _mode: 2 });
    // Sample variance of 1 2 2 10 3: mean 3.6, squared deviations 6.76+2.56+2.56+40.96+0.36 = 53.2, ÷ 4.
    expect(one({ name: 'x', type: '_variance' }, shards)).toEqual({ _variance: 13.3 });
    const std = Math.sqrt(13.3);
    expect(one({ name: 'x', type: '_std_deviation', sigma: 3 }, shards)).toEqual({
      _std_deviation: std, _std_deviation_bounds: { _upper: 3.6 + 3 * std, _lower: 3.6 - 3 * std },
    });
    expect(one({ name: 'x', type: '_stats' }, shards)).toEqual({ _count: 5, _min: 1, _max: 10, _avg: 3.6, _sum: 18 });
    expect(one({ name: 'x', type: '_extended_stats', sigma: 2 }, shards)).toEqual({
      _count: 5, _min: 1, _max: 10, _avg: 3.6, _sum: 18, _sum_of_squares: 118, _variance: 13.3, _std_deviation: std,
      _std_deviation_bounds: { _upper: 3.6 + 2 * std, _lower: 3.6 - 2 * std },
    });
  });

  it('median of an even count is the mean of the middle two; mode ties go to the smallest value', () => {
    expect(one({ name: 'x', type: '_median' }, [metricPartial([4, 1], ALL), metricPartial([3, 2], ALL)])).toEqual({ _median: 2.5 });
    expect(one({ name: 'x', type: '_mode' }, [metricPartial([9, 9, 4], ALL), metricPartial([4, 7, 7], ALL)])).toEqual({ _mode: 4 });
  });

  it('over no values: _count and _sum are 0, everything else null; a variance needs two values', () => {
    const none = [metricPartial([], ALL), metricPartial([], ALL)];
    expect(one({ name: 'x', type: '_count' }, none)).toEqual({ _count: 0 });
    expect(one({ name: 'x', type: '_sum' }, none)).toEqual({ _sum: 0 });
    for (const type of ['_avg', '_min', '_max', '_median', '_mode', '_variance'] as const) expect(one({ name: 'x', type }, none)).toEqual({ [type]: null });
    expect(one({ name: 'x', type: '_extended_stats', sigma: 2 }, none)).toEqual({
      _count: 0, _min: null, _max: null, _avg: null, _sum: 0, _sum_of_squares: 0, _variance: null, _std_deviation: null,
      _std_deviation_bounds: { _upper: null, _lower: null },
    });
    expect(one({ name: 'x', type: '_variance' }, [metricPartial([5], ALL)])).toEqual({ _variance: null });
  });

  it('the variance has no cancellation error however large the mean', () => {
    const values = [1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4];
    const partial: Metric = { kind: 'metric', count: 4, min: values[0]!, max: values[3]!, sum: [], squares: [] };
    // Exact sums as the engine sends them: the squares need two doubles each.
    partial.sum = [4e9 + 10];
    const squares = values.map((v) => BigInt(v) * BigInt(v)).reduce((a, b) => a + b, 0n);
    const hi = Number(squares);
    partial.squares = [Number(squares - BigInt(hi)), hi].filter((x) => x !== 0);
    expect(one({ name: 'x', type: '_variance' }, [partial])).toEqual({ _variance: 5 / 3 });
  });

  it('sums are rounded once, correctly: the shards\u2019 split does not change the last bit', () => {
    fc.assert(fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 40 }), fc.nat(), (xs, cut) => {
      // Exact partials of each shard's values, built with a plain two-sum cascade (no rounding lost).
      const exact = (values: number[]): number[] => {
        const partials: number[] = [];
        for (let x of values) {
          let used = 0;
          for (let y of partials) {
            if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
            const hi = x + y;
            const lo = y - (hi - x);
            if (lo !== 0) partials[used++] = lo;
            x = hi;
          }
          partials.length = used;
          partials.push(x);
        }
        return partials;
      };
      const at = cut % (xs.length + 1);
      const whole = one({ name: 'x', type: '_sum' }, [{ kind: 'metric', count: xs.length, min: 0, max: 0, sum: exact(xs) }]);
      const split = one({ name: 'x', type: '_sum' }, [
        { kind: 'metric', count: at, min: 0, max: 0, sum: exact(xs.slice(0, at)) },
        { kind: 'metric', count: xs.length - at, min: 0, max: 0, sum: exact(xs.slice(at)) },
      ]);
      expect(split).toEqual(whole);
    }));
    expect(roundExact([1e-16, 1, 1e16])).toBe(1e16 + 2);
    expect(roundExact([])).toBe(0);
  });
});

describe('buckets', () => {
  it('merge by key across shards and order by count desc, ties by key desc', () => {
    const rendered = one(terms(), [
      buckets(['avocado', 'blueberry', 'cherry'], [2, 1, 5]),
      buckets(['blueberry', 'date'], [1, 1]),
    ]);
    expect(rendered).toEqual([
      { _doc_count: 5, _key: 'cherry' },
      { _doc_count: 2, _key: 'blueberry' },
      { _doc_count: 2, _key: 'avocado' },
      { _doc_count: 1, _key: 'date' },
    ]);
  });

  it('compare keys as byte strings', () => {
    const spec = terms({ order: { by: '_key', desc: false } });
    const keys = ['2000.0', '10000.0', 'b', 'B', 'é', '😀', 'ｆ'];
    expect((one(spec, [buckets(keys, keys.map(() => 1))]) as Array<{ _key: string }>).map((b) => b._key))
      .toEqual(['10000.0', '2000.0', 'B', 'b', 'é', 'ｆ', '😀']);
    expect(compareKeys('ｆ', '😀')).toBeLessThan(0);
    expect(compareKeys('a', 'ab')).toBeLessThan(0);
  });

  it('_min_doc_count, _limit (after ordering) and _keyed', () => {
    const shards = [buckets(['a', 'b', 'c', 'd'], [1, 2, 3, 4]), buckets(['a'], [1])];
    expect(one(terms({ minDocCount: 2, order: { by: '_key', desc: true } }), shards)).toEqual([
      { _doc_count: 4, _key: 'd' }, { _doc_count: 3, _key: 'c' }, { _doc_count: 2, _key: 'b' }, { _doc_count: 2, _key: 'a' },
    ]);
    expect(one(terms({ limit: 2 }), shards)).toEqual([{ _doc_count: 4, _key: 'd' }, { _doc_count: 3, _key: 'c' }]);
    expect(one(terms({ limit: 0 }), shards)).toEqual([]);
    expect(one(terms({ keyed: true, limit: 3, order: { by: '_doc_count', desc: false } }), shards))
      .toEqual({ a: { _doc_count: 2 }, b: { _doc_count: 2 }, c: { _doc_count: 3 } });
  });

  it('order by a sub-aggregation value; buckets without it last; ties by key', () => {
    const spec = terms({
      order: { by: 'sub', sub: 0, metric: '_max', desc: true },
      aggs: [{ name: 's', type: '_stats' }, { name: 'f', type: '_filter', aggs: [] }],
    });
    const filter = (count: number): AggregationPartial => ({ kind: 'filter', count, subs: [] });
    const stats = (values: number[]): Metric => metricPartial(values, { sum: true });
    const shards = [
      buckets(['a', 'b', 'c'], [1, 1, 1], [[stats([5]), filter(1)], [stats([]), filter(0)], [stats([9]), filter(1)]]),
      buckets(['d', 'a'], [1, 1], [[stats([9]), filter(0)], [stats([1]), filter(1)]]),
    ];
    const keys = (s: AggregationSpec): string[] => (one(s, shards) as Array<{ _key: string }>).map((b) => b._key);
    expect(keys(spec)).toEqual(['d', 'c', 'a', 'b']);
    expect(keys({ ...spec, order: { by: 'sub', sub: 0, metric: '_max', desc: false } })).toEqual(['a', 'c', 'd', 'b']);
    expect(keys({ ...spec, order: { by: 'sub', sub: 1, metric: '_doc_count', desc: true } })).toEqual(['a', 'c', 'd', 'b']);
    const first = (one(spec, shards) as unknown[])[0];
    expect(first).toEqual({ _doc_count: 1, s: { _count: 1, _min: 9, _max: 9, _avg: 9, _sum: 9 }, f: { _doc_count: 0 }, _key: 'd' });
  });

  it('ranges merge by position and keep the listed order; filters add up', () => {
    const spec: AggregationSpec = {
      name: 'r', type: '_range', order: { by: 'listed', desc: false }, limit: 10_000, minDocCount: 0, keyed: false,
      aggs: [{ name: 'm', type: '_min' }],
    };
    const ranges = (counts: number[], values: number[][]): AggregationPartial => ({
      kind: 'ranges', keys: ['..2000.0', 'x', 'x'], counts, subs: values.map((v) => [metricPartial(v)]),
    });
    expect(one(spec, [ranges([1, 0, 2], [[5], [], [7, 8]]), ranges([0, 1, 1], [[], [3], [6]])])).toEqual([
      { _doc_count: 1, m: { _min: 5 }, _key: '..2000.0' },
      { _doc_count: 1, m: { _min: 3 }, _key: 'x' },
      { _doc_count: 3, m: { _min: 6 }, _key: 'x' },
    ]);
    const filter: AggregationSpec = { name: 'f', type: '_filter', aggs: [{ name: 'c', type: '_count' }] };
    expect(one(filter, [{ kind: 'filter', count: 2, subs: [metricPartial([1, 2])] }, { kind: 'filter', count: 1, subs: [metricPartial([3])] }]))
      .toEqual({ _doc_count: 3, c: { _count: 3 } });
  });

  it('the envelope: _doc_count first, then each aggregation by name; nothing to merge without shards', () => {
    const spec: AggregationSpec[] = [terms({ name: 'a' }), { name: 'b', type: '_count' }];
    const reply: AggregationsPartial = { spec, partials: [buckets(['k'], [3]), metricPartial([1, 2])] };
    expect(renderAggregations([reply], 7)).toEqual({ _doc_count: 7, a: [{ _doc_count: 3, _key: 'k' }], b: { _count: 2 } });
    expect(Object.keys(renderAggregations([reply], 7))).toEqual(['_doc_count', 'a', 'b']);
    expect(renderAggregations([], 0)).toEqual({ _doc_count: 0 });
  });
});
