/**
 * The rest of the query language over HTTP (API.md §9.3, §9.3.1, §9.4,
 * §9.5): fuzzy words and keyword values (`t~N`, `{"_fuzzy": s}`, query
 * strings), `_wildcard`, `_partial`, string `_near`, `_phrase`, `_and`,
 * `_or`, `_elite_set`, `_synonym`, `_max` (and the array forms that exist),
 * casts, sorting by distance to a number, a date or a string under each
 * metric (body and query string with `metric=`), and the 400s.
 *
 * Expectations come from API.md, with edit distances and string metrics
 * computed here (a full-matrix edit distance; talisman's metrics).
 */
import { createRequire } from 'node:module';
import { call, removeDir, startServer, type Server } from './harness.js';

const require = createRequire(import.meta.url);
const levenshtein = require('talisman/metrics/levenshtein.js') as (a: string, b: string) => number;
const jaro = require('talisman/metrics/jaro.js') as (a: string, b: string) => number;

let server: Server;

const SCHEMA = {
  title: { _type: 'text' },
  tag: { _type: 'keyword' },
  name: { _type: 'keyword' },
  n: { _type: 'integer' },
  d: { _type: 'date' },
  b: { _type: 'boolean' },
};

const DOCS = [
  { _id: 1, title: 'The quick brown fox jumps over the lazy dog', tag: 'Uncertain', name: 'Michael', n: 10, d: '2020-01-01', b: true },
  { _id: 2, title: 'A quikc brwn fox', tag: 'unserten', name: 'Micheal', n: -4, d: '2020-01-04', b: false },
  { _id: 3, title: 'Lazy dogs sleep all day', tag: 'certain', name: 'Mitchell', n: 7, d: '2019-12-31' },
  { _id: 4, title: 'colour and color', tag: 'red', name: 'Rachel', n: 3 },
  { _id: 5, title: 'the color of money', tag: 'green', name: 'Mike' },
  { _id: 6, title: 'fox dog fox dog', n: 1 },
];

/** One shard, so that weights compare across documents without per-shard statistics. */
const WEIGHTS = [
  { _id: 1, title: 'colour color' }, { _id: 2, title: 'color x' }, { _id: 3, title: 'colour y' },
  { _id: 4, title: 'color z' }, { _id: 5, title: 'other words' },
];

/** Word i (w00 … w11) in i + 1 documents: an elite set of all twelve drops w10 and w11, the most common. */
const ELITE: Array<{ _id: number; title: string }> = [];
for (let i = 0, id = 1; i < 12; i++) for (let j = 0; j <= i; j++) ELITE.push({ _id: id++, title: `w${String(i).padStart(2, '0')} filler` });
const ELITE_WORDS = Array.from({ length: 12 }, (_, i) => `w${String(i).padStart(2, '0')}`);

async function restore(index: string, shards: number, docs: unknown[], schema: unknown): Promise<void> {
  expect((await call(server, 'PUT', index, { _settings: { number_of_shards: shards }, _schema: schema })).status).toBe(200);
  const r = await call(server, 'RESTORE', index, docs.map((d) => JSON.stringify(d)).join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(r.json.indexed).toBe(docs.length);
}

beforeAll(async () => {
  server = await startServer();
  await restore('/ops/', 2, DOCS, SCHEMA);
  await restore('/weights/', 1, WEIGHTS, { title: { _type: 'text' } });
  await restore('/elite/', 1, ELITE, { title: { _type: 'text' } });
}, 60_000);

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

interface Hit { _id: number; '#weight': number; [field: string]: unknown }

async function search(body: unknown, index = '/ops/'): Promise<{ total: number; hits: Hit[] }> {
  const r = await call(server, 'SEARCH', index, body);
  if (r.status !== 200) throw new Error(`SEARCH ${JSON.stringify(body)}: ${r.status} ${r.text}`);
  return r.json;
}

async function matching(query: unknown, index = '/ops/'): Promise<number[]> {
  const r = await search({ _query: query, _limit: 100 }, index);
  expect(r.total).toBe(r.hits.length);
  return r.hits.map((h) => h._id).sort((a, b) => a - b);
}

async function order(sort: unknown): Promise<number[]> {
  return (await search({ _sort: sort, _limit: 100 })).hits.map((h) => h._id);
}

async function weights(query: unknown, index: string): Promise<Map<number, number>> {
  const r = await search({ _query: query, _limit: 100 }, index);
  return new Map(r.hits.map((h) => [h._id, h['#weight']]));
}

async function queryString(params: string): Promise<number[]> {
  const r = await call(server, 'GET', `/ops/:search?limit=100&${params}`);
  if (r.status !== 200) throw new Error(`?${params}: ${r.status} ${r.text}`);
  return (r.json.hits as Hit[]).map((h) => h._id);
}

/** Optimal string alignment (a transposition of neighbours counts 1), the whole matrix. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

const words = (s: string): string[] => s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
/** Documents with a title word within `max` edits of `word`. */
const fuzzyTitle = (word: string, max: number): number[] =>
  DOCS.filter((d) => words(d.title).some((w) => editDistance(word, w) <= max)).map((d) => d._id);
/** Documents whose whole tag is within `max` edits of `value` (keywords ignore case). */
const fuzzyTag = (value: string, max: number): number[] =>
  DOCS.filter((d) => d.tag !== undefined && editDistance(value.toLowerCase(), d.tag.toLowerCase()) <= max).map((d) => d._id);

const badRequest = async (body: unknown, message: RegExp): Promise<void> => {
  const r = await call(server, 'SEARCH', '/ops/', body);
  expect({ status: r.status, message: r.json?.message }).toEqual({ status: 400, message: expect.stringMatching(/^Bad Request: /) });
  expect(r.json.message).toMatch(message);
};

describe('fuzzy (§9.3.1 t~N, {"_fuzzy": s})', () => {
  const cases: Array<[string, unknown, number[]]> = [
    ['quick~1', { title: 'quick~1' }, fuzzyTitle('quick', 1)],
    ['quikc~1 (a transposition is one edit)', { title: 'quikc~1' }, fuzzyTitle('quikc', 1)],
    ['brwn~', { title: 'brwn~' }, fuzzyTitle('brwn', 2)],
    ['dgo~1', { title: 'dgo~1' }, fuzzyTitle('dgo', 1)],
    ['_fuzzy on text: every word', { title: { _fuzzy: 'quik lazzy' } }, [...new Set([...fuzzyTitle('quik', 2), ...fuzzyTitle('lazzy', 2)])].sort()],
    ['keyword whole value ~3', { tag: 'unserten~3' }, fuzzyTag('unserten', 3)],
    ['keyword ~1', { tag: 'UNSERTEN~1' }, fuzzyTag('unserten', 1)],
    ['_fuzzy on a keyword', { tag: { _fuzzy: 'gren' } }, fuzzyTag('gren', 2)],
  ];
  for (const [what, query, expected] of cases) {
    it(`${what} → [${expected.join(', ')}]`, async () => {
      expect(expected.length).toBeGreaterThan(0);
      expect(await matching(query)).toEqual(expected);
    });
  }

  it('counts a transposition as one edit, and N bounds the distance', async () => {
    expect(await matching({ title: 'qiuck~1' })).toEqual([1]);
    expect(await matching({ title: 'qiuck~0' })).toEqual([]);
    expect(await matching({ tag: 'unserten~2' })).toEqual([2]);
  });

  it('query strings: field:value~N', async () => {
    expect((await queryString(`q=${encodeURIComponent('tag:unserten~3')}`)).sort()).toEqual(fuzzyTag('unserten', 3));
    expect((await queryString(`q=${encodeURIComponent('title:quikc~1 AND tag:unserten')}`))).toEqual([2]);
  });

  it('an edit distance above 8, or a pattern on a number, date or boolean, is 400', async () => {
    await badRequest({ _query: { title: 'quick~9' } }, /Edit distance 9/);
    await badRequest({ _query: { n: { _fuzzy: '10' } } }, /\bn\b.*integer/);
    await badRequest({ _query: { d: { _wildcard: '2020' } } }, /\bd\b.*date/);
    await badRequest({ _query: { b: { _partial: 'tr' } } }, /\bb\b.*boolean/);
    await badRequest({ _query: 'n:1~' }, /\bn\b/);
  });
});

describe('text operators with a string (§9.3, §9.3.1)', () => {
  const cases: Array<[unknown, number[]]> = [
    [{ title: { _wildcard: 'colo' } }, [4, 5]],
    [{ title: { _partial: 'qui' } }, [1, 2]],
    [{ tag: { _partial: 'un' } }, [1, 2]],
    [{ title: { _near: 'dog quick' } }, [1]],
    [{ title: { _near: 'fox lazy' } }, [1]],
    [{ title: { _near: 'quick money' } }, []],
    [{ title: { _phrase: 'quick fox' } }, [1]],
    [{ title: { _phrase: 'fox quick' } }, []],
    [{ title: { _and: 'fox dog' } }, [1, 6]],
    [{ title: { _or: 'colour OR money' } }, [4, 5]],
    [{ title: { _and: '(fox OR color) AND NOT dog' } }, [2, 4, 5]],
    [{ title: { _or: 'sleep NOT lazy' } }, []],
    [{ title: { _max: 'colour money' } }, [4, 5]],
    [{ title: { _synonym: 'colour color' } }, [4, 5]],
    [{ title: { _elite_set: 'colour money sleep' } }, [3, 4, 5]],
  ];
  for (const [query, expected] of cases) {
    it(`${JSON.stringify(query)} → [${expected.join(', ')}]`, async () => expect(await matching(query)).toEqual(expected));
  }
});

describe('_synonym, _max and _elite_set weights', () => {
  it('_synonym weighs as one term: either word weighs the same, both more (a plain OR prefers the rarer word)', async () => {
    for (const query of [{ title: { _synonym: 'colour color' } }, { _synonym: [{ title: 'colour' }, { title: 'color' }] }]) {
      const w = await weights(query, '/weights/');
      expect([...w.keys()].sort()).toEqual([1, 2, 3, 4]);
      expect(w.get(2)).toBeCloseTo(w.get(3)!, 12);
      expect(w.get(1)!).toBeGreaterThan(w.get(2)!);
    }
    const or = await weights({ title: 'colour color' }, '/weights/');
    expect(or.get(3)!).toBeGreaterThan(or.get(2)!);
    // Saturation: one term seen twice weighs less than two terms seen once.
    expect((await weights({ title: { _synonym: 'colour color' } }, '/weights/')).get(1)!).toBeLessThan(or.get(1)!);
  });

  it('_max weighs a document by its best subquery (string and array)', async () => {
    const colour = (await weights({ title: 'colour' }, '/weights/')).get(1)!;
    const color = (await weights({ title: 'color' }, '/weights/')).get(1)!;
    expect(colour).toBeGreaterThan(color);
    expect((await weights({ title: { _max: 'colour color' } }, '/weights/')).get(1)).toBeCloseTo(colour, 12);
    expect((await weights({ _max: [{ title: 'color' }, { title: 'colour' }] }, '/weights/')).get(1)).toBeCloseTo(colour, 12);
  });

  it('_elite_set keeps the 10 subqueries of highest estimated weight (string and array)', async () => {
    const kept = ELITE.filter((d) => !d.title.startsWith('w10') && !d.title.startsWith('w11')).map((d) => d._id);
    expect(await matching({ title: { _elite_set: ELITE_WORDS.join(' ') } }, '/elite/')).toEqual(kept);
    expect(await matching({ _elite_set: ELITE_WORDS.map((w) => ({ title: w })) }, '/elite/')).toEqual(kept);
    expect((await call(server, 'COUNT', '/elite/', { _query: { title: { _elite_set: ELITE_WORDS.join(' ') } } })).json).toEqual({ total: kept.length });
    expect((await matching({ title: { _elite_set: ELITE_WORDS.slice(0, 10).join(' ') } }, '/elite/')).length).toBe(55);
  });
});

describe('casts (§9.3)', () => {
  const cases: Array<[unknown, number[]]> = [
    [{ n: { _integer: '10' } }, [1]],
    [{ n: { _positive: 3 } }, [4]],
    [{ n: { _float: '7.0' } }, [3]],
    [{ n: { _boolean: true } }, [6]],
    [{ n: { _text: '-4' } }, [2]],
    [{ n: { _string: '-4' } }, [2]],
    [{ b: { _integer: 0 } }, [2]],
    [{ b: { _keyword: 'true' } }, [1]],
    [{ tag: { _keyword: 'RED' } }, [4]],
    [{ tag: { _term: 'green' } }, [5]],
    [{ title: { _integer: 1 } }, []],
    [{ d: { _date: '2020-01-04' } }, [2]],
    [{ d: { _datetime: { _year: 2019, _month: 12, _day: 31 } } }, [3]],
    [{ tag: { _uuid: 'not a uuid' } }, []],
  ];
  for (const [query, expected] of cases) {
    it(`${JSON.stringify(query)} → [${expected.join(', ')}]`, async () => expect(await matching(query)).toEqual(expected));
  }

  it('dates, times and UUIDs cast onto text and keywords; onto a number or boolean field they are 400', async () => {
    for (const query of [{ tag: { _date: '2020-01-01' } }, { tag: { _time: '10:30' } }, { tag: { _timedelta: '+01:00' } }, { tag: { _uuid: '5f1b0c3e-8d0a-4b1e-9f3a-2c4d5e6f7a8b' } }]) {
      expect((await call(server, 'SEARCH', '/ops/', { _query: query })).status).toBe(200);
    }
    await badRequest({ _query: { n: { _date: '2020-01-01' } } }, /Cast _date does not apply to field 'n'/);
    await badRequest({ _query: { b: { _uuid: '5f1b0c3e-8d0a-4b1e-9f3a-2c4d5e6f7a8b' } } }, /Cast _uuid/);
    await badRequest({ _query: { d: { _integer: 5 } } }, /Cast _integer/);
  });
});

describe('sorting by distance (§9.5)', () => {
  const withN = DOCS.filter((d) => d.n !== undefined);
  const byDistance = (values: Array<{ id: number; v: number }>, desc = false): number[] =>
    values.sort((a, b) => (desc ? b.v - a.v : a.v - b.v) || a.id - b.id).map((x) => x.id);
  const missingLast = (ids: number[]): number[] => [...ids, ...DOCS.map((d) => d._id).filter((id) => !ids.includes(id))];

  it('numbers by absolute difference, either order, missing values last', async () => {
    const expected = byDistance(withN.map((d) => ({ id: d._id, v: Math.abs(d.n! - 5) })));
    expect(await order({ n: { _value: 5 } })).toEqual(missingLast(expected));
    expect(await order({ n: { _value: '5', _order: 'desc' } })).toEqual(missingLast(byDistance(withN.map((d) => ({ id: d._id, v: Math.abs(d.n! - 5) })), true)));
    expect(await queryString('sort=n:5')).toEqual(missingLast(expected));
    expect(await queryString('sort=-n:5')).toEqual(missingLast(byDistance(withN.map((d) => ({ id: d._id, v: Math.abs(d.n! - 5) })), true)));
  });

  it('dates by absolute difference, the reference with date math', async () => {
    const ref = Date.parse('2020-01-02T00:00:00Z');
    const dated = DOCS.filter((d) => d.d !== undefined).map((d) => ({ id: d._id, v: Math.abs(Date.parse(`${d.d}T00:00:00Z`) - ref) }));
    expect(await order({ d: { _value: '2020-01-01||+1d' } })).toEqual(missingLast(byDistance(dated)));
  });

  it('strings by each metric (jaro by default), from the body and from sort=…&metric=', async () => {
    const named = DOCS.filter((d) => d.name !== undefined);
    const expectedBy = (distance: (a: string, b: string) => number): number[] =>
      missingLast(byDistance(named.map((d) => ({ id: d._id, v: distance('michael', d.name.toLowerCase()) }))));
    const lev = expectedBy((a, b) => levenshtein(a, b) / Math.max(a.length, b.length));
    const jar = expectedBy((a, b) => 1 - jaro(a, b));
    expect(await order({ name: { _value: 'Michael', _metric: 'levenshtein' } })).toEqual(lev);
    expect(await order({ name: { _value: 'MICHAEL', _metric: 'leven' } })).toEqual(lev);
    expect(await order({ name: { _value: 'Michael' } })).toEqual(jar);
    expect(await queryString('sort=name:Michael&metric=leven')).toEqual(lev);
    expect(await queryString('sort=name:Michael')).toEqual(jar);
    for (const metric of ['jarowinkler', 'jarow', 'sorensendice', 'sorensen', 'dice', 'jaccard', 'lcsubstr', 'lcs', 'lcsubsequence', 'lcsq', 'soundex', 'sound', 'jaro']) {
      const r = await search({ _sort: { name: { _value: 'Michael', _metric: metric } }, _limit: 1 });
      expect({ metric, first: r.hits[0]!._id }).toEqual({ metric, first: 1 });
    }
  });

  it('a reference that does not convert, an unknown metric or a type without distance is 400', async () => {
    await badRequest({ _sort: { n: { _value: 'abc' } } }, /_value.*\bn\b/);
    await badRequest({ _sort: { d: { _value: 'yesterday-ish' } } }, /_value.*\bd\b/);
    await badRequest({ _sort: { name: { _value: 'x', _metric: 'hamming' } } }, /Unknown metric: hamming/);
    await badRequest({ _sort: { b: { _value: true } } }, /\bb\b.*boolean/);
    const r = await call(server, 'GET', '/ops/:search?sort=name:x&metric=bogus');
    expect(r.status).toBe(400);
  });
});

describe('operators that do not exist (§9.3.2)', () => {
  const invalid: Array<[string, unknown]> = [
    ['_near', { _near: [{ title: 'quick' }, { title: 'fox' }] }],
    ['_phrase', { title: { _phrase: ['quick', 'fox'] } }],
    ['_scale_weight', { _scale_weight: [{ title: 'fox' }] }],
    ['_edit_distance', { title: { _edit_distance: 'fox' } }],
    ['_edit_distance', { _edit_distance: [{ title: 'fox' }] }],
  ];
  for (const [name, query] of invalid) {
    it(`${JSON.stringify(query)} → 400 Invalid operator: ${name}`, async () => {
      await badRequest({ _query: query }, new RegExp(`Invalid operator: ${name}$`));
      expect((await call(server, 'COUNT', '/ops/', { _query: query })).status).toBe(400);
    });
  }
});
