/**
 * SEARCH and COUNT over HTTP, through @tessera/client (the wire forms with
 * raw requests), checked against brute force on Debian records:
 * against the embedded server and against a coordinator with three nodes
 * (SERVER_KINDS), where every search fans out over the nodes and merges.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { BadRequestError, Tessera, type SearchRequest } from '@tessera/client';
import fc from 'fast-check';
import { SERVER_KINDS, startServers, type ServerKind } from './cluster-harness.js';
import { call, REPO_ROOT, removeDir, tempDataDir, type Server } from './harness.js';

interface Pkg { package: string; section: string; installed_size: number; summary: string }
const N = 3000;

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  let server: Server;
  let client: Tessera;
  let docs: Pkg[] = [];

  beforeAll(async () => {
    server = await startServers(kind);
    client = new Tessera({ url: server.url });
    const text = gunzipSync(readFileSync(join(REPO_ROOT, '../shared/data/debian-packages.ndjson.gz'))).toString('utf8');
    docs = text.split('\n', N).map((line) => {
      const d = JSON.parse(line) as Record<string, unknown>;
      return { package: String(d.package), section: String(d.section ?? ''), installed_size: Number(d.installed_size ?? 0), summary: String(d.summary ?? '') };
    });
    await client.createIndex('pkgs', { _settings: { number_of_shards: 3 }, _schema: { section: { _type: 'keyword' }, installed_size: { _type: 'integer' }, summary: { _type: 'text' }, package: { _type: 'keyword' } } });
    const r = await client.import('pkgs', docs.map((d, i) => ({ _id: i, ...d })), { batchSize: N });
    expect(r.indexed).toBe(N);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await server.stop();
    removeDir(server.dataDir);
  });

  /** API.md §8.4 tokens: runs of letters, digits and marks, an apostrophe between letters kept ("jump'n"). */
  const words = (s: string) => new Set((s.toLowerCase().match(/(?:[\p{L}\p{N}\p{M}]|(?<=\p{L})['’](?=\p{L}))+/gu) ?? []));

  describe('against brute force', () => {
    it('keyword terms, integer ranges, text words and their AND: exact totals and sorted pages', async () => {
      const sections = [...new Set(docs.map((d) => d.section))];
      const vocabulary = [...new Set(docs.flatMap((d) => [...words(d.summary)]).filter((w) => /^[a-z]{3,}$/.test(w)))].slice(0, 400);
      await fc.assert(fc.asyncProperty(
        fc.constantFrom(...sections), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 20000 }), fc.constantFrom(...vocabulary), fc.integer({ min: 0, max: 3 }),
        async (section, from, span, word, shape) => {
          const to = from + span;
          const inRange = (d: Pkg) => d.installed_size >= from && d.installed_size <= to;
          const hasWord = (d: Pkg) => words(d.summary).has(word);
          const [query, match] = [
            [{ section }, (d: Pkg) => d.section === section],
            [{ installed_size: { _in: { _range: { _from: from, _to: to } } } }, inRange],
            [{ summary: word }, hasWord],
            [{ _and: [{ summary: word }, { installed_size: { _in: { _range: { _from: from, _to: to } } } }] }, (d: Pkg) => hasWord(d) && inRange(d)],
          ][shape] as [unknown, (d: Pkg) => boolean];
          const expected = docs.map((d, i) => ({ d, i })).filter(({ d }) => match(d));
          const r = await client.search<Pkg>('pkgs', { _query: query as Record<string, unknown>, _sort: ['-installed_size', '_id'], _limit: 10 });
          expect(r.total).toBe(expected.length);
          const page = [...expected].sort((a, b) => b.d.installed_size - a.d.installed_size || a.i - b.i).slice(0, 10).map(({ i }) => i);
          expect(r.hits.map((h) => h._id)).toEqual(page);
          expect(await client.count('pkgs', { _query: query as Record<string, unknown> })).toBe(expected.length);
        }), { numRuns: 60 });
    }, 120_000);

    it('offset and limit page through the same order', async () => {
      const all = await client.search<Pkg>('pkgs', { _query: { section: 'libs' }, _sort: 'package', _limit: 30 });
      const second = await client.search<Pkg>('pkgs', { _query: { section: 'libs' }, _sort: 'package', _offset: 10, _limit: 10 });
      expect(second.hits.map((h) => h._id)).toEqual(all.hits.slice(10, 20).map((h) => h._id));
      expect(second.hits[0]!['#rank']).toBe(10);
    });
  });

  describe('visibility and persistence', () => {
    it('a write is found as soon as it is acknowledged; a replaced or deleted one is not', async () => {
      const live = client.index<{ title: string }>('live');
      const total = async (title: string) => (await live.search({ _query: { title } })).total;
      await live.put(1, { title: 'zebra crossing' });
      expect(await total('zebra')).toBe(1);
      await live.put(1, { title: 'giraffe crossing' });
      expect(await total('zebra')).toBe(0);
      expect(await total('giraffe')).toBe(1);
      await live.update(1, { title: 'okapi' });
      expect(await total('giraffe')).toBe(0);
      await live.delete(1);
      expect(await total('okapi')).toBe(0);
    });

    // Embedded only, for time (see documents.test.ts); cluster.test.ts searches a node restarted after kill -9.
    (kind === 'embedded' ? it : it.skip)('the index survives a restart (replayed from the operation log)', async () => {
      const dataDir = tempDataDir();
      const first = await startServers(kind, { dataDir });
      const writer = new Tessera({ url: first.url });
      for (let i = 0; i < 50; i++) await writer.put('persist', i, { n: i, word: i % 2 === 0 ? 'even' : 'odd' });
      await writer.delete('persist', 0);
      await writer.close();
      await first.kill();
      const second = await startServers(kind, { dataDir });
      const reader = new Tessera({ url: second.url });
      try {
        expect((await reader.search('persist', { _query: { word: 'even' } })).total).toBe(24);
        expect(await reader.count('persist', { _query: { n: { _in: { _range: { _from: 10, _to: 19 } } } } })).toBe(10);
      } finally {
        await reader.close();
        await second.stop();
        removeDir(dataDir);
      }
    });
  });

  describe('request forms', () => {
    it('query strings, GET :search, COUNT, multi-index and missing indexes', async () => {
      const q = await call(server, 'GET', '/pkgs/:search?q=section:libs&limit=3');
      expect(q.status).toBe(200);
      expect(q.json.count).toBe(3);
      expect(q.json.total).toBe(docs.filter((d) => d.section === 'libs').length);
      const both = await client.search(['pkgs', 'live'], { _query: '*', _limit: 1 });
      expect(both.hits[0]!['#index']).toBeDefined();
      expect(await client.search('nowhere', { _query: '*' })).toMatchObject({ total: 0, hits: [] });
      expect(await client.count('pkgs')).toBe(N);
    });

    it('finds documents by _id, integer and keyword IDs alike, and sorts by _id', async () => {
      expect(await client.count('pkgs', { _query: { _id: 42 } })).toBe(1);
      expect((await client.search('pkgs', { _query: { _id: { _in: { _range: { _from: 10, _to: 19 } } } }, _sort: '-_id' })).hits.map((h) => h._id))
        .toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10]);
      await client.put('named', 'Alpha', { a: 1 });
      await client.put('named', 'beta', { a: 2 });
      expect((await client.search('named', { _query: { _id: 'Alpha' } })).hits.map((h) => h._id)).toEqual(['Alpha']);
      expect(await client.count('named', { _query: { _id: 'alpha' } })).toBe(0);
    });

    it('hits carry #rank, #weight and #percent; relevance ranks a rarer word higher', async () => {
      const r = await client.search<Pkg>('pkgs', { _query: { summary: 'library' }, _limit: 3 });
      expect(r.hits[0]).toMatchObject({ '#rank': 0, '#percent': 100 });
      expect(r.hits[0]!['#weight']).toBeGreaterThan(0);
      expect(typeof r.took).toBe('string');
    });

    it('the compact JSON page has the keys, order and values of the page in every other form (aggregations, comments, multi-index, selector)', async () => {
      const bodies = [
        { _query: { summary: 'library' }, _limit: 5, _aggs: { s: { _values: { _field: 'section', _limit: 3 } } } },
        { _query: '*', _limit: 4, _offset: 2, _sort: '_id' },
        { _query: { section: 'libs' }, _limit: 3, _selector: 'package' },
      ];
      for (const [path, body] of [['/pkgs/', bodies[0]], ['/pkgs/', bodies[1]], ['/pkgs,named/', bodies[1]], ['/pkgs/', bodies[2]]] as const) {
        for (const query of ['', '?comments=false']) {
          const compact = await call(server, 'SEARCH', `${path}${query}`, body);
          const pretty = await call(server, 'SEARCH', `${path}${query}${query === '' ? '?' : '&'}pretty`, body);
          const msgpack = await call(server, 'SEARCH', `${path}${query}`, body, { accept: 'application/msgpack' });
          expect(compact.status).toBe(200);
          // `took` differs between requests: compare everything else, key order included.
          const withoutTook = (v: Record<string, unknown>) => JSON.stringify({ ...v, took: 0 });
          expect(withoutTook(compact.json)).toBe(withoutTook(pretty.json));
          expect(withoutTook(compact.json)).toBe(withoutTook(msgpack.json));
          expect(compact.json.hits.length).toBeGreaterThan(0);
        }
      }
    });

    it('a selector of the hits\' own fields (_id, _version) answers as it picks them from the whole hits (the shards then read no document)', async () => {
      const query = { _query: { section: 'libs' }, _limit: 7, _sort: '_id' };
      const whole = await call(server, 'SEARCH', '/pkgs/', query);
      expect(whole.status).toBe(200);
      const hits = whole.json.hits as Array<Record<string, unknown>>;
      expect(hits.length).toBe(7);
      const picks: Array<[string, (h: Record<string, unknown>) => unknown]> = [
        ['_id', (h) => h._id],
        ['_version', (h) => h._version],
        ['{_id,_version}', (h) => ({ _id: h._id, _version: h._version })],
        ['{_id, package}', (h) => ({ _id: h._id, package: h.package })],
      ];
      for (const [selector, pick] of picks) {
        for (const form of ['body', 'param']) {
          const r = form === 'body'
            ? await call(server, 'SEARCH', '/pkgs/', { ...query, _selector: selector })
            : await call(server, 'SEARCH', `/pkgs/?selector=${encodeURIComponent(selector)}`, query);
          expect(r.status).toBe(200);
          expect(r.json.total).toBe(whole.json.total);
          expect(r.json.hits).toEqual(hits.map(pick));
        }
      }
    });

    it('bad queries are 400 with a message', async () => {
      // Sent as they are: the client's types would refuse some of them.
      for (const body of [
        { _query: { _bogus: [] } },
        { _query: { a: { _in: 5 } } },
        { _query: 'a:(' },
        { _limit: -1 },
        { _offset: 99_999, _limit: 10 },
        { _sort: { a: { _order: 'sideways' } } },
      ] as SearchRequest[]) {
        const error = await client.search('pkgs', body).then(() => undefined, (err: unknown) => err);
        expect(error).toBeInstanceOf(BadRequestError);
        expect({ body, status: (error as BadRequestError).status }).toEqual({ body, status: 400 });
        expect((error as BadRequestError).message).toMatch(/^Bad Request: /);
      }
    });
  });
});
