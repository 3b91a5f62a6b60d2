/**
 * The query language over HTTP, element by element, as API.md describes it:
 * the `_query` DSL of §9.3 for every type Tessera indexes (text/string,
 * keyword/term, integer, positive, floating, boolean, date, datetime with
 * date math), text strings (§9.3.1), compound operators (§9.3.2), query
 * strings (§9.4), sorting (§9.5), pages, `_check_at_least`, `_selector`
 * (§1.3), every `_index` mode of the INTERFACE table and its rule (§8.2,
 * §8.3), multi-index searches (§1.1), and the 400s of bad requests.
 *
 * Expectations are written from API.md against a handful of documents whose
 * answers can be read off by eye.
 */
import { call, removeDir, startServer, type Server } from './harness.js';

let server: Server;

const SCHEMA = {
  title: { _type: 'text' },
  note: { _type: 'string' },
  tag: { _type: 'keyword' },
  label: { _type: 'term' },
  n: { _type: 'integer' },
  p: { _type: 'positive' },
  f: { _type: 'float' },
  b: { _type: 'boolean' },
  d: { _type: 'date' },
  dt: { _type: 'datetime' },
  user: { city: { _type: 'keyword' } },
};

/** Eight documents; 6 and 7 lack most fields (for `"*"` and missing values in sorts). */
const DOCS = [
  { _id: 1, title: 'The quick brown fox jumps over the lazy dog', note: 'hello world', tag: 'red', label: 'X1', n: -20, p: 5, f: 1.5, b: true, d: '2020-01-01', dt: '2020-01-01T10:00:00Z', user: { city: 'Richmond' } },
  { _id: 2, title: 'A quick red fox', note: 'goodbye world', tag: 'blue', label: 'x2', n: 0, p: 150, f: 2.25, b: false, d: '2020-01-15', dt: '2020-01-15T23:30:00+02:00', user: { city: 'Paris' } },
  { _id: 3, title: 'Lazy dogs sleep all day', tag: 'red', n: 15, p: 1000, f: -3.5, b: 't', d: '2020-02-29', dt: '2020-03-01 00:00:00' },
  { _id: 4, title: 'Dynamic categorisation of foxes', tag: 'dynamic categorisation', n: 100, p: 99_999, f: 1_000_000, b: '0', d: '2021-06-30', dt: '2021-06-30T12:00:00Z' },
  { _id: 5, title: 'brown bread and brown butter', tag: 'green', n: 250, p: 0, f: 0.5, b: 'false', d: '1999-12-31', dt: '1999-12-31T23:59:59Z' },
  { _id: 6, title: 'nothing to see here' },
  { _id: 7, tag: 'blue', n: 1_000_000 },
  { _id: 8, title: "quickly browsing foxes' dens", tag: 'dynamic cat', n: 42, p: 42, f: 42.5, b: true, d: '2020-01-02', dt: '2020-01-02T00:00:00Z' },
];
const ALL = [1, 2, 3, 4, 5, 6, 7, 8];

/** The `_index` modes of the INTERFACE table (and API.md §8.2's `field`, `global`, pairs): which of field/global terms/values each keeps. */
const MODES: Array<{ mode: string; fieldTerms: boolean; fieldValues: boolean; globalTerms: boolean; shown: string }> = [
  { mode: 'none', fieldTerms: false, fieldValues: false, globalTerms: false, shown: 'none' },
  { mode: 'field_terms', fieldTerms: true, fieldValues: false, globalTerms: false, shown: 'field_terms' },
  { mode: 'field_values', fieldTerms: false, fieldValues: true, globalTerms: false, shown: 'field_values' },
  { mode: 'field_all', fieldTerms: true, fieldValues: true, globalTerms: false, shown: 'field' },
  { mode: 'field', fieldTerms: true, fieldValues: true, globalTerms: false, shown: 'field' },
  { mode: 'global_terms', fieldTerms: false, fieldValues: false, globalTerms: true, shown: 'global_terms' },
  { mode: 'global_values', fieldTerms: false, fieldValues: false, globalTerms: false, shown: 'global_values' },
  { mode: 'global_all', fieldTerms: false, fieldValues: false, globalTerms: true, shown: 'global' },
  { mode: 'global', fieldTerms: false, fieldValues: false, globalTerms: true, shown: 'global' },
  { mode: 'terms', fieldTerms: true, fieldValues: false, globalTerms: true, shown: 'terms' },
  { mode: 'values', fieldTerms: false, fieldValues: true, globalTerms: false, shown: 'values' },
  { mode: 'all', fieldTerms: true, fieldValues: true, globalTerms: true, shown: 'all' },
  { mode: 'global_terms,field_values', fieldTerms: false, fieldValues: true, globalTerms: true, shown: 'global_terms,field_values' },
  { mode: 'field_terms,global_values', fieldTerms: true, fieldValues: false, globalTerms: false, shown: 'field_terms,global_values' },
];
const modeIndex = (mode: string): string => `/mode_${mode.replace(',', '_')}/`;

beforeAll(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/dsl/', { _settings: { number_of_shards: 2 }, _schema: SCHEMA });
  expect(created.status).toBe(200);
  const restored = await call(server, 'RESTORE', '/dsl/', DOCS.map((d) => JSON.stringify(d)).join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(restored.json.indexed).toBe(DOCS.length);
  for (const { mode } of MODES) {
    const index = modeIndex(mode);
    const r = await call(server, 'PUT', index, {
      _settings: { number_of_shards: 2 },
      _schema: { n: { _type: 'integer', _index: mode }, w: { _type: 'text', _index: mode }, k: { _type: 'keyword', _index: mode } },
    });
    expect({ mode, status: r.status }).toEqual({ mode, status: 200 });
    for (const i of [1, 2, 3]) expect((await call(server, 'PUT', `${index}${i}`, { n: i * 10, w: `alpha w${i}`, k: `K${i}` })).status).toBe(200);
  }
  for (const [index, docs] of [['/multi_a/', [{ _id: 1, color: 'red', n: 5 }, { _id: 2, color: 'blue', n: 1 }]], ['/multi_b/', [{ _id: 1, color: 'red', n: 3 }, { _id: 3, color: 'red', n: 9 }]]] as const) {
    await call(server, 'PUT', index, { _settings: { number_of_shards: 1 }, _schema: { color: { _type: 'keyword' }, n: { _type: 'integer' } } });
    for (const { _id, ...body } of docs) await call(server, 'PUT', `${index}${_id}`, body);
  }
}, 60_000);

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

interface Hit { _id: number; '#rank': number; '#weight': number; '#index'?: string; [field: string]: unknown }

async function search(body: unknown, index = '/dsl/'): Promise<{ total: number; count: number; hits: Hit[] }> {
  const r = await call(server, 'SEARCH', index, body);
  if (r.status !== 200) throw new Error(`SEARCH ${index} ${JSON.stringify(body)}: ${r.status} ${r.text}`);
  return r.json;
}

/** IDs of every match, ascending (and the total agrees). */
async function matching(query: unknown, index = '/dsl/'): Promise<number[]> {
  const r = await search({ _query: query, _limit: 100 }, index);
  expect(r.total).toBe(r.hits.length);
  return r.hits.map((h) => h._id).sort((a, b) => a - b);
}

async function order(body: Record<string, unknown>, index = '/dsl/'): Promise<number[]> {
  return (await search({ _limit: 100, ...body }, index)).hits.map((h) => h._id);
}

/** `GET /dsl/:search?…`: IDs of the matches, ascending. */
async function queryString(params: string, index = '/dsl/'): Promise<number[]> {
  const r = await call(server, 'GET', `${index}:search?limit=100&${params}`);
  if (r.status !== 200) throw new Error(`?${params}: ${r.status} ${r.text}`);
  expect(r.json.total).toBe(r.json.hits.length);
  return (r.json.hits as Hit[]).map((h) => h._id).sort((a, b) => a - b);
}

const q = encodeURIComponent;

type Case = [unknown, number[]];
const title = (query: unknown, expected: number[]): string => `${JSON.stringify(query)} → [${expected.join(', ')}]`;

function cases(list: Case[]): void {
  for (const [query, expected] of list) it(title(query, expected), async () => expect(await matching(query)).toEqual(expected));
}

// ---- §9.3 field leaves, type by type -----------------------------------------------------------

describe('text fields (§9.3.1): analysed, OR by default, phrases, +/-, patterns, text operators', () => {
  cases([
    [{ title: 'fox' }, [1, 2]],
    [{ title: 'FOX' }, [1, 2]],
    [{ title: 'foxes' }, [4, 8]],
    [{ title: 'sleep bread' }, [3, 5]],
    [{ title: '"quick brown"' }, [1]],
    [{ title: '"brown quick"' }, []],
    [{ title: '"quick brown fox jumps"' }, [1]],
    [{ title: 'quick -red' }, [1]],
    [{ title: '+lazy dog' }, [1, 3]],
    [{ title: '+brown +fox' }, [1]],
    [{ title: 'bread -"brown butter"' }, []],
    [{ title: 'fox*' }, [1, 2, 4, 8]],
    [{ title: 'qu?ck' }, [1, 2]],
    [{ title: 'quick**' }, [1, 2, 8]],
    [{ title: { _wildcard: 'bro' } }, [1, 5, 8]],
    [{ title: { _partial: 'bro' } }, [1, 5, 8]],
    [{ title: { _and: 'quick fox' } }, [1, 2]],
    [{ title: { _or: 'sleep OR bread' } }, [3, 5]],
    [{ title: { _and: 'fox AND NOT red' } }, [1]],
    [{ title: { _and: '(sleep OR bread) AND brown' } }, [5]],
    [{ title: { _phrase: 'quick brown fox' } }, [1]],
    [{ title: { _phrase: 'fox brown' } }, []],
    [{ title: { _near: 'dog quick' } }, [1]],
    [{ title: { _near: 'quick butter' } }, []],
    [{ title: { _value: 'bread' } }, [5]],
    [{ title: '*' }, [1, 2, 3, 4, 5, 6, 8]],
    [{ note: 'world' }, [1, 2]],
    [{ note: 'hello' }, [1]],
  ]);

  it('a text leaf weighs BM25 (> 0); a rarer word weighs more', async () => {
    const r = await search({ _query: { title: 'quick brown' } });
    expect(r.hits[0]!._id).toBe(1);
    expect(r.hits[0]!['#weight']).toBeGreaterThan(r.hits[1]!['#weight']);
    expect(r.hits.every((h) => h['#weight'] > 0)).toBe(true);
  });
});

describe('keyword fields: whole values, case-insensitive, patterns', () => {
  cases([
    [{ tag: 'red' }, [1, 3]],
    [{ tag: 'RED' }, [1, 3]],
    [{ tag: 'dynamic' }, []],
    [{ tag: 'dynamic cat' }, [8]],
    [{ tag: 'dynamic cate*' }, [4]],
    [{ tag: 'dynamic cat**' }, [4, 8]],
    [{ tag: 'bl*' }, [2, 7]],
    [{ tag: 'gr?en' }, [5]],
    [{ tag: { _wildcard: 'gre' } }, [5]],
    [{ tag: { _partial: 'dyn' } }, [4, 8]],
    [{ tag: { _value: 'Green' } }, [5]],
    [{ tag: { _in: 'a..c' } }, [2, 7]],
    [{ tag: '*' }, [1, 2, 3, 4, 5, 7, 8]],
    [{ label: 'x1' }, [1]],
    [{ user: { city: 'richmond' } }, [1]],
    [{ 'user.city': 'Paris' }, [2]],
  ]);

  it('keyword equality weighs 0 (§9.3: non-text equality)', async () => {
    const r = await search({ _query: { tag: 'red' } });
    expect(r.hits.map((h) => h['#weight'])).toEqual([0, 0]);
  });
});

describe('integer, positive and floating fields: equality, _value, ranges in every notation', () => {
  cases([
    [{ n: 15 }, [3]],
    [{ n: '15' }, [3]],
    [{ n: -20 }, [1]],
    [{ n: { _value: 15 } }, [3]],
    [{ n: 'abc' }, []],
    [{ n: { _in: { _range: { _from: 0, _to: 100 } } } }, [2, 3, 4, 8]],
    [{ n: { _in: '0..100' } }, [2, 3, 4, 8]],
    [{ n: { _in: '[0..100]' } }, [2, 3, 4, 8]],
    [{ n: { _in: '..0' } }, [1, 2]],
    [{ n: { _in: '100..' } }, [4, 5, 7]],
    [{ n: { _in: { _range: { _from: 100 } } } }, [4, 5, 7]],
    [{ n: { _in: { _range: { _to: -20 } } } }, [1]],
    [{ n: { _in: '[100..0]' } }, []],
    // Around the accuracy steps (100, 1000, … 10⁸): buckets plus exact edges.
    [{ n: { _in: '99..101' } }, [4]],
    [{ n: { _in: '101..999999' } }, [5]],
    [{ n: { _in: '1000000..100000000' } }, [7]],
    [{ n: { _in: '-100..-1' } }, [1]],
    [{ n: '*' }, [1, 2, 3, 4, 5, 7, 8]],
    [{ p: 42 }, [8]],
    [{ p: 0 }, [5]],
    [{ p: { _in: '100..1000' } }, [2, 3]],
    [{ p: { _in: '1000..' } }, [3, 4]],
    [{ f: 2.25 }, [2]],
    [{ f: 1000000 }, [4]],
    [{ f: { _in: '[-5..1.5]' } }, [1, 3, 5]],
    [{ f: { _in: { _range: { _from: 42.5 } } } }, [4, 8]],
    [{ f: { _in: '1.6..2.25' } }, [2]],
  ]);
});

describe('boolean fields', () => {
  cases([
    [{ b: true }, [1, 3, 8]],
    [{ b: false }, [2, 4, 5]],
    [{ b: 't' }, [1, 3, 8]],
    [{ b: '0' }, [2, 4, 5]],
    [{ b: 'false' }, [2, 4, 5]],
    [{ b: '*' }, [1, 2, 3, 4, 5, 8]],
  ]);
});

describe('date and datetime fields (§8.5): values, ranges, date math', () => {
  cases([
    [{ d: '2020-01-15' }, [2]],
    [{ d: '2020-01-15T00:00:00Z' }, [2]],
    [{ d: { _in: '2020-01-01..2020-01-31' } }, [1, 2, 8]],
    [{ d: { _in: { _range: { _from: '2020-01-01||+1d', _to: '2020-03-01||-1d' } } } }, [2, 3, 8]],
    [{ d: { _in: { _range: { _from: '2020-02-15||/M' } } } }, [3, 4]],
    [{ d: { _in: { _range: { _to: '2019-01-01||-18y+4M+23d' } } } }, [5]],
    [{ d: { _in: { _range: { _from: 'now-100y', _to: 'now' } } } }, [1, 2, 3, 4, 5, 8]],
    [{ d: { _in: { _range: { _from: 'now' } } } }, []],
    [{ d: { _in: '..1999-12-31' } }, [5]],
    [{ d: '*' }, [1, 2, 3, 4, 5, 8]],
    [{ dt: '2020-01-01T10:00:00Z' }, [1]],
    [{ dt: '2020-01-01T11:00:00+01:00' }, [1]],
    [{ dt: '2020-01-15T21:30:00Z' }, [2]],
    [{ dt: { _in: '2020-01-15T21:00:00Z..2020-01-15T22:00:00Z' } }, [2]],
    [{ dt: { _in: { _range: { _from: '2020-03-01' } } } }, [3, 4]],
    [{ dt: { _in: { _range: { _from: '2020-01-01T10:00:00Z||+1h', _to: '2020-01-15||+1d/d' } } } }, [2, 8]],
    [{ dt: { _in: { _range: { _from: 946684799, _to: 946684799 } } } }, [5]],
  ]);
});

describe('casts (§9.3): the value converted first', () => {
  cases([
    [{ n: { _integer: '15' } }, [3]],
    [{ n: { _float: 15 } }, [3]],
    [{ n: { _text: '15' } }, [3]],
    [{ n: { _string: '15' } }, [3]],
    [{ p: { _positive: 42 } }, [8]],
    [{ f: { _float: '2.25' } }, [2]],
    [{ b: { _boolean: 'true' } }, [1, 3, 8]],
    [{ tag: { _keyword: 'GREEN' } }, [5]],
    [{ tag: { _term: 'green' } }, [5]],
    [{ title: { _text: 'bread' } }, [5]],
    [{ d: { _date: '2020-02-29' } }, [3]],
    [{ d: { _date: { _year: 2020, _month: 2, _day: 29 } } }, [3]],
    [{ dt: { _datetime: { _year: 2020, _month: 1, _day: 2 } } }, [8]],
    [{ dt: { _datetime: { _year: 2020, _month: 1, _day: 1, _hour: 10 } } }, [1]],
  ]);
});

describe('fields, _id, "*" and unknown fields', () => {
  cases([
    [{ _id: 3 }, [3]],
    [{ _id: { _in: '2..4' } }, [2, 3, 4]],
    [{ nosuchfield: 'x' }, []],
    [{ nosuchfield: '*' }, []],
    [{ tag: 'red', n: { _in: '..0' } }, [1]],
  ]);

  it('"*" as the whole query, or no _query, matches everything', async () => {
    expect(await matching('*')).toEqual(ALL);
    expect((await search({ _limit: 100 })).hits.map((h) => h._id).sort((a, b) => a - b)).toEqual(ALL);
  });
});

// ---- §9.3.2 compound operators ------------------------------------------------------------------

describe('compound operators (§9.3.2)', () => {
  cases([
    [{ _and: [{ title: 'fox' }, { tag: 'blue' }] }, [2]],
    [{ _or: [{ tag: 'green' }, { n: 15 }] }, [3, 5]],
    [{ _not: [{ tag: 'red' }, { tag: 'blue' }] }, [4, 5, 6, 8]],
    [{ _and_not: [{ title: 'fox*' }, { tag: 'red' }, { n: 0 }] }, [4, 8]],
    [{ _xor: [{ title: 'quick' }, { title: 'brown' }] }, [2, 5]],
    [{ _xor: [{ title: 'quick' }, { title: 'brown' }, { b: true }] }, [1, 2, 3, 5, 8]],
    [{ _and_maybe: [{ b: true }, { title: 'quick**' }] }, [1, 3, 8]],
    [{ _filter: [{ title: 'fox' }, { b: true }] }, [1]],
    [{ _max: [{ title: 'fox' }, { title: 'brown' }] }, [1, 2, 5]],
    [{ _elite_set: [{ title: 'fox' }, { title: 'brown' }] }, [1, 2, 5]],
    [{ _synonym: [{ title: 'fox' }, { title: 'brown' }] }, [1, 2, 5]],
    [{ _match_all: {} }, ALL],
    [{ _match_none: {} }, []],
    [{ _or: [{ _and: [{ tag: 'red' }, { _not: [{ b: true }] }] }, { _and_not: [{ tag: 'blue' }, { n: { _in: '..10' } }] }] }, [7]],
  ]);

  const weightOf = async (query: unknown, id: number): Promise<number> => (await search({ _query: query, _limit: 100 })).hits.find((h) => h._id === id)!['#weight'];

  it('weights: _and and _or sum, _filter and _and_not take the first, _max the largest, _not 0, _and_maybe first + matching others', async () => {
    const fox = await weightOf({ title: 'fox' }, 1);
    const brown = await weightOf({ title: 'brown' }, 1);
    expect(fox).toBeGreaterThan(0);
    expect(brown).toBeGreaterThan(0);
    expect(await weightOf({ _and: [{ title: 'fox' }, { title: 'brown' }] }, 1)).toBeCloseTo(fox + brown, 9);
    expect(await weightOf({ _or: [{ title: 'fox' }, { title: 'brown' }] }, 1)).toBeCloseTo(fox + brown, 9);
    expect(await weightOf({ _filter: [{ title: 'fox' }, { title: 'brown' }] }, 1)).toBeCloseTo(fox, 9);
    expect(await weightOf({ _and_not: [{ title: 'fox' }, { title: 'bread' }] }, 1)).toBeCloseTo(fox, 9);
    expect(await weightOf({ _max: [{ title: 'fox' }, { title: 'brown' }] }, 1)).toBeCloseTo(Math.max(fox, brown), 9);
    expect(await weightOf({ _not: [{ title: 'bread' }] }, 1)).toBe(0);
    expect(await weightOf({ _and_maybe: [{ title: 'fox' }, { title: 'brown' }] }, 1)).toBeCloseTo(fox + brown, 9);
    expect(await weightOf({ _and_maybe: [{ title: 'fox' }, { title: 'bread' }] }, 1)).toBeCloseTo(fox, 9);
  });

  it('_and_maybe ranks the documents that also match the optional part first', async () => {
    const r = await search({ _query: { _and_maybe: [{ b: true }, { title: 'quick**' }] } });
    expect(r.hits.map((h) => h._id).slice(0, 2).sort()).toEqual([1, 8]);
    expect(r.hits[2]).toMatchObject({ _id: 3, '#weight': 0 });
  });
});

// ---- §9.5 sorting, pages, _check_at_least, _selector --------------------------------------------

describe('sorting (§9.5): values, several keys, missing values last, ties by _id', () => {
  const sorts: Array<[unknown, number[]]> = [
    ['n', [1, 2, 3, 8, 4, 5, 7, 6]],
    ['+n', [1, 2, 3, 8, 4, 5, 7, 6]],
    ['-n', [7, 5, 4, 8, 3, 2, 1, 6]],
    [{ n: { _order: 'desc' } }, [7, 5, 4, 8, 3, 2, 1, 6]],
    [{ n: { _order: 'asc' } }, [1, 2, 3, 8, 4, 5, 7, 6]],
    ['f', [3, 5, 1, 2, 8, 4, 6, 7]],
    ['-d', [4, 3, 2, 8, 1, 5, 6, 7]],
    ['dt', [5, 1, 8, 2, 3, 4, 6, 7]],
    ['b', [2, 4, 5, 1, 3, 8, 6, 7]],
    [['tag', '-n'], [7, 2, 8, 4, 5, 3, 1, 6]],
    [['-tag', 'n'], [1, 3, 5, 4, 8, 2, 7, 6]],
    [['-b', { p: { _order: 'desc' } }], [3, 8, 1, 4, 2, 5, 6, 7]],
    ['-_id', [8, 7, 6, 5, 4, 3, 2, 1]],
    ['nosuchfield', ALL],
  ];
  for (const [sort, expected] of sorts) {
    it(`_sort ${JSON.stringify(sort)} → [${expected.join(', ')}]`, async () => expect(await order({ _sort: sort })).toEqual(expected));
  }

  it('without _sort: weight descending, then _id ascending', async () => {
    const r = await search({ _query: { title: 'brown fox' } });
    const weights = r.hits.map((h) => h['#weight']);
    expect([...weights].sort((a, b) => b - a)).toEqual(weights);
    expect(await order({ _query: { tag: 'blue' } })).toEqual([2, 7]);
  });

  it('_offset and _limit page through the order; #rank counts from the start', async () => {
    const r = await search({ _sort: 'n', _offset: 2, _limit: 3 });
    expect(r.hits.map((h) => [h._id, h['#rank']])).toEqual([[3, 2], [8, 3], [4, 4]]);
    expect(r).toMatchObject({ total: 8, count: 3 });
    expect(await search({ _sort: 'n', _limit: 0 })).toMatchObject({ total: 8, count: 0, hits: [] });
    expect(await search({ _sort: 'n', _offset: 100 })).toMatchObject({ total: 8, count: 0, hits: [] });
  });

  it('_check_at_least is accepted and changes nothing', async () => {
    const body = { _query: { title: 'fox*' }, _sort: '-n' };
    const plain = await search(body);
    const checked = await search({ ...body, _check_at_least: 1 });
    expect(checked.hits.map((h) => h._id)).toEqual(plain.hits.map((h) => h._id));
    expect(checked.total).toBe(plain.total);
  });

  it('_selector drills into each hit, or keeps the listed keys; a missing path is null (§1.3)', async () => {
    expect((await search({ _sort: 'n', _limit: 3, _selector: 'n' })).hits).toEqual([-20, 0, 15]);
    expect((await search({ _sort: '_id', _limit: 3, _selector: 'user.city' })).hits).toEqual(['Richmond', 'Paris', null]);
    expect((await search({ _sort: 'n', _limit: 2, _selector: '{n,tag}' })).hits).toEqual([{ n: -20, tag: 'red' }, { n: 0, tag: 'blue' }]);
    const r = await call(server, 'GET', '/dsl/:search?sort=n&limit=2&selector=tag');
    expect(r.json.hits).toEqual(['red', 'blue']);
  });
});

// ---- §9.4 query strings -------------------------------------------------------------------------

describe('query strings (§9.4)', () => {
  const strings: Array<[string, number[]]> = [
    ['tag:red', [1, 3]],
    ['tag:RED', [1, 3]],
    ['n:15', [3]],
    ['n:[0..100]', [2, 3, 4, 8]],
    ['n:0..100', [2, 3, 4, 8]],
    ['n:..0', [1, 2]],
    ['n:100..', [4, 5, 7]],
    ['d:[2020-01-01..2020-01-31]', [1, 2, 8]],
    ['title:"quick brown"', [1]],
    ["title:'quick brown'", [1]],
    ['title:fox*', [1, 2, 4, 8]],
    ['title:quick**', [1, 2, 8]],
    ['tag:"dynamic cat"', [8]],
    ['b:true', [1, 3, 8]],
    ['tag:red AND n:..0', [1]],
    ['tag:red and n:..0', [1]],
    ['tag:red & n:..0', [1]],
    ['tag:red tag:green', [1, 3, 5]],
    ['tag:red OR tag:green', [1, 3, 5]],
    ['tag:red | tag:green', [1, 3, 5]],
    ['tag:red XOR b:true', [8]],
    ['tag:red MAYBE title:dog', [1, 3]],
    ['NOT tag:red', [2, 4, 5, 6, 7, 8]],
    ['!tag:red', [2, 4, 5, 6, 7, 8]],
    ['tag:blue AND NOT n:0', [7]],
    ['(tag:red OR tag:green) AND b:false', [5]],
    // Precedence, tightest first: NOT, AND, MAYBE, XOR, OR.
    ['tag:green OR tag:red AND n:..0', [1, 5]],
    ['tag:red XOR b:true OR tag:green', [5, 8]],
    ['NOT tag:red AND b:true', [8]],
    ['tag:red MAYBE tag:blue AND n:0', [1, 3]],
    ['*', ALL],
  ];
  for (const [text, expected] of strings) {
    it(`?q=${text} → [${expected.join(', ')}]`, async () => expect(await queryString(`q=${q(text)}`)).toEqual(expected));
  }

  it('a word without a field searches every text and keyword field, ranked by its best field (bare words)', async () => {
    // `fox` is in titles only; `world` in notes (string = text); `red` in tags (keyword) and title 2.
    expect(await queryString(`q=${q('fox')}`)).toEqual(await matching({ title: 'fox' }));
    expect(await queryString('q=fox')).toEqual([1, 2]);
    expect(await queryString('q=world')).toEqual([1, 2]);
    expect(await matching('red')).toEqual([1, 2, 3]);
    expect(await matching('richmond')).toEqual([1]);
    expect(await matching('Richmond')).toEqual([1]);
    expect(await queryString(`q=${q('fox AND tag:blue')}`)).toEqual([2]);
    expect(await queryString(`q=${q('quick**')}`)).toEqual([1, 2, 8]);
    // The best field counts, not the sum of the fields a word is in: `red` weighs in document 2 what title:red weighs there.
    const hits = (await search({ _query: 'red', _limit: 10 })).hits;
    const titleRed = (await search({ _query: { title: 'red' }, _limit: 10 })).hits.find((h) => h._id === 2)!['#weight'];
    expect(hits.find((h) => h._id === 2)!['#weight']).toBeCloseTo(titleRed, 9);
    expect(hits.every((h) => h['#weight'] >= 0)).toBe(true);
  });

  it('q and query repeat and are ANDed; a string _query in a body is a query string', async () => {
    expect(await queryString(`q=${q('tag:red')}&q=${q('n:15')}`)).toEqual([3]);
    expect(await queryString(`query=${q('tag:red')}`)).toEqual([1, 3]);
    expect(await matching('tag:red AND n:..0')).toEqual([1]);
    const count = await call(server, 'COUNT', `/dsl/?q=${q('tag:red')}`);
    expect(count.json).toEqual({ total: 2 });
  });

  it('sort (repeatable), offset, limit and check_at_least parameters', async () => {
    const r = await call(server, 'GET', `/dsl/:search?q=${q('n:*')}&sort=-n&offset=1&limit=2&check_at_least=10`);
    expect(r.json.hits.map((h: Hit) => h._id)).toEqual([5, 4]);
    const two = await call(server, 'GET', '/dsl/:search?sort=tag&sort=-n&limit=3');
    expect(two.json.hits.map((h: Hit) => h._id)).toEqual([7, 2, 8]);
  });
});

// ---- _index modes (INTERFACE "Indexing mode", API.md §8.2, §8.3) --------------------------------

describe('_index modes: terms serve term queries, values serve sorts and ranges', () => {
  for (const m of MODES) {
    describe(m.mode, () => {
      const index = modeIndex(m.mode);

      it('is kept in the schema (the _all forms shown as field/global)', async () => {
        const r = await call(server, 'GET', index);
        const shown = String(r.json._schema.n._index);
        expect(shown.split(',').sort()).toEqual(m.shown.split(',').sort());
      });

      it(`field terms: a text or keyword query on the field ${m.fieldTerms ? 'matches' : 'matches nothing'}`, async () => {
        expect(await matching({ w: 'w2' }, index)).toEqual(m.fieldTerms ? [2] : []);
        expect(await matching({ k: 'k2' }, index)).toEqual(m.fieldTerms ? [2] : []);
      });

      // The INTERFACE rule: without terms, no term query on the field matches, whatever the value slot holds.
      it(`field terms: an exact-case keyword or a number as a term ${m.fieldTerms ? 'matches' : 'matches nothing'}`, async () => {
        expect(await matching({ k: 'K2' }, index)).toEqual(m.fieldTerms ? [2] : []);
        expect(await matching({ n: 20 }, index)).toEqual(m.fieldTerms ? [2] : []);
      });

      // §9.4: a word without a field searches the global terms and every text and keyword field's terms.
      const bare = m.globalTerms || m.fieldTerms;
      it(`global or field terms: a query string without a field ${bare ? 'matches' : 'matches nothing'}`, async () => {
        expect(await matching('w2', index)).toEqual(bare ? [2] : []);
        expect(await matching('k2', index)).toEqual(bare ? [2] : []);
        expect(await queryString(`q=${q('w3 OR k1')}`, index)).toEqual(bare ? [1, 3] : []);
      });

      // §8.3: exact with values; with terms only, every document in a bucket of the smallest step (100) meeting the range.
      const range = m.fieldValues ? [2] : m.fieldTerms ? [1, 2, 3] : [];
      it(`a range on the field matches [${range.join(', ')}]`, async () => {
        expect(await matching({ n: { _in: '15..25' } }, index)).toEqual(range);
      });

      const sorted = m.fieldValues ? [3, 2, 1] : [1, 2, 3];
      it(`sorting by the field ${m.fieldValues ? 'orders by value' : 'leaves _id order'}`, async () => {
        expect(await order({ _sort: '-n' }, index)).toEqual(sorted);
      });

      if (m.mode === 'none' || m.fieldTerms || m.fieldValues) {
        it(`"*" on the field matches ${m.fieldTerms || m.fieldValues ? 'every document' : 'nothing'}`, async () => {
          expect(await matching({ n: '*' }, index)).toEqual(m.fieldTerms || m.fieldValues ? [1, 2, 3] : []);
        });
      }
    });
  }
});

// ---- multi-index (§1.1, §9.2) -------------------------------------------------------------------

describe('several indexes in one search', () => {
  it('/a,b/ searches both, sorts across them and marks each hit with #index', async () => {
    const r = await search({ _query: { color: 'red' }, _sort: '-n' }, '/multi_a,multi_b/');
    expect(r.total).toBe(3);
    expect(r.hits.map((h) => [h['#index'], h._id, h.n])).toEqual([['/multi_b/', 3, 9], ['/multi_a/', 1, 5], ['/multi_b/', 1, 3]]);
    expect((await call(server, 'COUNT', '/multi_a,multi_b/', { _query: { color: 'red' } })).json).toEqual({ total: 3 });
  });

  it('name* expands to the existing indexes with that prefix; a missing index adds nothing', async () => {
    expect((await search({ _query: '*' }, '/multi_*/')).total).toBe(4);
    expect((await search({ _query: '*' }, '/multi_a,nosuchindex/')).total).toBe(2);
    expect(await search({ _query: '*' }, '/nosuchprefix*/')).toMatchObject({ total: 0, hits: [] });
  });
});

// ---- 400s ---------------------------------------------------------------------------------------

describe('bad requests are 400 with a message', () => {
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['unknown operator', { _query: { _bogus: [] } }, /Invalid operator: _bogus/],
    ['unknown operator under a field', { _query: { title: { _bogus: 'x' } } }, /Invalid operator: _bogus/],
    ['_scale_weight', { _query: { _scale_weight: [{ title: 'fox' }] } }, /Invalid operator: _scale_weight/],
    ['_edit_distance', { _query: { title: { _edit_distance: 'fox' } } }, /Invalid operator: _edit_distance/],
    ['array _near', { _query: { title: { _near: ['quick', 'fox'] } } }, /Invalid operator: _near/],
    ['array _phrase', { _query: { _phrase: ['quick', 'fox'] } }, /Invalid operator: _phrase/],
    ['a pattern on an integer', { _query: { n: '1*' } }, /\bn\b/],
    ['a pattern on a date', { _query: { d: '2020**' } }, /\bd\b/],
    ['a pattern on a boolean', { _query: { b: 'tr*' } }, /\bb\b/],
    ['a range that is no range', { _query: { n: { _in: '5' } } }, /range/i],
    ['a number as a range', { _query: { n: { _in: 5 } } }, /_in/],
    ['an unknown range key', { _query: { n: { _in: { _range: { _from: 1, _until: 3 } } } } }, /_until/],
    ['a range that is an array', { _query: { n: { _in: { _range: [1, 3] } } } }, /_range/],
    ['an object as a range end', { _query: { n: { _in: { _range: { _from: {} } } } } }, /_from/],
    ['a number as _query', { _query: 5 }, /_query/],
    ['an empty compound', { _query: { _and: [] } }, /_and/],
    ['_match_all with a value', { _query: { _match_all: true } }, /_match_all/],
    ['a bad query string', { _query: 'tag:(' }, /position/],
    ['an unclosed range in a query string', { _query: 'n:[1..3' }, /\]/],
    ['a dangling operator', { _query: 'tag:red AND' }, /AND/],
    ['an unknown _order', { _sort: { n: { _order: 'sideways' } } }, /_order/],
    ['a number as _sort', { _sort: 5 }, /_sort/],
    ['a negative _offset', { _offset: -1 }, /_offset/],
    ['a string _limit', { _limit: 'ten' }, /_limit/],
    ['a fractional _check_at_least', { _check_at_least: 1.5 }, /_check_at_least/],
    ['_offset + _limit over 100,000', { _offset: 99_995, _limit: 10 }, /./],
  ];
  for (const [what, body, message] of bad) {
    it(`${what}: ${JSON.stringify(body)}`, async () => {
      const r = await call(server, 'SEARCH', '/dsl/', body);
      expect({ status: r.status, message: r.json?.message }).toEqual({ status: 400, message: expect.stringMatching(/^Bad Request: /) });
      expect(r.json.message).toMatch(message);
    });
  }

  it('the same through COUNT and query parameters', async () => {
    expect((await call(server, 'COUNT', '/dsl/', { _query: { _bogus: [] } })).status).toBe(400);
    for (const params of [`q=${q('tag:(')}`, `q=${q('n:[1..3')}`, 'limit=ten', 'offset=-1', 'offset=1.5']) {
      const r = await call(server, 'GET', `/dsl/:search?${params}`);
      expect({ params, status: r.status }).toEqual({ params, status: 400 });
      expect(r.json.message).toMatch(/^Bad Request: /);
    }
  });

  // §2.1: integer parameters are unsigned decimals, "anything else → 400"; `check_at_least` is one (§9.1).
  it('?check_at_least=x is 400', async () => {
    const r = await call(server, 'GET', '/dsl/:search?check_at_least=x');
    expect(r.status).toBe(400);
  });

  // §9.3: casts convert "numbers, booleans, text" among themselves and "dates, geo, uuid → text only; else 400".
  it('a cast the field type cannot take (a date into an integer field) is 400', async () => {
    const r = await call(server, 'SEARCH', '/dsl/', { _query: { n: { _date: '2020-01-01' } } });
    expect(r.status).toBe(400);
  });

  // §9.3 `{"_in": "[a..b]"}`, §9.4 `range = "[" [a] ".." [b] "]"`: an opening bracket without its closing one is no range.
  it('an unclosed range string in _in is 400', async () => {
    const r = await call(server, 'SEARCH', '/dsl/', { _query: { n: { _in: '[1..3' } } });
    expect(r.status).toBe(400);
  });
});
