/**
 * @tessera/client against the real embedded server (a master key set, so
 * the key APIs serve): every area of the client — documents with versions,
 * upsert and patch, stored content, search with typed hits, aggregations,
 * highlights and cursors, count, indexes, import with progress, dump,
 * templates, aliases, keys, nodes, metrics — and errors thrown as typed
 * exceptions carrying the body's code.
 */
import {
  BadRequestError, ConflictError, ForbiddenError, NotFoundError, Tessera, TesseraError, UnauthorizedError, type ImportProgress,
} from '@tessera/client';
import { removeDir, startServer, type Server } from './harness.js';

const MASTER = 'client-test-master-key-0123456789';

interface Account { name: string; state: string; balance: number; bio?: string; tags?: string[] }

/** Rejects with the error `promise` throws (fails when it resolves). */
async function thrown(promise: Promise<unknown>): Promise<TesseraError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    return err as TesseraError;
  }
  throw new Error('expected the call to throw');
}

describe('@tessera/client against the embedded server', () => {
  let server: Server;
  let client: Tessera;

  beforeAll(async () => {
    server = await startServer({ env: { TESSERA_API_KEY: MASTER } });
    client = new Tessera({ url: server.url, apiKey: MASTER });
  });

  afterAll(async () => {
    await client.close();
    await server.stop();
    removeDir(server.dataDir);
  });

  it('documents: put, get, exists, post, update (merge, upsert), patch, delete, with versions and commit', async () => {
    const bank = client.index<Account>('bank');
    const put = await bank.put(1, { name: 'Ann', state: 'CA', balance: 100, bio: 'runs a running club' }, { commit: true });
    expect(put).toMatchObject({ _id: 1, _version: 1, name: 'Ann', '#shard': expect.any(Number) });
    expect(await bank.get(1)).toMatchObject({ _id: 1, _version: 1, name: 'Ann', balance: 100 });
    expect(await bank.exists(1)).toBe(true);
    expect(await bank.exists(999)).toBe(false);

    const posted = await bank.post({ name: 'Bob', state: 'NY', balance: 5 });
    expect(posted._id).toBe(2);
    expect(posted._version).toBe(1);

    const merged = await bank.update(1, { balance: 150 }, { version: 1 });
    expect(merged).toMatchObject({ _version: 2, name: 'Ann', balance: 150 });
    const conflict = await thrown(bank.update(1, { balance: 1 }, { version: 1 }));
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status: 409, code: 'version_conflict', type: 'Conflict' });
    expect(conflict.message).toMatch(/^Conflict: /);

    expect(await thrown(bank.update(3, { balance: 1 }))).toBeInstanceOf(NotFoundError);
    expect(await bank.update(3, { name: 'Cy', state: 'CA', balance: 7 }, { upsert: true })).toMatchObject({ _id: 3, _version: 1 });
    expect(await client.put('bank', 4, { name: 'Di', state: 'TX', balance: 1 }, { version: 0 })).toMatchObject({ _version: 1 });

    const patched = await bank.patch(1, [{ op: 'incr', path: '/balance', value: 10 }, { op: 'add', path: '/tags', value: ['x'] }]);
    expect(patched).toMatchObject({ _version: 3, balance: 160, tags: ['x'] });
    const badPatch = await thrown(bank.patch(1, [{ op: 'test', path: '/balance', value: 0 }]));
    expect(badPatch).toBeInstanceOf(BadRequestError);
    expect(badPatch.code).toBe('patch_failed');

    await bank.delete(4, { version: 1 });
    const gone = await thrown(bank.get(4));
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone.code).toBe('document_not_found');

    // IDs with the characters of the path grammar are sent encoded: a dot is part of the ID.
    expect(await client.put('pkgs', 'gir1.2-cvc', { n: 1 })).toMatchObject({ _id: 'gir1.2-cvc' });
    expect(await client.get('pkgs', 'gir1.2-cvc')).toMatchObject({ n: 1 });
    expect((await client.documentInfo('bank', 1)).version).toBe(3);
  });

  it('stored content: put, add, read by type, unlink', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    expect(await client.putContent('files', 'logo', png, 'image/png')).toMatchObject({ _id: 'logo', _version: 1 });
    expect(await client.putContent('files', 'logo', 'hello', 'text/plain', { mode: 'add' })).toMatchObject({ _version: 2 });
    const image = await client.getContent('files', 'logo', 'image/png');
    expect(image.contentType).toBe('image/png');
    expect(image.bytes.equals(png)).toBe(true);
    expect((await client.getContent('files', 'logo')).bytes.toString()).toBe('hello');
    await client.removeContent('files', 'logo', 'text/plain');
    expect((await client.documentInfo('files', 'logo')).data.map((e) => e.content_type)).toEqual(['application/msgpack', 'image/png']);
    expect((await thrown(client.getContent('files', 'logo', 'application/pdf'))).status).toBe(406);
  });

  it('search: query DSL and query strings, typed hits, aggregations, highlights, count', async () => {
    const bank = client.index<Account>('bank');
    const r = await bank.search({
      _query: { state: 'CA' },
      _sort: '-balance',
      _aggs: {
        avg: { _avg: { _field: 'balance' } },
        stats: { _stats: { _field: 'balance' } },
        states: { _values: { _field: 'state' }, _aggs: { top: { _max: { _field: 'balance' } } } },
        keyed: { _values: { _field: 'state', _keyed: true } },
      },
    });
    expect(r.total).toBe(2);
    expect(r.hits.map((h) => h.name)).toEqual(['Ann', 'Cy']);
    expect(r.hits[0]).toMatchObject({ _id: 1, '#rank': 0 });
    expect(typeof r.hits[0]!['#weight']).toBe('number');
    // Its place in the order: the sort value, the weight, the _id.
    expect(r.hits[0]!._sort).toEqual([160, r.hits[0]!['#weight'], 1]);
    const aggs = r.aggregations!;
    expect(aggs._doc_count).toBe(2);
    expect(aggs.avg._avg).toBe(83.5);
    expect(aggs.stats).toMatchObject({ _count: 2, _min: 7, _max: 160, _sum: 167 });
    expect(aggs.states).toEqual([{ _doc_count: 2, top: { _max: 160 }, _key: 'CA' }]);
    expect(aggs.keyed['CA']!._doc_count).toBe(2);

    const byString = await client.search<Account>('bank', 'state:NY');
    expect(byString.hits.map((h) => h.name)).toEqual(['Bob']);
    const highlighted = await bank.search({ _query: { bio: 'running' }, _highlight: { _fields: ['bio'] } });
    expect(highlighted.hits[0]!._highlight).toEqual({ bio: ['runs a <em>running</em> club'] });
    expect(await client.count('bank')).toBe(3);
    expect(await bank.count({ _query: { state: 'CA' } })).toBe(2);
    // Several indexes: hits name theirs.
    const both = await client.search(['bank', 'pkgs'], { _limit: 10 });
    expect(new Set(both.hits.map((h) => h['#index']))).toEqual(new Set(['/bank/', '/pkgs/']));

    const bad = await thrown(bank.search({ _query: { _bogus: [] } }));
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad.code).toBe('invalid_query');
  });

  it('import with progress, cursor paging over every document, dump', async () => {
    const progress: ImportProgress[] = [];
    async function* people() {
      for (let i = 0; i < 950; i++) yield i === 500 ? { _id: i, age: 'not a number' } : { _id: i, age: i % 90, group: i % 7 };
    }
    const summary = await client.import('people', people(), { batchSize: 200, onProgress: (p) => progress.push(p) });
    expect(summary).toMatchObject({ sent: 950, indexed: 949, failed: 1, batches: 5 });
    expect(progress.map((p) => p.sent)).toEqual([200, 400, 600, 800, 950]);
    expect(progress[2]!.failed).toBe(1);
    expect(summary.failures).toHaveLength(1);
    expect(summary.failures[0]!.position).toBe(500);
    expect(summary.failures[0]!.error).toBeInstanceOf(BadRequestError);
    expect(summary.failures[0]!.error.code).toBe('type_mismatch');

    // Every document once, in the order of the sort (group, then _id), past any page window.
    const ids: number[] = [];
    for await (const hit of client.searchAfter<{ group: number }>('people', { _sort: 'group', _limit: 64 })) ids.push(hit._id as number);
    const expected = Array.from({ length: 950 }, (_, i) => i).filter((i) => i !== 500).sort((a, b) => a % 7 - b % 7 || a - b);
    expect(ids).toEqual(expected);
    let pages = 0;
    for await (const page of client.index('people').searchAfter({ _query: { age: { _in: { _range: { _from: 0, _to: 9 } } } }, _limit: 20 }).pages()) {
      pages++;
      expect(page.total).toBe(110);
    }
    expect(pages).toBe(6);

    const dumped: Array<{ _id: unknown }> = [];
    for await (const item of client.dump('people')) dumped.push(item);
    expect(dumped).toHaveLength(949);
    expect(new Set(dumped.map((d) => d._id)).size).toBe(949);
    // A dump left early gives its connection back: with one connection, the next request is served.
    const single = new Tessera({ url: server.url, apiKey: MASTER, connections: 1 });
    try {
      for await (const item of single.dump('people')) {
        expect(item._id).toBeDefined();
        break;
      }
      expect(await single.count('people')).toBe(949);
    } finally {
      await single.close();
    }
  });

  it('indexes: create with settings and schema, get, settings, schema, info, commit, delete', async () => {
    const created = await client.createIndex('/logs/2026/', { _settings: { number_of_shards: 2 }, _schema: { level: { _type: 'keyword' } } });
    expect(created._settings.number_of_shards).toBe(2);
    expect(await client.indexExists('/logs/2026/')).toBe(true);
    expect((await client.getIndex('/logs/2026/'))._schema).toHaveProperty('level');
    expect((await client.settings('/logs/2026/')).number_of_shards).toBe(2);
    expect(await client.schema('/logs/2026/')).toMatchObject({ level: { _type: 'keyword' } });
    await client.put('/logs/2026/', 'e1', { level: 'error' });
    await client.commit('/logs/2026/');
    expect((await client.indexInfo('/logs/2026/')).doc_count).toBe(1);
    const immutable = await thrown(client.createIndex('/logs/2026/', { _settings: { number_of_shards: 3 } }));
    expect(immutable).toBeInstanceOf(BadRequestError);
    await client.deleteIndex('/logs/2026/');
    expect(await client.indexExists('/logs/2026/')).toBe(false);
    expect((await thrown(client.getIndex('/logs/2026/'))).code).toBe('index_not_found');
  });

  it('templates and aliases', async () => {
    await client.templates.put('logs', { _patterns: ['/applogs/*'], _settings: { number_of_shards: 1 }, _schema: { code: { _type: 'integer' } } });
    expect((await client.templates.get('logs'))._patterns).toEqual(['/applogs/*']);
    expect(Object.keys(await client.templates.list())).toEqual(['logs']);
    await client.put('/applogs/a/', 1, { code: '7' });
    expect((await client.schema('/applogs/a/')).code).toMatchObject({ _type: 'integer' });
    await client.templates.delete('logs');
    expect((await thrown(client.templates.get('logs'))).code).toBe('template_not_found');

    await client.put('/applogs/b/', 1, { code: 8 });
    expect(await client.aliases.put('applogs-all', { _indexes: ['/applogs/a/', '/applogs/b/'], _write_index: '/applogs/b/' }))
      .toMatchObject({ _indexes: ['/applogs/a/', '/applogs/b/'] });
    // Stored as written ("7"), indexed as the template's integer.
    expect((await client.search('applogs-all', { _sort: 'code' })).hits.map((h) => h.code)).toEqual(['7', 8]);
    await client.put('applogs-all', 2, { code: 9 });
    expect(await client.count('/applogs/b/')).toBe(2);
    expect(Object.keys(await client.aliases.list())).toEqual(['/applogs-all/']);
    const clash = await thrown(client.aliases.put('/applogs/a/', { _indexes: ['/applogs/b/'] }));
    expect(clash).toBeInstanceOf(ConflictError);
    await client.aliases.delete('applogs-all');
    expect((await thrown(client.aliases.get('applogs-all'))).code).toBe('alias_not_found');
  });

  it('keys: create, list, use, a scoped key refused outside its scope, revoke; no key or a wrong one is 401', async () => {
    const created = await client.keys.create({ _name: 'reader', _actions: ['read', 'search'], _indexes: ['/bank/'] });
    expect(typeof created._key).toBe('string');
    expect((await client.keys.list()).map((k) => k._name)).toEqual(['reader']);
    expect(await client.keys.get('reader')).toMatchObject({ _actions: ['read', 'search'], _indexes: ['/bank/'], _expires_at: null });
    const reader = new Tessera({ url: server.url, apiKey: created._key });
    try {
      expect((await reader.get<Account>('bank', 1)).name).toBe('Ann');
      const refused = await thrown(reader.put('bank', 9, { name: 'x' }));
      expect(refused).toBeInstanceOf(ForbiddenError);
      expect(refused.code).toBe('forbidden');
      await client.keys.delete('reader');
      expect((await thrown(reader.get('bank', 1)))).toBeInstanceOf(UnauthorizedError);
    } finally {
      await reader.close();
    }
    const anonymous = new Tessera({ url: server.url });
    try {
      const err = await thrown(anonymous.server());
      expect(err).toMatchObject({ status: 401, code: 'unauthorized' });
      // HEAD answers have no body: the status says it.
      expect(await thrown(anonymous.exists('bank', 1))).toMatchObject({ status: 401, code: 'http_401' });
      expect(await anonymous.ready()).toEqual({ status: 'ready' });
    } finally {
      await anonymous.close();
    }
  });

  it('server, nodes and metrics', async () => {
    const info = await client.server();
    expect(info.state).toBe('READY');
    expect(info.versions.Tessera).toMatch(/^\d+\.\d+/);
    const nodes = await client.nodes();
    expect(nodes.length).toBeGreaterThanOrEqual(1);
    expect(nodes[0]).toMatchObject({ active: true });
    expect(nodes.flatMap((n) => n.shards ?? []).some((s) => s.index === '/bank/' && s.primary)).toBe(true);
    expect(await client.metrics()).toMatch(/^tessera_http_requests_seconds/m);
  });
});
