/**
 * Fuzzy words, proximity and distance sorts on real data:
 * ../shared/data/accounts.ndjson (1,000 bank accounts) restored into a
 * 3-shard index, each answer checked against one computed here from the raw
 * values:
 *
 * * fuzzy at distances 1 and 2 (API.md §9.3.1) on a keyword (`employer`,
 *   whole values) and on English text (`personality`), against a full-matrix
 *   edit distance over the raw values, with the engine's documented bound of
 *   50 expansions (nearest, then most frequent, then in byte order) applied
 *   to the brute force too;
 * * `_near` (all words within 10 positions) and `_phrase` (in order within
 *   10) and a quoted phrase on `personality`, against token positions;
 * * sorting by distance to a number (`age`), to a date with date math
 *   (`opened`, derived from the account number), and to a string under every
 *   metric (`name.firstName`), computed with talisman.
 *
 * `checkin` (a geo point) and `style` (a namespace) are removed before the
 * restore: they belong to other parts of the schema (geo points may be
 * rejected until geo lands) and nothing here reads them.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { call, REPO_ROOT, removeDir, startServer, type Server } from './harness.js';
import { random } from './random.js';

const require = createRequire(import.meta.url);
type Metric = (a: string, b: string) => number;
const talisman = {
  levenshtein: require('talisman/metrics/levenshtein.js') as Metric,
  jaro: require('talisman/metrics/jaro.js') as Metric,
  jaroWinkler: require('talisman/metrics/jaro-winkler.js') as Metric,
  dice: require('talisman/metrics/dice.js') as Metric,
  jaccard: require('talisman/metrics/jaccard.js') as Metric,
  lcs: require('talisman/metrics/lcs.js') as { similarity: Metric },
  soundex: require('talisman/phonetics/soundex.js') as (s: string) => string,
};

interface Account {
  _id: number;
  accountNumber: number;
  age: number;
  employer: string;
  name: { firstName: string; lastName: string };
  personality: { _value: string };
  opened: string;
}

let server: Server;
let accounts: Account[] = [];
const INDEX = '/accounts_query/';
const FUZZY_EXPANSIONS_MAX = 50;

const pad = (n: number): string => String(n).padStart(2, '0');
/** `opened`: a date and hour from the account number. */
const openedOf = (n: number): string => `20${pad(10 + (n % 10))}-${pad(1 + (n % 12))}-${pad(1 + (n % 28))}T${pad(n % 24)}:00:00Z`;

/** API.md §8.4 tokens, lower-cased, in position order. */
const tokens = (s: string): string[] => s.toLowerCase().match(/(?:[\p{L}\p{N}\p{M}]|(?<=\p{L})['’](?=\p{L}))+/gu) ?? [];
const personalityTokens = new Map<number, string[]>();

beforeAll(async () => {
  server = await startServer();
  const lines = readFileSync(join(REPO_ROOT, '../shared/data/accounts.ndjson'), 'utf8').trim().split('\n');
  const bodies = lines.map((line) => {
    const d = JSON.parse(line) as Record<string, unknown>;
    delete d.checkin;
    delete d.style;
    d.opened = openedOf(d.accountNumber as number);
    return d;
  });
  accounts = bodies as unknown as Account[];
  for (const a of accounts) personalityTokens.set(a._id, tokens(a.personality._value));
  const schema = { employer: { _type: 'keyword' }, name: { firstName: { _type: 'keyword' } }, age: { _type: 'integer' }, opened: { _type: 'date' } };
  expect((await call(server, 'PUT', INDEX, { _settings: { number_of_shards: 3 }, _schema: schema })).status).toBe(200);
  const r = await call(server, 'RESTORE', INDEX, bodies.map((d) => JSON.stringify(d)).join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(r.json.indexed).toBe(accounts.length);
}, 60_000);

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

interface Hit { _id: number; [field: string]: unknown }

/** IDs of every match in answer order (the selector keeps the pages small). */
async function ids(body: Record<string, unknown>): Promise<number[]> {
  const r = await call(server, 'SEARCH', INDEX, { _limit: 1000, _selector: '{_id}', ...body });
  if (r.status !== 200) throw new Error(`${JSON.stringify(body)}: ${r.status} ${r.text}`);
  expect(r.json.total).toBe(r.json.hits.length);
  return (r.json.hits as Hit[]).map((h) => h._id);
}

const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

// ---- brute force ---------------------------------------------------------------------------------

/** Optimal string alignment over code points (a transposition of neighbours counts 1), the whole matrix. */
function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[x.length]![y.length]!;
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Documents matching a fuzzy `query` over each document's values: the
 * distinct values within `max` edits, the 50 best (nearest, most documents,
 * byte order), and every document holding one of them.
 */
function fuzzyMatches(query: string, max: number, valuesOf: (a: Account) => Iterable<string>): number[] {
  const holders = new Map<string, Set<number>>();
  for (const a of accounts) {
    for (const v of valuesOf(a)) {
      let set = holders.get(v);
      if (set === undefined) holders.set(v, set = new Set());
      set.add(a._id);
    }
  }
  const near = [...holders].map(([v, docs]) => ({ v, docs, distance: editDistance(query, v) })).filter((x) => x.distance <= max);
  near.sort((a, b) => a.distance - b.distance || b.docs.size - a.docs.size || byteOrder(a.v, b.v));
  const out = new Set<number>();
  for (const x of near.slice(0, FUZZY_EXPANSIONS_MAX)) for (const id of x.docs) out.add(id);
  return sorted([...out]);
}

/** One typo: substitution, deletion, insertion or transposition of neighbours. */
function typo(word: string, rnd: () => number): string {
  const i = Math.floor(rnd() * word.length);
  const letter = 'abcdefghijklmnopqrstuvwxyz'[Math.floor(rnd() * 26)]!;
  switch (Math.floor(rnd() * 4)) {
    case 0: return word.slice(0, i) + letter + word.slice(i + 1);
    case 1: return word.length > 3 ? word.slice(0, i) + word.slice(i + 1) : word + letter;
    case 2: return word.slice(0, i) + letter + word.slice(i);
    default: return i + 1 < word.length ? word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2) : letter + word;
  }
}

// ---- fuzzy ---------------------------------------------------------------------------------------

describe('fuzzy at distances 1 and 2 against a brute-force edit distance', () => {
  it('keyword values (employer): the whole value, case-insensitive', async () => {
    const rnd = random(11);
    let matchedSomething = 0;
    for (let k = 0; k < 12; k++) {
      const employer = accounts[Math.floor(rnd() * accounts.length)]!.employer;
      const query = typo(employer.toLowerCase(), rnd);
      for (const max of [1, 2]) {
        const expected = fuzzyMatches(query, max, (a) => [a.employer.toLowerCase()]);
        if (expected.length > 0) matchedSomething++;
        expect({ query, max, ids: sorted(await ids({ _query: { employer: `${query.toUpperCase()}~${max}` } })) }).toEqual({ query, max, ids: expected });
      }
    }
    expect(matchedSomething).toBeGreaterThan(12);
  });

  it('English text (personality): any word, unstemmed, with a typo', async () => {
    const rnd = random(5);
    const vocabulary = [...new Set([...personalityTokens.values()].flat())].filter((t) => /^[a-z]{4,}$/.test(t)).sort();
    for (let k = 0; k < 12; k++) {
      const query = typo(vocabulary[Math.floor(rnd() * vocabulary.length)]!, rnd);
      for (const max of [1, 2]) {
        const expected = fuzzyMatches(query, max, (a) => personalityTokens.get(a._id)!);
        expect({ query, max, ids: sorted(await ids({ _query: { personality: `${query}~${max}` } })) }).toEqual({ query, max, ids: expected });
      }
    }
  });

  it('{"_fuzzy": s} and the query string agree with t~', async () => {
    const expected = fuzzyMatches('elegent', 2, (a) => personalityTokens.get(a._id)!);
    expect(expected.length).toBeGreaterThan(0);
    expect(sorted(await ids({ _query: { personality: { _fuzzy: 'elegent' } } }))).toEqual(expected);
    const r = await call(server, 'GET', `${INDEX}:search?limit=1000&selector=${encodeURIComponent('{_id}')}&q=${encodeURIComponent('personality:elegent~2')}`);
    expect(sorted((r.json.hits as Hit[]).map((h) => h._id))).toEqual(expected);
  });
});

// ---- near and phrase -----------------------------------------------------------------------------

/** Positions of each word in a document's tokens. */
function positions(id: number, word: string): number[] {
  const out: number[] = [];
  personalityTokens.get(id)!.forEach((t, i) => { if (t === word) out.push(i); });
  return out;
}

const nearBy = (a: string, b: string): number[] => accounts.filter((d) => {
  const pb = positions(d._id, b);
  return positions(d._id, a).some((i) => pb.some((j) => Math.abs(i - j) < 10));
}).map((d) => d._id);

const orderedBy = (a: string, b: string): number[] => accounts.filter((d) => {
  const pb = positions(d._id, b);
  return positions(d._id, a).some((i) => pb.some((j) => j > i && j - i < 10));
}).map((d) => d._id);

const adjacent = (a: string, b: string): number[] => accounts.filter((d) => {
  const pb = positions(d._id, b);
  return positions(d._id, a).some((i) => pb.includes(i + 1));
}).map((d) => d._id);

describe('_near and _phrase on personality, against token positions', () => {
  const pairs: Array<[string, string]> = [['heroic', 'nature'], ['loyal', 'clever'], ['nature', 'heroic'], ['elegant', 'heroic'], ['friends', 'need'], ['moods', 'lighten']];
  for (const [a, b] of pairs) {
    it(`"${a} ${b}": near, in order, adjacent`, async () => {
      const near = nearBy(a, b);
      const ordered = orderedBy(a, b);
      expect(near.length).toBeGreaterThan(0);
      expect(sorted(await ids({ _query: { personality: { _near: `${a} ${b}` } } }))).toEqual(sorted(near));
      expect(sorted(await ids({ _query: { personality: { _phrase: `${a} ${b}` } } }))).toEqual(sorted(ordered));
      expect(sorted(await ids({ _query: { personality: `"${a} ${b}"` } }))).toEqual(sorted(adjacent(a, b)));
    });
  }
});

// ---- distance sorts ------------------------------------------------------------------------------

/** Ascending distance, ties by _id (every hit weighs 0 under `"*"`). */
const byDistance = (distance: (a: Account) => number): number[] =>
  accounts.map((a) => ({ id: a._id, v: distance(a) })).sort((x, y) => x.v - y.v || x.id - y.id).map((x) => x.id);

describe('sorting by distance', () => {
  it('to a number (age), both orders', async () => {
    expect(await ids({ _sort: { age: { _value: 30 } } })).toEqual(byDistance((a) => Math.abs(a.age - 30)));
    const desc = accounts.map((a) => ({ id: a._id, v: Math.abs(a.age - 30) })).sort((x, y) => y.v - x.v || x.id - y.id).map((x) => x.id);
    expect(await ids({ _sort: { age: { _value: 30, _order: 'desc' } } })).toEqual(desc);
  });

  it('to a date with date math (opened)', async () => {
    const ref = Date.parse('2015-06-01T00:00:00Z') / 1000 + 36 * 3600;
    expect(await ids({ _sort: { opened: { _value: '2015-06-01||+1d+12h' } } })).toEqual(byDistance((a) => Math.abs(Date.parse(a.opened) / 1000 - ref)));
  });

  /** Xapiand's definitions over talisman: lower-cased, distance = 1 − similarity, edits over the longer length. */
  function lcsq(a: string, b: string): number {
    const d: number[][] = Array.from({ length: a.length + 1 }, () => Array<number>(b.length + 1).fill(0));
    for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) d[i]![j] = a[i - 1] === b[j - 1] ? d[i - 1]![j - 1]! + 1 : Math.max(d[i - 1]![j]!, d[i]![j - 1]!);
    return d[a.length]![b.length]!;
  }
  const subsequence = (a: string, b: string): number => (Math.max(a.length, b.length) === 0 ? 1 : lcsq(a, b) / Math.max(a.length, b.length));
  const METRICS: Record<string, Metric> = {
    levenshtein: (a, b) => talisman.levenshtein(a, b) / Math.max(a.length, b.length, 1),
    jarowinkler: (a, b) => 1 - talisman.jaroWinkler(a, b),
    sorensendice: (a, b) => (a === b ? 0 : a.length < 2 || b.length < 2 ? 1 : 1 - talisman.dice(a, b)),
    jaccard: (a, b) => 1 - talisman.jaccard(a, b),
    lcsubstr: (a, b) => 1 - talisman.lcs.similarity(a, b),
    lcsubsequence: (a, b) => 1 - subsequence(a, b),
    soundex: (a, b) => 1 - subsequence(talisman.soundex(a), talisman.soundex(b)),
    jaro: (a, b) => 1 - talisman.jaro(a, b),
  };

  for (const [metric, distance] of Object.entries(METRICS)) {
    it(`to a string (name.firstName) by ${metric}`, async () => {
      const expected = byDistance((a) => distance('christina', a.name.firstName.toLowerCase()));
      expect(await ids({ _sort: { 'name.firstName': { _value: 'Christina', _metric: metric } } })).toEqual(expected);
    });
  }
});
