/**
 * Aggregations (API.md §10) over HTTP against the real server, checked
 * against brute force over the parsed documents of ../shared/data/accounts.ndjson
 * (1,000 bank accounts), loaded into an index of 5 shards and one of 1 shard:
 * every metric and bucket type, nesting, ordering and limits, `_keyed`,
 * `_limit: 0`, a restricting `_query`, the 400s, and that 5 shards answer
 * exactly what 1 shard answers.
 *
 * The data's `style` (a `_namespace`) and `checkin` (geo) use types Tessera
 * does not index yet, so they are left out. Two fields are added to exercise
 * multi-valued fields and dates: `scores` (integers, with repeats inside a
 * document) and `tags` (keywords), and `opened` (a date).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, REPO_ROOT, removeDir, startServer, type Server } from './harness.js';

interface Account {
  _id: number;
  balance: number;
  age: number;
  gender?: string;
  favoriteFruit?: string;
  eyeColor: string;
  employer: string;
  contact: { city: string; state: string };
  scores: number[];
  tags: string[];
  opened: string;
}

let server: Server;
let docs: Account[] = [];

const SCHEMA = {
  gender: { _type: 'keyword' },
  favoriteFruit: { _type: 'keyword' },
  eyeColor: { _type: 'keyword' },
  contact: { state: { _type: 'keyword' }, city: { _type: 'text' } },
  balance: { _type: 'floating' },
  age: { _type: 'integer' },
  scores: { _type: 'array/integer' },
  tags: { _type: 'array/keyword' },
  opened: { _type: 'date' },
};

beforeAll(async () => {
  server = await startServer();
  const lines = readFileSync(join(REPO_ROOT, '../shared/data/accounts.ndjson'), 'utf8').trim().split('\n');
  const bodies = lines.map((line) => {
    const d = JSON.parse(line) as Record<string, unknown>;
    delete d.style;
    delete d.checkin;
    const age = d.age as number;
    d.scores = [age % 7, age % 5, age % 7];
    d.tags = [d.eyeColor, d.favoriteFruit].filter((t) => t !== undefined);
    d.opened = `2015-0${1 + ((d._id as number) % 9)}-1${(d._id as number) % 3}`;
    return d;
  });
  docs = bodies as unknown as Account[];
  const ndjson = bodies.map((d) => JSON.stringify(d)).join('\n');
  for (const [index, shards] of [['acc5', 5], ['acc1', 1]] as const) {
    expect((await call(server, 'PUT', `/${index}/`, { _settings: { number_of_shards: shards }, _schema: SCHEMA })).status).toBe(200);
    const r = await call(server, 'RESTORE', `/${index}/`, ndjson, { 'content-type': 'application/x-ndjson' });
    expect(r.json.indexed).toBe(docs.length);
  }
}, 60_000);

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

// ---- brute force -------------------------------------------------------------------------------

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
const floatKey = (v: number): string => (Number.isInteger(v) ? `${v}.0` : String(v));
/** API.md §8.4 tokens, lower-cased. */
const words = (s: string): Set<string> => new Set(s.toLowerCase().match(/(?:[\p{L}\p{N}\p{M}]|(?<=\p{L})['’](?=\p{L}))+/gu) ?? []);

interface Bucket { _doc_count: number; _key: string; [sub: string]: unknown }

/** Buckets of documents by their keys (each document once per key), ordered by count desc then key desc, as §10.2 says. */
function bucketsOf(list: Account[], keysOf: (d: Account) => Iterable<string>, order: 'count' | 'key' = 'count'): Array<{ key: string; docs: Account[] }> {
  const map = new Map<string, Account[]>();
  for (const d of list) for (const k of new Set(keysOf(d))) map.set(k, [...(map.get(k) ?? []), d]);
  const out = [...map].map(([key, ds]) => ({ key, docs: ds }));
  return out.sort((a, b) => (order === 'key' ? byteOrder(a.key, b.key) : b.docs.length - a.docs.length || byteOrder(b.key, a.key)));
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const mean = (xs: number[]): number | null => (xs.length === 0 ? null : sum(xs) / xs.length);
function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
function mode(xs: number[]): number | null {
  const counts = new Map<number, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  let best: number | null = null;
  for (const [v, c] of counts) if (best === null || c > counts.get(best)! || (c === counts.get(best)! && v < best)) best = v;
  return best;
}
function variance(xs: number[]): number | null {
  if (xs.length < 2) return null;
  const m = mean(xs)!;
  return sum(xs.map((x) => (x - m) ** 2)) / (xs.length - 1);
}

/** Numbers equal to 12 significant digits (sums of floats differ from brute force in the last bits), the rest exactly. */
function expectClose(actual: unknown, expected: unknown, path = ''): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    expect({ path, close: Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)) }).toEqual({ path, close: true });
  } else if (expected !== null && typeof expected === 'object') {
    expect(actual !== null && typeof actual === 'object').toBe(true);
    expect(Object.keys(actual as object)).toEqual(Object.keys(expected));
    for (const [k, v] of Object.entries(expected)) expectClose((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  } else {
    expect({ path, value: actual }).toEqual({ path, value: expected });
  }
}

function stats(xs: number[]): Record<string, number | null> {
  return { _count: xs.length, _min: xs.length ? Math.min(...xs) : null, _max: xs.length ? Math.max(...xs) : null, _avg: mean(xs), _sum: sum(xs) };
}

function extendedStats(xs: number[], sigma = 2): Record<string, unknown> {
  const v = variance(xs);
  const std = v === null ? null : Math.sqrt(v);
  const m = mean(xs);
  return {
    ...stats(xs), _sum_of_squares: sum(xs.map((x) => x * x)), _variance: v, _std_deviation: std,
    _std_deviation_bounds: std === null || m === null ? { _upper: null, _lower: null } : { _upper: m + sigma * std, _lower: m - sigma * std },
  };
}

async function searchBoth(body: unknown): Promise<any> {
  const five = await call(server, 'SEARCH', '/acc5/', body);
  const one = await call(server, 'SEARCH', '/acc1/', body);
  expect(five.status).toBe(200);
  expect(one.status).toBe(200);
  // Exactly the same answer from 5 shards as from 1: counts, keys, order, and every metric to the last bit.
  expect(five.json.aggregations).toEqual(one.json.aggregations);
  expect(five.json.total).toBe(one.json.total);
  return five.json;
}

// ---- tests -------------------------------------------------------------------------------------

describe('aggregations against brute force', () => {
  it('every metric over all documents, with _limit: 0 (no hits)', async () => {
    const types = ['_count', '_sum', '_avg', '_min', '_max', '_median', '_mode', '_variance'];
    const aggs: Record<string, unknown> = Object.fromEntries(types.map((t) => [`b${t}`, { [t]: { _field: 'balance' } }]));
    Object.assign(aggs, {
      std: { _std: { _field: 'balance' } },
      std3: { _std_deviation: { _field: 'balance', _sigma: 3 } },
      stats: { _stats: { _field: 'age' } },
      ext: { _extended_stats: { _field: 'balance' } },
      scores: { _stats: { _field: 'scores' } },
      genders: { _count: { _field: 'gender' } },
      modeAge: { _mode: { _field: 'age' } },
      medianAge: { _median: { _field: 'age' } },
      nothing: { _avg: { _field: 'no_such_field' } },
    });
    const r = await searchBoth({ _limit: 0, _aggs: aggs });
    expect(r.hits).toEqual([]);
    expect(r.total).toBe(1000);
    const balances = docs.map((d) => d.balance);
    const ext = extendedStats(balances);
    const std3 = extendedStats(balances, 3);
    expectClose(r.aggregations, {
      _doc_count: 1000,
      b_count: { _count: 1000 },
      b_sum: { _sum: sum(balances) },
      b_avg: { _avg: mean(balances) },
      b_min: { _min: Math.min(...balances) },
      b_max: { _max: Math.max(...balances) },
      b_median: { _median: median(balances) },
      b_mode: { _mode: mode(balances) },
      b_variance: { _variance: variance(balances) },
      std: { _std_deviation: ext._std_deviation, _std_deviation_bounds: ext._std_deviation_bounds },
      std3: { _std_deviation: std3._std_deviation, _std_deviation_bounds: std3._std_deviation_bounds },
      stats: stats(docs.map((d) => d.age)),
      ext,
      scores: stats(docs.flatMap((d) => d.scores)),
      genders: { _count: docs.filter((d) => d.gender !== undefined).length },
      modeAge: { _mode: mode(docs.map((d) => d.age)) },
      medianAge: { _median: median(docs.map((d) => d.age)) },
      nothing: { _avg: null },
    });
  });

  it('values, terms, histogram, range and filter buckets with their keys and order', async () => {
    const r = await searchBoth({
      _limit: 0,
      _aggs: {
        gender: { _values: { _field: 'gender' } },
        fruit3: { _terms: { _field: 'favoriteFruit', _limit: 3 } },
        tags: { _values: { _field: 'tags' } },
        scores: { _values: { _field: 'scores', _sort: { _key: 'asc' } } },
        ages: { _histogram: { _field: 'age', _interval: 10, _shift: 5 } },
        balances: { _histogram: { _field: 'balance', _interval: 1000 } },
        ranges: { _range: { _field: 'balance', _ranges: [{ _to: 2000 }, { _from: 2000, _to: 4000 }, { _from: 4000 }] } },
        women: { _filter: { _term: { gender: 'female' } }, _aggs: { age: { _avg: { _field: 'age' } } } },
        cities: { _terms: { _field: 'contact.city', _limit: 5 } },
        opened: { _values: { _field: 'opened', _keyed: true, _sort: { _key: 'desc' } } },
      },
    });
    const a = r.aggregations;
    const fruitOf = (d: Account): string[] => (d.favoriteFruit === undefined ? [] : [d.favoriteFruit]);
    const plain = (bs: Array<{ key: string; docs: Account[] }>): Bucket[] => bs.map((b) => ({ _doc_count: b.docs.length, _key: b.key }));
    expect(a.gender).toEqual(plain(bucketsOf(docs, (d) => (d.gender === undefined ? [] : [d.gender]))));
    expect(a.fruit3).toEqual(plain(bucketsOf(docs, fruitOf).slice(0, 3)));
    expect(a.tags).toEqual(plain(bucketsOf(docs, (d) => d.tags)));
    expect(a.scores).toEqual(plain(bucketsOf(docs, (d) => d.scores.map(String), 'key')));
    expect(a.ages).toEqual(plain(bucketsOf(docs, (d) => [String(Math.floor((d.age - 5) / 10) * 10 + 5)], 'key')));
    expect(a.balances).toEqual(plain(bucketsOf(docs, (d) => [floatKey(Math.floor(d.balance / 1000) * 1000)], 'key')));
    // Byte order of keys: "10000.0" sorts before "2000.0".
    expect(a.balances.map((b: Bucket) => b._key).indexOf('10000.0')).toBeLessThan(a.balances.map((b: Bucket) => b._key).indexOf('2000.0'));
    expect(a.ranges).toEqual([
      { _doc_count: docs.filter((d) => d.balance < 2000).length, _key: '..2000.0' },
      { _doc_count: docs.filter((d) => d.balance >= 2000 && d.balance < 4000).length, _key: '2000.0..4000.0' },
      { _doc_count: docs.filter((d) => d.balance >= 4000).length, _key: '4000.0..' },
    ]);
    const women = docs.filter((d) => d.gender === 'female');
    expectClose(a.women, { _doc_count: women.length, age: { _avg: mean(women.map((d) => d.age)) } });
    expect(a.cities).toEqual(plain(bucketsOf(docs, (d) => words(d.contact.city)).slice(0, 5)));
    const opened = bucketsOf(docs, (d) => [`${d.opened}T00:00:00`], 'key').reverse();
    expect(Object.keys(a.opened)).toEqual(opened.map((b) => b.key));
    expect(a.opened).toEqual(Object.fromEntries(opened.map((b) => [b.key, { _doc_count: b.docs.length }])));
  });

  it('nested sub-aggregations ordered by "<sub>._max", two levels deep', async () => {
    const r = await searchBoth({
      _limit: 0,
      _aggs: {
        eyes: {
          _values: { _field: 'eyeColor', _sort: { 'balance_stats._max': 'desc' } },
          _aggs: {
            balance_stats: { _stats: { _field: 'balance' } },
            fruits: { _terms: { _field: 'favoriteFruit', _limit: 2, _min_doc_count: 10 }, _aggs: { median: { _median: { _field: 'age' } } } },
          },
        },
      },
    });
    const expected = bucketsOf(docs, (d) => [d.eyeColor])
      .map((b) => {
        const balances = b.docs.map((d) => d.balance);
        const fruits = bucketsOf(b.docs, (d) => (d.favoriteFruit === undefined ? [] : [d.favoriteFruit])).filter((f) => f.docs.length >= 10).slice(0, 2);
        return {
          _doc_count: b.docs.length,
          balance_stats: stats(balances),
          fruits: fruits.map((f) => ({ _doc_count: f.docs.length, median: { _median: median(f.docs.map((d) => d.age)) }, _key: f.key })),
          _key: b.key,
        };
      })
      .sort((x, y) => y.balance_stats._max! - x.balance_stats._max! || byteOrder(y._key, x._key));
    expectClose(r.aggregations.eyes, expected);
  });

  it('a _query restricts what is aggregated; hits and aggregations come together', async () => {
    const query = { _and: [{ age: { _in: { _range: { _from: 30, _to: 35 } } } }, { gender: 'female' }] };
    const r = await searchBoth({
      _query: query, _limit: 5, _sort: 'balance',
      _aggregations: { fruit: { _values: { _field: 'favoriteFruit', _keyed: true } }, avg: { _avg: { _field: 'balance' } } },
    });
    const matching = docs.filter((d) => d.age >= 30 && d.age <= 35 && d.gender === 'female');
    expect(r.total).toBe(matching.length);
    expect(r.hits.map((h: Account) => h._id)).toEqual([...matching].sort((a, b) => a.balance - b.balance).slice(0, 5).map((d) => d._id));
    expect(Object.keys(r)).toEqual(['aggregations', 'hits', 'count', 'total', 'took']);
    expect(r.aggregations._doc_count).toBe(matching.length);
    expect(r.aggregations.fruit).toEqual(Object.fromEntries(bucketsOf(matching, (d) => (d.favoriteFruit === undefined ? [] : [d.favoriteFruit])).map((b) => [b.key, { _doc_count: b.docs.length }])));
    expectClose(r.aggregations.avg, { _avg: mean(matching.map((d) => d.balance)) });
    // Aggregations only when asked; COUNT answers the total alone.
    expect((await call(server, 'SEARCH', '/acc5/', { _query: query, _limit: 1 })).json.aggregations).toBeUndefined();
    expect((await call(server, 'COUNT', '/acc5/', { _query: query, _aggs: { a: { _avg: { _field: 'age' } } } })).json).toEqual({ total: matching.length });
  });
});

describe('bad aggregations are 400 with a message', () => {
  let nested: Record<string, unknown> = { leaf: { _count: { _field: 'age' } } };
  for (let i = 0; i < 10; i++) nested = { [`l${i}`]: { _values: { _field: 'gender' }, _aggs: nested } };
  const cases: Array<[unknown, RegExp]> = [
    [{ x: { _bogus: { _field: 'age' } } }, /Unknown aggregation type '_bogus'/],
    [{ _x: { _avg: { _field: 'age' } } }, /Invalid aggregation name '_x'/],
    [{ x: { _percentiles: { _field: 'age' } } }, /'_percentiles' is not supported/],
    [{ x: { _cardinality: { _field: 'age' } } }, /'_cardinality' is not supported/],
    [{ x: { _values: { _field: 'gender', _missing: 'n/a' } } }, /'_missing' .* not supported/],
    [{ x: { _values: { _field: 'gender', _include: 'f.*' } } }, /'_include' .* not supported/],
    [{ x: { _values: { _field: 'gender', _exclude: 'm.*' } } }, /'_exclude' .* not supported/],
    [{ x: { _values: { _field: 'gender', _sort: { 's._std_deviation_bounds._upper': 'asc' } }, _aggs: { s: { _extended_stats: { _field: 'age' } } } } }, /too deep/],
    [{ x: { _sum: { _field: 'gender' } } }, /needs a numeric or date field/],
    [{ x: { _avg: { _field: 'age' }, _aggs: { y: { _max: { _field: 'age' } } } } }, /cannot have sub-aggregations/],
    [nested, /nest at most 10 levels/],
  ];

  it.each(cases.map(([aggs, message], i) => [i, aggs, message] as const))('case %i', async (_i, aggs, message) => {
    for (const index of ['acc5', 'acc1']) {
      const r = await call(server, 'SEARCH', `/${index}/`, { _limit: 0, _aggs: aggs });
      expect(r.status).toBe(400);
      expect(r.json.message).toMatch(message);
    }
  });

  it('also on an index whose shards hold no documents, and for both spellings at once', async () => {
    await call(server, 'PUT', '/empty/', { _settings: { number_of_shards: 3 }, _schema: SCHEMA });
    const r = await call(server, 'SEARCH', '/empty/', { _aggs: { x: { _bogus: {} } } });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/Unknown aggregation type/);
    const ok = await call(server, 'SEARCH', '/empty/', { _aggs: { x: { _avg: { _field: 'age' } }, c: { _count: { _field: 'age' } }, v: { _values: { _field: 'gender' } } } });
    expect(ok.json.aggregations).toEqual({ _doc_count: 0, x: { _avg: null }, c: { _count: 0 }, v: [] });
    const both = await call(server, 'SEARCH', '/acc5/', { _aggs: {}, _aggregations: {} });
    expect(both.status).toBe(400);
    expect(both.json.message).toMatch(/either '_aggs' or '_aggregations'/);
  });
});
