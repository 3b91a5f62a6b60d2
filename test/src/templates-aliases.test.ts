/**
 * Index templates and aliases (API.md §16.1, §16.2) against the real
 * servers, embedded and cluster: templates from the API and from the config
 * file, applied at creation by priority with the request last; every API
 * through an alias, the write-index rules, the 409s and reserved names; an
 * alias swapped while searches run (each answer from one index set); both
 * surviving a restart.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_KINDS, startCluster, type Cluster, type ServerKind } from './cluster-harness.js';
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';

const CONFIG = `
templates:
  logs:
    _patterns: ["/logs/*"]
    _settings: {number_of_shards: 1}
    _schema:
      message: {_type: text, _language: en}
      level: {_type: keyword}
`;

/** The servers of `kind` with the config file, and a restart on the same data. */
async function start(kind: ServerKind, configFile: string): Promise<{ server: Server; restart(): Promise<Server> }> {
  if (kind === 'cluster') {
    const cluster: Cluster = await startCluster({ nodes: 2, coordinatorArgs: ['--config', configFile] });
    return { server: cluster, restart: async () => { await cluster.restartCoordinator(); return cluster; } };
  }
  const dataDir = tempDataDir('tessera-ifc-');
  const args = ['--port', '0', '--data', dataDir, '--config', configFile];
  let server = await startServer({ dataDir, args });
  return {
    get server() { return server; },
    async restart() {
      expect(await server.stop()).toBe(0);
      server = await startServer({ dataDir, args });
      return server;
    },
  };
}

const shardsOf = async (server: Server, index: string) => (await call(server, 'GET', index)).json._settings.number_of_shards as number;
const typeOf = async (server: Server, index: string, field: string) => (await call(server, 'GET', `${index}._schema.${field}._type`)).json as string;

describe.each(SERVER_KINDS)('templates and aliases (%s)', (kind) => {
  let dir: string;
  let running: { server: Server; restart(): Promise<Server> };
  let server: Server;

  beforeAll(async () => {
    dir = tempDataDir('tessera-ifc-config-');
    const configFile = join(dir, 'tessera.yaml');
    writeFileSync(configFile, CONFIG);
    running = await start(kind, configFile);
    server = running.server;
  }, 60_000);

  afterAll(async () => {
    if (server === undefined) return;
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
    removeDir(dir);
  });

  it('a config-file template applies to every index its pattern matches, created by a first write', async () => {
    expect((await call(server, 'GET', '/.templates/logs')).json).toEqual({
      _patterns: ['/logs/*'], _priority: 0, _settings: { number_of_shards: 1 },
      _schema: { message: { _type: 'text', _language: 'en' }, level: { _type: 'keyword' } },
    });
    expect((await call(server, 'PUT', '/logs/2026-11/1', { message: 'disk full', level: 'error' })).status).toBe(200);
    expect(await shardsOf(server, '/logs/2026-11/')).toBe(1);
    expect(await typeOf(server, '/logs/2026-11/', 'level')).toBe('keyword');
    expect((await call(server, 'GET', '/logs/2026-11/._schema.message')).json).toMatchObject({ _type: 'text', _language: 'english' });
    // `*` crosses '/'; an index outside the pattern gets nothing.
    await call(server, 'PUT', '/logs/eu/2026-11/1', { level: 'info' });
    expect(await typeOf(server, '/logs/eu/2026-11/', 'level')).toBe('keyword');
    await call(server, 'PUT', '/logsx/1', { level: 'info' });
    expect(await typeOf(server, '/logsx/', 'level')).toBe('text');
    expect(await shardsOf(server, '/logsx/')).toBe(5);
  });

  it('API templates: lowest _priority first, the request body last and field by field; only later indexes change', async () => {
    const base = { _patterns: ['/app/*'], _priority: 1, _settings: { number_of_shards: 2 }, _schema: { code: { _type: 'keyword' }, note: { _type: 'text' } } };
    const put = await call(server, 'PUT', '/.templates/base', base);
    expect(put.status).toBe(200);
    expect(put.json).toEqual(base);
    expect((await call(server, 'PUT', '/.templates/prod', { _patterns: ['/app/prod/*'], _priority: 5, _settings: { number_of_shards: 3 }, _schema: { code: { _type: 'integer' } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/.templates/quiet?echo=false', { _patterns: ['/quiet/'] })).status).toBe(204);

    expect((await call(server, 'PUT', '/app/prod/eu/', { _schema: { note: { _type: 'keyword' } } })).status).toBe(200);
    expect(await shardsOf(server, '/app/prod/eu/')).toBe(3);
    expect(await typeOf(server, '/app/prod/eu/', 'code')).toBe('integer');
    expect(await typeOf(server, '/app/prod/eu/', 'note')).toBe('keyword');
    expect((await call(server, 'PUT', '/app/dev/', { _settings: { number_of_shards: 4 } })).status).toBe(200);
    expect(await shardsOf(server, '/app/dev/')).toBe(4);
    expect(await typeOf(server, '/app/dev/', 'code')).toBe('keyword');
    expect(await typeOf(server, '/app/dev/', 'note')).toBe('text');

    // A changed template reaches indexes created after it, never the existing ones.
    expect((await call(server, 'PUT', '/.templates/base', { ...base, _settings: { number_of_shards: 1 } })).status).toBe(200);
    await call(server, 'PUT', '/app/test/1', { code: 'x' });
    expect(await shardsOf(server, '/app/test/')).toBe(1);
    expect(await shardsOf(server, '/app/dev/')).toBe(4);

    const list = (await call(server, 'GET', '/.templates/')).json;
    expect(Object.keys(list).sort()).toEqual(['base', 'logs', 'prod', 'quiet']);
    expect(list.quiet).toEqual({ _patterns: ['/quiet/'], _priority: 0 });
  });

  it('bad templates are 400 with a clear message and store nothing; DELETE is 204 then 404', async () => {
    const bad = await call(server, 'PUT', '/.templates/broken', { _patterns: ['/b/*'], _schema: { n: { _type: 'nonsense' } } });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_template');
    expect(bad.json.message).toMatch(/^Bad Request: Invalid template 'broken': .*nonsense/);
    expect((await call(server, 'PUT', '/.templates/broken', { _patterns: 'b' })).json.code).toBe('invalid_template');
    expect((await call(server, 'PUT', '/.templates/broken', { _patterns: ['/b/'], _settings: { shards: 1 } })).json.message).toMatch(/Unknown setting 'shards'/);
    const missing = await call(server, 'GET', '/.templates/broken');
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('template_not_found');

    expect((await call(server, 'DELETE', '/.templates/quiet')).status).toBe(204);
    const again = await call(server, 'DELETE', '/.templates/quiet');
    expect(again.status).toBe(404);
    expect(again.json.code).toBe('template_not_found');
    expect((await call(server, 'POST', '/.templates/')).status).toBe(405);
  });

  it('every API through an alias: reads span its indexes, single-index APIs use the write index', async () => {
    for (let i = 1; i <= 5; i++) {
      await call(server, 'PUT', `/a1/${i}`, { src: 'a1', n: i });
      await call(server, 'PUT', `/a2/${i + 100}`, { src: 'a2', n: i });
    }
    const created = await call(server, 'PUT', '/.aliases/both', { _indexes: ['/a1/', 'a2'] });
    expect(created.status).toBe(200);
    expect(created.json).toEqual({ _indexes: ['/a1/', '/a2/'] });
    expect((await call(server, 'GET', '/.aliases/both')).json).toEqual({ _indexes: ['/a1/', '/a2/'] });

    const search = await call(server, 'SEARCH', '/both/?limit=100');
    expect(search.json.total).toBe(10);
    expect((await call(server, 'COUNT', '/both/')).json.total).toBe(10);
    expect((await call(server, 'GET', '/both/:search?q=src:a2')).json.total).toBe(5);
    expect((await call(server, 'SEARCH', '/both,a1/?limit=100')).json.total).toBe(10);
    const aggs = await call(server, 'SEARCH', '/both/', { _limit: 0, _aggs: { n: { _sum: { _field: 'n' } } } });
    expect(aggs.json.aggregations).toMatchObject({ _doc_count: 10, n: { _sum: 30 } });
    expect(Object.keys((await call(server, 'GET', '/both/')).json).sort()).toEqual(['/a1/', '/a2/']);
    expect((await call(server, 'HEAD', '/both/')).status).toBe(200);
    expect((await call(server, 'INFO', '/both/')).json['/a2/'].doc_count).toBe(5);
    expect((await call(server, 'COMMIT', '/both/')).status).toBe(200);

    // Several indexes and no write index: single-index APIs refuse.
    for (const [method, path] of [['GET', '/both/1'], ['PUT', '/both/9'], ['POST', '/both/'], ['DELETE', '/both/1'], ['INFO', '/both/1'], ['DUMP', '/both/']]) {
      const r = await call(server, method as string, path as string, method === 'PUT' || method === 'POST' ? { x: 1 } : undefined);
      expect([method, r.status, r.json?.code]).toEqual([method, 400, 'alias_needs_write_index']);
    }

    // Replaced with a write index: documents go there.
    expect((await call(server, 'PUT', '/.aliases/both', { _indexes: ['/a1/', '/a2/'], _write_index: '/a2/' })).status).toBe(200);
    expect((await call(server, 'PUT', '/both/200', { src: 'a2', n: 0 })).json).toMatchObject({ _id: 200, _version: 1 });
    expect((await call(server, 'GET', '/a2/200')).status).toBe(200);
    expect((await call(server, 'GET', '/a1/200')).status).toBe(404);
    expect((await call(server, 'GET', '/both/200')).json).toMatchObject({ src: 'a2', _id: 200 });
    expect((await call(server, 'UPDATE', '/both/200', { extra: 'u' })).json).toMatchObject({ extra: 'u', _version: 2 });
    expect((await call(server, 'PATCH', '/both/200', [{ op: 'replace', path: '/extra', value: 'p' }])).json).toMatchObject({ extra: 'p', _version: 3 });
    expect((await call(server, 'INFO', '/both/200')).json).toMatchObject({ version: 3 });
    const posted = await call(server, 'POST', '/both/', { src: 'a2' });
    expect(posted.status).toBe(200);
    expect((await call(server, 'GET', `/a2/${posted.json._id}`)).status).toBe(200);
    const restored = await call(server, 'RESTORE', '/both/', [{ _id: 300, src: 'a2' }]);
    expect(restored.json.indexed).toBe(1);
    expect((await call(server, 'GET', '/a2/300')).status).toBe(200);
    const dumped = (await call(server, 'DUMP', '/both/')).json as Array<{ src: string }>;
    expect(dumped.length).toBe(8);
    expect(new Set(dumped.map((d) => d.src))).toEqual(new Set(['a2']));
    expect((await call(server, 'PUT', '/both/400', 'hello', { 'content-type': 'text/plain' })).status).toBe(200);
    const content = await call(server, 'GET', '/a2/400', undefined, { accept: 'text/plain' });
    expect(content.text).toBe('hello');
    expect((await call(server, 'GET', '/both/400', undefined, { accept: 'text/plain' })).text).toBe('hello');
    expect((await call(server, 'DELETE', '/both/200')).status).toBe(204);
    expect((await call(server, 'GET', '/a2/200')).status).toBe(404);

    // One index and no write index: that index.
    expect((await call(server, 'PUT', '/.aliases/first/one', { _indexes: ['/a1/'] })).status).toBe(200);
    expect((await call(server, 'GET', '/first/one/3')).json).toMatchObject({ src: 'a1', n: 3 });
    expect((await call(server, 'GET', '/.aliases/first/one/')).json).toEqual({ _indexes: ['/a1/'] });
  });

  it('an alias onto an index not yet created: the first write creates it, templates applied', async () => {
    expect((await call(server, 'PUT', '/.aliases/logs-current', { _indexes: ['/logs/2026-12/'] })).status).toBe(200);
    expect((await call(server, 'SEARCH', '/logs-current/')).json.total).toBe(0);
    expect((await call(server, 'PUT', '/logs-current/1', { level: 'warn' })).status).toBe(200);
    expect(await shardsOf(server, '/logs/2026-12/')).toBe(1);
    expect(await typeOf(server, '/logs/2026-12/', 'level')).toBe('keyword');
  });

  it('409: an alias over an index name, an index under an alias name; reserved root names are 400', async () => {
    const overIndex = await call(server, 'PUT', '/.aliases/a1', { _indexes: ['/a2/'] });
    expect([overIndex.status, overIndex.json.code]).toEqual([409, 'alias_conflict']);
    expect((await call(server, 'GET', '/.aliases/a1')).status).toBe(404);
    for (const [method, body] of [['PUT', {}], ['UPDATE', {}], ['DELETE', undefined]] as const) {
      const r = await call(server, method, '/both/', body);
      expect([method, r.status, r.json.code]).toEqual([method, 409, 'alias_conflict']);
    }
    expect((await call(server, 'GET', '/both/')).status).toBe(200);
    // An alias may not name an alias.
    expect((await call(server, 'PUT', '/.aliases/nested', { _indexes: ['/both/'] })).json.code).toBe('invalid_alias');

    for (const path of ['/.dashboard/', '/.openapi/', '/.nodes/', '/.snapshots/a/']) {
      const r = await call(server, 'PUT', path);
      expect([path, r.status, r.json.code]).toEqual([path, 400, 'reserved_index_name']);
    }
    expect((await call(server, 'PUT', '/.dashboard/1', { a: 1 })).json.code).toBe('reserved_index_name');
    expect((await call(server, 'PUT', '/.aliases/.keys', { _indexes: ['/a1/'] })).json.code).toBe('reserved_index_name');
    // /.keys/ is the API keys' (keys.test.ts): refused on a server without a master key, never an index.
    for (const [method, path] of [['PUT', '/.keys/'], ['PUT', '/.keys/x/'], ['GET', '/.keys/']] as const) {
      const r = await call(server, method, path);
      expect([method, path, r.status, r.json.code]).toEqual([method, path, 403, 'api_keys_disabled']);
    }
  });

  it('a swap while searches run: every answer comes from one index set, old or new', async () => {
    const batch = (index: string, n: number) => Array.from({ length: n }, (_, i) => ({ _id: `${index}-${i}`, src: index }));
    await call(server, 'RESTORE', '/s1/', batch('s1', 20));
    await call(server, 'RESTORE', '/s2/', batch('s2', 30));
    expect((await call(server, 'PUT', '/.aliases/swap', { _indexes: ['/s1/'] })).status).toBe(200);
    let swapping = true;
    const swapper = (async () => {
      for (let i = 0; i < 40; i++) {
        const r = await call(server, 'PUT', '/.aliases/swap', { _indexes: [i % 2 === 0 ? '/s2/' : '/s1/'] });
        expect(r.status).toBe(200);
      }
      swapping = false;
    })();
    const seen = { s1: 0, s2: 0 };
    const searcher = async () => {
      while (swapping) {
        const r = await call(server, 'SEARCH', '/swap/?limit=100');
        expect(r.status).toBe(200);
        const sources = new Set((r.json.hits as Array<{ src: string }>).map((h) => h.src));
        expect(sources.size).toBe(1);
        const src = [...sources][0] as 's1' | 's2';
        expect(r.json.total).toBe(src === 's1' ? 20 : 30);
        seen[src]++;
      }
    };
    await Promise.all([swapper, ...Array.from({ length: 6 }, searcher)]);
    expect(seen.s1).toBeGreaterThan(0);
    expect(seen.s2).toBeGreaterThan(0);
  }, 60_000);

  it('DELETE of an alias is 204 then 404; the list shows the rest', async () => {
    expect((await call(server, 'DELETE', '/.aliases/first/one')).status).toBe(204);
    const again = await call(server, 'DELETE', '/.aliases/first/one');
    expect([again.status, again.json.code]).toEqual([404, 'alias_not_found']);
    expect(Object.keys((await call(server, 'GET', '/.aliases/')).json).sort()).toEqual(['/both/', '/logs-current/', '/swap/']);
  });

  it('templates and aliases survive a restart', async () => {
    server = await running.restart();
    expect((await call(server, 'GET', '/.templates/base')).json._settings).toEqual({ number_of_shards: 1 });
    expect((await call(server, 'GET', '/.aliases/both')).json).toEqual({ _indexes: ['/a1/', '/a2/'], _write_index: '/a2/' });
    expect((await call(server, 'COUNT', '/both/')).json.total).toBeGreaterThan(10);
    await call(server, 'PUT', '/app/after/1', { code: 'x' });
    expect(await shardsOf(server, '/app/after/')).toBe(1);
    await call(server, 'PUT', '/logs/2027-01/1', { level: 'x' });
    expect(await shardsOf(server, '/logs/2027-01/')).toBe(1);
  }, 60_000);
});

it('a bad template in the config file stops the start, naming it', async () => {
  const dir = tempDataDir('tessera-ifc-bad-');
  const configFile = join(dir, 'bad.yaml');
  writeFileSync(configFile, 'templates:\n  oops:\n    _patterns: logs\n');
  try {
    await expect(startServer({ dataDir: dir, args: ['--port', '0', '--data', dir, '--config', configFile] }))
      .rejects.toThrow(/Invalid template 'oops': '_patterns' must be a list/);
  } finally {
    removeDir(dir);
  }
});
