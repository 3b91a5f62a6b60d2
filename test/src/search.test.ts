/**
 * SEARCH and COUNT over HTTP, checked against brute force on Debian records:
 * against the embedded server and against a coordinator with three nodes
 * (SERVER_KINDS), where every search fans out over the nodes and merges.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { SERVER_KINDS, startServers, type ServerKind } from './cluster-harness.js';
import { call, REPO_ROOT, removeDir, tempDataDir, type Server } from './harness.js';

interface Pkg { package: string; section: string; installed_size: number; summary: string }
const N = 3000;

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  let server: Server;
  let docs: Pkg[] = [];

  beforeAll(async () => {
    server = await startServers(kind);
    const text = gunzipSync(readFileSync(join(REPO_ROOT, '../shared/data/debian-packages.ndjson.gz'))).toString('utf8');
    docs = text.split('\n', N).map((line) => {
      const d = JSON.parse(line) as Record<string, unknown>;
      return { package: String(d.package), section: String(d.section ?? ''), installed_size: Number(d.installed_size ?? 0), summary: String(d.summary ?? '') };
    });
    await call(server, 'PUT', '/pkgs/', { _settings: { number_of_shards: 3 }, _schema: { section: { _type: 'keyword' }, installed_size: { _type: 'integer' }, summary: { _type: 'text' }, package: { _type: 'keyword' } } });
    const body = docs.map((d, i) => JSON.stringify({ _id: i, ...d })).join('\n');
    const r = await call(server, 'RESTORE', '/pkgs/', body, { 'content-type': 'application/x-ndjson' });
    expect(r.json.indexed).toBe(N);
  }, 120_000);

  afterAll(async () => {
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
          const r = await call(server, 'SEARCH', '/pkgs/', { _query: query, _sort: ['-installed_size', '_id'], _limit: 10 });
          expect(r.status).toBe(200);
          expect(r.json.total).toBe(expected.length);
          const page = [...expected].sort((a, b) => b.d.installed_size - a.d.installed_size || a.i - b.i).slice(0, 10).map(({ i }) => i);
          expect(r.json.hits.map((h: { _id: number }) => h._id)).toEqual(page);
          const c = await call(server, 'COUNT', '/pkgs/', { _query: query });
          expect(c.json).toEqual({ total: expected.length });
        }), { numRuns: 60 });
    }, 120_000);

    it('offset and limit page through the same order', async () => {
      const all = await call(server, 'SEARCH', '/pkgs/', { _query: { section: 'libs' }, _sort: 'package', _limit: 30 });
      const second = await call(server, 'SEARCH', '/pkgs/', { _query: { section: 'libs' }, _sort: 'package', _offset: 10, _limit: 10 });
      expect(second.json.hits.map((h: { _id: number }) => h._id)).toEqual(all.json.hits.slice(10, 20).map((h: { _id: number }) => h._id));
      expect(second.json.hits[0]['#rank']).toBe(10);
    });
  });

  describe('visibility and persistence', () => {
    it('a write is found as soon as it is acknowledged; a replaced or deleted one is not', async () => {
      await call(server, 'PUT', '/live/1', { title: 'zebra crossing' });
      expect((await call(server, 'SEARCH', '/live/', { _query: { title: 'zebra' } })).json.total).toBe(1);
      await call(server, 'PUT', '/live/1', { title: 'giraffe crossing' });
      expect((await call(server, 'SEARCH', '/live/', { _query: { title: 'zebra' } })).json.total).toBe(0);
      expect((await call(server, 'SEARCH', '/live/', { _query: { title: 'giraffe' } })).json.total).toBe(1);
      await call(server, 'UPDATE', '/live/1', { title: 'okapi' });
      expect((await call(server, 'SEARCH', '/live/', { _query: { title: 'giraffe' } })).json.total).toBe(0);
      await call(server, 'DELETE', '/live/1');
      expect((await call(server, 'SEARCH', '/live/', { _query: { title: 'okapi' } })).json.total).toBe(0);
    });

    // Embedded only, for time (see documents.test.ts); cluster.test.ts searches a node restarted after kill -9.
    (kind === 'embedded' ? it : it.skip)('the index survives a restart (replayed from the operation log)', async () => {
      const dataDir = tempDataDir();
      const first = await startServers(kind, { dataDir });
      for (let i = 0; i < 50; i++) await call(first, 'PUT', `/persist/${i}`, { n: i, word: i % 2 === 0 ? 'even' : 'odd' });
      await call(first, 'DELETE', '/persist/0');
      await first.kill();
      const second = await startServers(kind, { dataDir });
      try {
        expect((await call(second, 'SEARCH', '/persist/', { _query: { word: 'even' } })).json.total).toBe(24);
        expect((await call(second, 'COUNT', '/persist/', { _query: { n: { _in: { _range: { _from: 10, _to: 19 } } } } })).json.total).toBe(10);
      } finally {
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
      const both = await call(server, 'SEARCH', '/pkgs,live/', { _query: '*', _limit: 1 });
      expect(both.json.hits[0]['#index']).toBeDefined();
      expect((await call(server, 'SEARCH', '/nowhere/', { _query: '*' })).json).toMatchObject({ total: 0, hits: [] });
      expect((await call(server, 'COUNT', '/pkgs/')).json.total).toBe(N);
    });

    it('finds documents by _id, integer and keyword IDs alike, and sorts by _id', async () => {
      expect((await call(server, 'COUNT', '/pkgs/', { _query: { _id: 42 } })).json.total).toBe(1);
      expect((await call(server, 'SEARCH', '/pkgs/', { _query: { _id: { _in: { _range: { _from: 10, _to: 19 } } } }, _sort: '-_id' })).json.hits.map((h: { _id: number }) => h._id))
        .toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10]);
      await call(server, 'PUT', '/named/Alpha', { a: 1 });
      await call(server, 'PUT', '/named/beta', { a: 2 });
      expect((await call(server, 'SEARCH', '/named/', { _query: { _id: 'Alpha' } })).json.hits.map((h: { _id: string }) => h._id)).toEqual(['Alpha']);
      expect((await call(server, 'COUNT', '/named/', { _query: { _id: 'alpha' } })).json.total).toBe(0);
    });

    it('hits carry #rank, #weight and #percent; relevance ranks a rarer word higher', async () => {
      const r = await call(server, 'SEARCH', '/pkgs/', { _query: { summary: 'library' }, _limit: 3 });
      expect(r.json.hits[0]).toMatchObject({ '#rank': 0, '#percent': 100 });
      expect(r.json.hits[0]['#weight']).toBeGreaterThan(0);
      expect(typeof r.json.took).toBe('string');
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

    it('bad queries are 400 with a message', async () => {
      for (const body of [
        { _query: { _bogus: [] } },
        { _query: { a: { _in: 5 } } },
        { _query: 'a:(' },
        { _limit: -1 },
        { _offset: 99_999, _limit: 10 },
        { _sort: { a: { _order: 'sideways' } } },
      ]) {
        const r = await call(server, 'SEARCH', '/pkgs/', body);
        expect({ body, status: r.status }).toEqual({ body, status: 400 });
        expect(r.json.message).toMatch(/^Bad Request: /);
      }
    });
  });
});
