/**
 * The schema features of API.md §8 on real data: ../shared/data/accounts.ndjson
 * (1,000 bank accounts in Xapiand's sample format) restored into a 3-shard
 * index, each answer checked against one computed here from the raw data:
 *
 * * `style` is a `_namespace` (§8.7): `style.clothing.footwear` is also
 *   searchable as `style.footwear`;
 * * `personality` is text with `_language: "en"`: stemmed word queries and
 *   phrases;
 * * two fields derived from `accountNumber`, `opens` (a time) and `offset` (a
 *   timedelta): ranges and sorts by seconds.
 *
 * `checkin` (a geo point) is removed before the restore: geo values belong to
 * another part of the schema, and this test must not depend on it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newStemmer } from 'snowball-stemmers';
import { call, REPO_ROOT, removeDir, startServer, type Server } from './harness.js';

interface Account {
  _id: number;
  accountNumber: number;
  style?: Record<string, unknown>;
  personality: { _value: string };
  opens: string;
  offset: string;
}

let server: Server;
let accounts: Account[] = [];

const pad = (n: number): string => String(n).padStart(2, '0');
/** `opens`: HH:MM from the account number. */
const opensOf = (n: number): string => `${pad(n % 24)}:${pad(n % 60)}`;
const opensSeconds = (n: number): number => (n % 24) * 3600 + (n % 60) * 60;
/** `offset`: ±HH:MM up to ±09:59, signed by parity. */
const offsetOf = (n: number): string => `${n % 2 === 0 ? '+' : '-'}${pad((n >> 1) % 10)}:${pad(n % 60)}`;
const offsetSeconds = (n: number): number => (n % 2 === 0 ? 1 : -1) * (((n >> 1) % 10) * 3600 + (n % 60) * 60);

/** API.md §8.4 tokens, lower-cased. */
const tokens = (s: string): string[] => s.toLowerCase().match(/(?:[\p{L}\p{N}\p{M}]|(?<=\p{L})['’](?=\p{L}))+/gu) ?? [];
const englishStemmer = newStemmer('english');
/** Stems by token: the texts repeat words, and the package's stemmer is slow enough to matter over 1,000 documents. */
const stems = new Map<string, string>();
const stemOf = (t: string): string => {
  let stem = stems.get(t);
  if (stem === undefined) stems.set(t, stem = englishStemmer.stem(t));
  return stem;
};

beforeAll(async () => {
  server = await startServer();
  const lines = readFileSync(join(REPO_ROOT, '../shared/data/accounts.ndjson'), 'utf8').trim().split('\n');
  const bodies = lines.map((line) => {
    const d = JSON.parse(line) as Record<string, unknown>;
    delete d.checkin;
    const n = d.accountNumber as number;
    d.opens = opensOf(n);
    d.offset = offsetOf(n);
    return d;
  });
  accounts = bodies as unknown as Account[];
  expect((await call(server, 'PUT', '/accounts/', {
    _settings: { number_of_shards: 3 },
    _schema: { opens: { _type: 'time' }, offset: { _type: 'timedelta' } },
  })).status).toBe(200);
  const r = await call(server, 'RESTORE', '/accounts/', bodies.map((d) => JSON.stringify(d)).join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(r.json.indexed).toBe(accounts.length);
}, 60_000);

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

async function ids(query: unknown): Promise<number[]> {
  const r = await call(server, 'SEARCH', '/accounts/', { _query: query, _limit: 1000 });
  if (r.status !== 200) throw new Error(`SEARCH ${JSON.stringify(query)}: ${r.status} ${r.text}`);
  expect(r.json.total).toBe(r.json.hits.length);
  return (r.json.hits as Array<{ _id: number }>).map((h) => h._id).sort((a, b) => a - b);
}

const idsWhere = (test: (a: Account) => boolean): number[] => accounts.filter(test).map((a) => a._id).sort((a, b) => a - b);

/** Every leaf of a namespace object with its path below the namespace. */
function leaves(obj: Record<string, unknown>, path: string[] = []): Array<{ path: string[]; value: string }> {
  const out: Array<{ path: string[]; value: string }> = [];
  for (const [key, value] of Object.entries(obj)) {
    if (key.startsWith('_')) continue;
    if (value !== null && typeof value === 'object') out.push(...leaves(value as Record<string, unknown>, [...path, key]));
    else out.push({ path: [...path, key], value: String(value) });
  }
  return out;
}

describe('style, a namespace', () => {
  const withWord = (a: Account, match: (path: string[]) => boolean, word: string): boolean =>
    a.style !== undefined && leaves(a.style).some((l) => match(l.path) && tokens(l.value).includes(word));
  const frequent = (leaf: string): string[] => {
    const counts = new Map<string, number>();
    for (const a of accounts) for (const l of a.style === undefined ? [] : leaves(a.style)) {
      if (l.path[l.path.length - 1] === leaf) for (const t of tokens(l.value)) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    return [...counts].sort((x, y) => y[1] - x[1]).slice(0, 3).map(([t]) => t);
  };

  test('style.footwear (partial) and style.clothing.footwear (full) find the same accounts', async () => {
    const words = frequent('footwear');
    expect(words.length).toBe(3);
    for (const word of words) {
      const expected = idsWhere((a) => withWord(a, (p) => p[p.length - 1] === 'footwear', word));
      expect(expected.length).toBeGreaterThan(0);
      expect({ word, ids: await ids({ 'style.footwear': word }) }).toEqual({ word, ids: expected });
      expect({ word, ids: await ids({ 'style.clothing.footwear': word }) }).toEqual({ word, ids: expected });
    }
  });

  test('every leaf is searchable by its full path and by namespace + leaf', async () => {
    for (const leaf of ['pants', 'shirt', 'hairstyle']) {
      const word = frequent(leaf)[0]!;
      const expected = idsWhere((a) => withWord(a, (p) => p[p.length - 1] === leaf, word));
      expect({ leaf, ids: await ids({ [`style.${leaf}`]: word }) }).toEqual({ leaf, ids: expected });
    }
    expect(await ids({ 'style.footwear': '*' })).toEqual(idsWhere((a) => a.style !== undefined && leaves(a.style).some((l) => l.path.includes('footwear'))));
  });

  test('the namespace typed its descendants once and kept them out of the schema', async () => {
    const schema = (await call(server, 'GET', '/accounts/')).json._schema;
    expect(schema.style).toMatchObject({ _namespace: true, _type: 'text' });
    expect(Object.keys(schema.style).filter((k) => !k.startsWith('_'))).toEqual([]);
  });
});

describe('personality, English text', () => {
  const words = (a: Account): string[] => tokens(a.personality._value);

  test.each(['heroic', 'elegance', 'loyal', 'passionately'])('"%s" matches every form with its stem', async (word) => {
    const stem = stemOf(word);
    const expected = idsWhere((a) => words(a).some((t) => t === word || stemOf(t) === stem));
    expect(expected.length).toBeGreaterThan(0);
    expect(await ids({ personality: word })).toEqual(expected);
  });

  test('a phrase matches adjacent words only', async () => {
    const expected = idsWhere((a) => words(a).join(' ').includes('heroic nature'));
    expect(expected.length).toBeGreaterThan(0);
    expect(await ids({ personality: '"heroic nature"' })).toEqual(expected);
  });
});

describe('opens (time) and offset (timedelta), derived from accountNumber', () => {
  test.each([
    ['09:30', '17:15'], ['00:00', '00:59'], ['23:00', '23:59:59'],
  ])('opens in [%s..%s]', async (from, to) => {
    const secs = (s: string): number => s.split(':').reduce((acc, p, i) => acc + Number(p) * [3600, 60, 1][i]!, 0);
    const expected = idsWhere((a) => opensSeconds(a.accountNumber) >= secs(from) && opensSeconds(a.accountNumber) <= secs(to));
    expect(await ids({ opens: { _in: `[${from}..${to}]` } })).toEqual(expected);
    expect(await ids({ opens: { _in: { _range: { _from: from, _to: to } } } })).toEqual(expected);
  });

  test.each([
    ['-02:00', '+01:30'], ['+05:00', null], [null, '-09:00'],
  ])('offset from %s to %s', async (from, to) => {
    const secs = (s: string): number => (s.startsWith('-') ? -1 : 1) * s.slice(1).split(':').reduce((acc, p, i) => acc + Number(p) * [3600, 60][i]!, 0);
    const lo = from === null ? -Infinity : secs(from);
    const hi = to === null ? Infinity : secs(to);
    const expected = idsWhere((a) => offsetSeconds(a.accountNumber) >= lo && offsetSeconds(a.accountNumber) <= hi);
    expect(expected.length).toBeGreaterThan(0);
    const range: Record<string, string> = {};
    if (from !== null) range._from = from;
    if (to !== null) range._to = to;
    expect(await ids({ offset: { _in: { _range: range } } })).toEqual(expected);
  });

  test('sorting by opens and by -offset follows the seconds', async () => {
    for (const [sort, key] of [['opens', (a: Account) => opensSeconds(a.accountNumber)], ['-offset', (a: Account) => -offsetSeconds(a.accountNumber)]] as const) {
      const r = await call(server, 'SEARCH', '/accounts/', { _query: '*', _sort: sort, _limit: 50 });
      const got = (r.json.hits as Account[]).map((h) => key(accounts.find((a) => a._id === h._id)!));
      const expected = accounts.map(key).sort((a, b) => a - b).slice(0, 50);
      expect({ sort, got }).toEqual({ sort, got: expected });
    }
  });

  test('stored forms are canonical', async () => {
    const a = accounts[0]!;
    const doc = (await call(server, 'GET', `/accounts/${a._id}`)).json;
    expect(doc.opens).toBe(`${opensOf(a.accountNumber)}:00`);
    expect(doc.offset).toBe(`${offsetOf(a.accountNumber)}:00`);
  });
});
