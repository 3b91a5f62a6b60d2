/**
 * API keys (issue 22, API.md §16.3, docs/security.md) against real `tessera`
 * processes over real sockets: a master key guards every endpoint but the
 * health checks (401, its code, `WWW-Authenticate: Bearer`); scoped keys
 * made through `/.keys/` allow their actions on their indexes only (403),
 * expire, are revoked at once, survive a restart, and reach every
 * coordinator of an etcd cluster; a server on a non-loopback address will
 * not start without a key; import and dump send one; and no shape of
 * Authorization header gets a 5xx.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { actionsReference } from '@tessera/coordinator';
import { KNOWN_METHODS } from '@tessera/http';
import fc from 'fast-check';
import { rawExchange } from '../../packages/http/dist/server/raw-client.js';
import { runCli } from './cli-process.js';
import { spawnTessera, type ClusterProcess } from './cluster-harness.js';
import { call, REPO_ROOT, removeDir, startServer, tempDataDir, type Reply, type Server } from './harness.js';

const MASTER = 'keys-test-master-key-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
const asMaster = bearer(MASTER);

/** Polls `probe` until it says true (a change that travels, such as a key through etcd), or fails naming `what`. */
async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectUnauthorized(reply: Reply, method: string, code = 'unauthorized'): void {
  expect(reply.status).toBe(401);
  expect(String(reply.headers['www-authenticate'])).toMatch(/^Bearer\b/);
  if (method !== 'HEAD') expect(reply.json).toMatchObject({ status: 401, type: 'Unauthorized', code });
}

function expectForbidden(reply: Reply): void {
  expect(reply.status).toBe(403);
  expect(reply.json).toMatchObject({ status: 403, code: 'forbidden' });
}

/** A scoped key made by the master key; answers its secret. */
async function createKey(server: { url: string }, definition: Record<string, unknown>): Promise<string> {
  const created = await call(server, 'POST', '/.keys/', definition, asMaster);
  expect(created.status).toBe(201);
  return created.json._key as string;
}

describe('a server with a master key', () => {
  let server: Server;
  const dataDir = tempDataDir('tessera-keys-');
  const secrets: string[] = [];

  beforeAll(async () => {
    server = await startServer({ dataDir, env: { TESSERA_API_KEY: MASTER } });
    for (const [path, doc] of [['/logs/a/1', { msg: 'one' }], ['/logs/b/1', { msg: 'two' }], ['/other/1', { msg: 'three' }]] as const) {
      expect((await call(server, 'PUT', `${path}?commit`, doc, asMaster)).status).toBe(200);
    }
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  /** One request of each kind of endpoint. */
  const ENDPOINTS: Array<[string, string, unknown?]> = [
    ['GET', '/logs/a/1'], ['HEAD', '/logs/a/1'], ['INFO', '/logs/a/1'], ['SEARCH', '/logs/a/'], ['COUNT', '/logs/a/'],
    ['PUT', '/logs/a/2', { msg: 'x' }], ['PUT', '/fresh/', {}], ['DELETE', '/other/'], ['DUMP', '/logs/a/'], ['COMMIT', '/logs/a/'],
    ['GET', '/.keys/'], ['POST', '/.keys/', { _name: 'x', _actions: ['read'], _indexes: ['/*'] }], ['GET', '/:metrics'], ['GET', '/metrics'],
    ['GET', '/.nodes'], ['GET', '/.templates/'], ['GET', '/'], ['HEAD', '/'], ['OPTIONS', '/logs/a/'], ['POST', '/healthz'], ['FROB', '/x/'],
  ];

  it('answers 401 with its code and WWW-Authenticate: Bearer to every kind of endpoint without a key, with a malformed header or a wrong key', async () => {
    for (const [method, path, body] of ENDPOINTS) {
      for (const headers of [{}, bearer(`${MASTER}x`), bearer('tsk_nothing'), { authorization: `Basic ${Buffer.from(`u:${MASTER}`).toString('base64')}` },
        { authorization: 'Bearer' }, { authorization: MASTER }]) {
        const reply = await call(server, method, path, body, headers);
        expect([method, path, reply.status]).toEqual([method, path, 401]);
        expectUnauthorized(reply, method);
      }
    }
  });

  it('the master key opens every endpoint; /healthz and /readyz (GET and HEAD) need no key', async () => {
    for (const [method, path, body] of ENDPOINTS.filter(([, p]) => p !== '/other/' && p !== '/.keys/')) {
      const reply = await call(server, method, path, body, asMaster);
      expect([method, path, reply.status === 401 || reply.status === 403]).toEqual([method, path, false]);
    }
    for (const method of ['GET', 'HEAD']) {
      expect((await call(server, method, '/healthz')).status).toBe(200);
      expect((await call(server, method, '/readyz')).status).toBe(200);
    }
    expect((await call(server, 'GET', '/', undefined, { authorization: `bearer   ${MASTER}` })).status).toBe(200);
  });

  it('scoped keys: made once with their secret, listed without it, validated, one name each, managed by the master key only', async () => {
    const created = await call(server, 'POST', '/.keys/', { _name: 'lister', _actions: ['read'], _indexes: ['/logs/*'], _expires_at: '2099-01-01T00:00:00Z' }, asMaster);
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('/.keys/lister');
    expect(created.json).toEqual({
      _name: 'lister', _actions: ['read'], _indexes: ['/logs/*'], _expires_at: '2099-01-01T00:00:00.000Z', _created_at: expect.any(String),
      _key: expect.stringMatching(/^tsk_[A-Za-z0-9_-]{43}$/),
    });
    const secret = created.json._key as string;
    secrets.push(secret);
    const list = await call(server, 'GET', '/.keys/', undefined, asMaster);
    expect(list.status).toBe(200);
    expect(list.json).toContainEqual({ _name: 'lister', _actions: ['read'], _indexes: ['/logs/*'], _expires_at: '2099-01-01T00:00:00.000Z', _created_at: created.json._created_at });
    const one = await call(server, 'GET', '/.keys/lister', undefined, asMaster);
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(createHash('sha256').update(secret).digest('hex'));
    }
    // The cluster state on disk (its base and its log of changes) holds the digest, never the secret.
    for (const file of ['cluster-state.json', 'cluster-state.json.log']) expect(readFileSync(join(dataDir, file), 'utf8')).not.toContain(secret);

    const invalid: unknown[] = [
      {}, { _actions: ['read'], _indexes: ['/*'] }, { _name: 'a b', _actions: ['read'], _indexes: ['/*'] },
      { _name: 'k', _actions: [], _indexes: ['/*'] }, { _name: 'k', _actions: ['delete'], _indexes: ['/*'] },
      { _name: 'k', _actions: ['read'] }, { _name: 'k', _actions: ['read'], _indexes: [] }, { _name: 'k', _actions: ['read'], _indexes: ['logs'] },
      { _name: 'k', _actions: ['read'], _indexes: ['/*'], _expires_at: 'tomorrow' },
      { _name: 'k', _actions: ['read'], _indexes: ['/*'], _expires_at: '2020-01-01T00:00:00Z' },
      { _name: 'k', _actions: ['read'], _indexes: ['/*'], _secret: 'mine' }, ['k'],
    ];
    for (const body of invalid) {
      const reply = await call(server, 'POST', '/.keys/', body, asMaster);
      expect([body, reply.status, reply.json?.code]).toEqual([body, 400, 'invalid_api_key']);
    }
    const duplicate = await call(server, 'POST', '/.keys/', { _name: 'lister', _actions: ['admin'], _indexes: ['/*'] }, asMaster);
    expect([duplicate.status, duplicate.json.code]).toEqual([409, 'api_key_conflict']);
    expect((await call(server, 'GET', '/.keys/nobody', undefined, asMaster)).json.code).toBe('api_key_not_found');
    expect((await call(server, 'DELETE', '/.keys/nobody', undefined, asMaster)).status).toBe(404);
    expect((await call(server, 'PUT', '/.keys/lister', {}, asMaster)).status).toBe(405);

    // Even an admin key for every index cannot manage keys.
    const admin = await createKey(server, { _name: 'all-admin', _actions: ['read', 'search', 'write', 'admin'], _indexes: ['/*'] });
    secrets.push(admin);
    for (const [method, path, body] of [['GET', '/.keys/'], ['POST', '/.keys/', { _name: 'mine', _actions: ['read'], _indexes: ['/*'] }], ['DELETE', '/.keys/lister']] as const) {
      expectForbidden(await call(server, method, path, body, bearer(admin)));
    }
    expect((await call(server, 'GET', '/.keys/lister', undefined, asMaster)).status).toBe(200);
  });

  it('each action allows its endpoints on the indexes its patterns reach, and nothing else (403 with its code)', async () => {
    let writerSecret = '';
    const key = async (name: string, actions: string[], indexes = ['/logs/*']) => {
      const secret = await createKey(server, { _name: name, _actions: actions, _indexes: indexes });
      secrets.push(secret);
      if (name === 'writer') writerSecret = secret;
      return (method: string, path: string, body?: unknown) => call(server, method, path, body, bearer(secret));
    };
    const read = await key('reader', ['read']);
    expect((await read('GET', '/logs/a/1')).status).toBe(200);
    expect((await read('HEAD', '/logs/b/1')).status).toBe(200);
    expect((await read('INFO', '/logs/a/1')).status).toBe(200);
    expect((await read('GET', '/logs/a/')).status).toBe(200);
    // `/logs/*` reaches /logs/ itself too (here missing: 404, not 403).
    expect((await read('GET', '/logs/')).status).toBe(404);
    expect((await read('GET', '/')).status).toBe(200);
    for (const [method, path, body] of [['GET', '/other/1'], ['SEARCH', '/logs/a/'], ['PUT', '/logs/a/9', { a: 1 }], ['PUT', '/logs/c/', {}],
      ['GET', '/:metrics'], ['GET', '/.templates/'], ['DUMP', '/logs/a/'], ['GET', '/logsx/1']] as const) {
      expectForbidden(await read(method, path, body));
    }

    const search = await key('searcher', ['search']);
    expect((await search('SEARCH', '/logs/a/')).status).toBe(200);
    expect((await search('COUNT', '/logs/a,logs/b/')).status).toBe(200);
    expect((await search('GET', '/logs/a/:search?q=msg:one')).status).toBe(200);
    expectForbidden(await search('POST', '/logs/a/', { msg: 'a search key does not write' }));
    expect((await search('SEARCH', '/logs/*/')).status).toBe(200);
    // Several indexes: the action on every one of them.
    const several = await search('SEARCH', '/logs/a,other/');
    expectForbidden(several);
    expect(several.json.message).toContain('/other/');
    expectForbidden(await search('SEARCH', '/*/'));
    expectForbidden(await search('GET', '/logs/a/1'));

    const write = await key('writer', ['write']);
    expect((await write('PUT', '/logs/a/2', { msg: 'w' })).status).toBe(200);
    expect((await write('UPDATE', '/logs/a/2', { more: 1 })).status).toBe(200);
    expect((await write('PATCH', '/logs/a/2', [{ op: 'add', path: '/x', value: 1 }])).status).toBe(200);
    expect((await write('POST', '/logs/a/', { msg: 'posted' })).status).toBe(200);
    const restored = await call(server, 'RESTORE', '/logs/a/', '{"_id":"r1","msg":"restored"}\n', { ...bearer(writerSecret), 'content-type': 'application/x-ndjson' });
    expect(restored.status).toBe(200);
    expect((await write('COMMIT', '/logs/a/')).status).toBe(200);
    expect((await write('DELETE', '/logs/a/2')).status).toBe(204);
    for (const [method, path, body] of [['PUT', '/logs/d/', {}], ['DELETE', '/logs/b/'], ['GET', '/logs/a/1'], ['DUMP', '/logs/a/'], ['PUT', '/other/2', { a: 1 }]] as const) {
      expectForbidden(await write(method, path, body));
    }

    const admin = await key('administrator', ['admin']);
    expect((await admin('PUT', '/logs/d/', {})).status).toBe(200);
    expect((await admin('DELETE', '/logs/d/')).status).toBe(204);
    expect((await admin('DUMP', '/logs/b/')).status).toBe(200);
    expect((await admin('GET', '/:metrics')).status).toBe(200);
    expect((await admin('PUT', '/.templates/logs', { _patterns: ['/logs/*'] })).status).toBe(200);
    expectForbidden(await admin('GET', '/logs/a/1'));
    expectForbidden(await admin('PUT', '/other/', {}));

    // A pattern without '*' names one index; an alias is checked as addressed, not as what it resolves to.
    const exact = await key('exact', ['read'], ['/logs/a']);
    expect((await exact('GET', '/logs/a/1')).status).toBe(200);
    expectForbidden(await exact('GET', '/logs/b/1'));
    expect((await call(server, 'PUT', '/.aliases/current', { _indexes: ['/logs/a/'] }, asMaster)).status).toBe(200);
    expectForbidden(await exact('GET', '/current/1'));
    expect((await (await key('alias-reader', ['read'], ['/current/']))('GET', '/current/1')).status).toBe(200);
  });

  it('a key stops working when it expires (401 api_key_expired), and at once when it is revoked', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const expiring = await createKey(server, { _name: 'brief', _actions: ['read'], _indexes: ['/*'], _expires_at: soon });
    const revoked = await createKey(server, { _name: 'revoked', _actions: ['read'], _indexes: ['/*'] });
    secrets.push(expiring, revoked);
    expect((await call(server, 'GET', '/logs/a/1', undefined, bearer(revoked))).status).toBe(200);
    expect((await call(server, 'DELETE', '/.keys/revoked', undefined, asMaster)).status).toBe(204);
    expectUnauthorized(await call(server, 'GET', '/logs/a/1', undefined, bearer(revoked)), 'GET');
    expect((await call(server, 'GET', '/.keys/', undefined, asMaster)).json.map((k: { _name: string }) => k._name)).not.toContain('revoked');

    await eventually('the key to expire', async () => (await call(server, 'GET', '/logs/a/1', undefined, bearer(expiring))).status === 401);
    expectUnauthorized(await call(server, 'GET', '/logs/a/1', undefined, bearer(expiring)), 'GET', 'api_key_expired');
  });

  it('counts refusals in tessera_auth_failures_total, and never logs a key', async () => {
    const metrics = (await call(server, 'GET', '/:metrics', undefined, asMaster)).text;
    for (const reason of ['missing', 'invalid', 'expired', 'forbidden']) {
      expect(metrics).toMatch(new RegExp(`^tessera_auth_failures_total\\{reason="${reason}"\\} [1-9]`, 'm'));
    }
    const logged = JSON.stringify(server.logs);
    expect(logged).toContain('"apiKey":"<redacted>"');
    for (const secret of [MASTER, ...secrets]) expect(logged).not.toContain(secret);
  });

  it('keys survive a restart on the same data directory', async () => {
    const survivor = await createKey(server, { _name: 'survivor', _actions: ['read'], _indexes: ['/logs/*'] });
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, env: { TESSERA_API_KEY: MASTER } });
    expect((await call(server, 'GET', '/logs/a/1', undefined, bearer(survivor))).status).toBe(200);
    expectForbidden(await call(server, 'GET', '/other/1', undefined, bearer(survivor)));
    expectUnauthorized(await call(server, 'GET', '/logs/a/1'), 'GET');
  }, 30_000);

  it('import, dump and snapshot send --api-key (or TESSERA_API_KEY); without it they fail saying so', async () => {
    const dir = tempDataDir('tessera-keys-io-');
    try {
      const file = join(dir, 'docs.ndjson');
      writeFileSync(file, '{"_id":1,"n":1}\n{"_id":2,"n":2}\n{"_id":3,"n":3}\n');
      const refused = await runCli(['import', file, '-i', '/imported/', '-u', server.url, '-q']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/Unauthorized.*--api-key or TESSERA_API_KEY/);
      const imported = await runCli(['import', file, '-i', '/imported/', '-u', server.url, '-q', '--api-key', MASTER]);
      expect([imported.code, imported.stdout]).toEqual([0, expect.stringContaining('imported 3 of 3 documents')]);
      // A key that may write, but not read, the index imports too.
      const writer = await createKey(server, { _name: 'importer', _actions: ['write'], _indexes: ['/imported/'] });
      const scoped = await runCli(['import', file, '-i', '/imported/', '-u', server.url, '-q'], { env: { TESSERA_API_KEY: writer } });
      expect([scoped.code, scoped.stdout]).toEqual([0, expect.stringContaining('imported 3 of 3 documents')]);

      const out = join(dir, 'dump.ndjson');
      const noKey = await runCli(['dump', '-i', '/imported/', '-u', server.url, '-o', out], { env: { TESSERA_API_KEY: '' } });
      expect(noKey.code).toBe(1);
      expect(noKey.stderr).toMatch(/DUMP \/imported\/ failed: Unauthorized.*--api-key or TESSERA_API_KEY/);
      const dumped = await runCli(['dump', '-i', '/imported/', '-u', server.url, '-o', out], { env: { TESSERA_API_KEY: MASTER } });
      expect(dumped.code).toBe(0);
      expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);
      const flagged = await runCli(['dump', '-i', '/imported/', '-u', server.url, '--api-key', MASTER]);
      expect(flagged.stdout.trim().split('\n')).toHaveLength(3);
      // A snapshot is every index: the admin action; a key scoped to write refused, the master key taken.
      const snapshotOut = join(dir, 'snap');
      const unkeyed = await runCli(['snapshot', '--out', snapshotOut, '-u', server.url, '-q'], { env: { TESSERA_API_KEY: '' } });
      expect(unkeyed.code).toBe(1);
      expect(unkeyed.stderr).toMatch(/snapshot was refused: Unauthorized.*--api-key or TESSERA_API_KEY/);
      const scopedSnapshot = await runCli(['snapshot', '--out', snapshotOut, '-u', server.url, '-q'], { env: { TESSERA_API_KEY: writer } });
      expect(scopedSnapshot.code).toBe(1);
      expect(scopedSnapshot.stderr).toMatch(/snapshot was refused: Forbidden/);
      const snapshot = await runCli(['snapshot', '--out', snapshotOut, '-u', server.url, '-q', '--api-key', MASTER]);
      expect([snapshot.code, snapshot.stderr]).toEqual([0, expect.stringMatching(/snapshot of \d+ shards/)]);
      for (const run of [refused, imported, scoped, noKey, dumped, unkeyed, scopedSnapshot, snapshot]) expect(run.stderr + run.stdout).not.toContain(MASTER);
    } finally {
      removeDir(dir);
    }
  }, 120_000);

  it('no Authorization header, however malformed, gets a 5xx (raw sockets)', async () => {
    const exchange = async (headerLines: Buffer[]) => {
      const head = Buffer.concat([Buffer.from('GET /logs/a/1 HTTP/1.1\r\nHost: x\r\n'), ...headerLines.map((h) => Buffer.concat([h, Buffer.from('\r\n')])), Buffer.from('Connection: close\r\n\r\n')]);
      const answer = await rawExchange(server.port, [head], { responses: 1 });
      return answer.responses[0]?.status;
    };
    const line = (value: string | Buffer) => Buffer.concat([Buffer.from('Authorization: '), Buffer.isBuffer(value) ? value : Buffer.from(value, 'latin1')]);
    const cases: Array<[string, Buffer[], number]> = [
      ['empty', [line('')], 401],
      ['scheme alone', [line('Bearer')], 401],
      ['scheme and space', [line('Bearer ')], 401],
      ['another scheme', [line(`Token ${MASTER}`)], 401],
      ['the key and more', [line(`Bearer ${MASTER} ${MASTER}`)], 401],
      ['the key with a byte more', [line(`Bearer ${MASTER}\xe9`)], 401],
      ['latin1 bytes', [line(Buffer.from([0x42, 0x65, 0x61, 0x72, 0x65, 0x72, 0x20, 0xe9, 0xff, 0xa0, 0x80]))], 401],
      ['UTF-8 bytes', [line(Buffer.from(`Bearer ключ-${MASTER}`, 'utf8'))], 401],
      ['two headers, both right (joined: not one key)', [line(`Bearer ${MASTER}`), line(`Bearer ${MASTER}`)], 401],
      ['many headers', Array.from({ length: 50 }, (_, i) => line(`Bearer k${i}`)), 401],
      ['a 64 KiB value', [line(`Bearer ${'k'.repeat(64 * 1024)}`)], 431],
      // Whitespace around a field value is not part of it (RFC 9110 §5.5): the key itself.
      ['the key with a trailing space', [line(`Bearer ${MASTER} `)], 200],
      ['the key', [line(`Bearer ${MASTER}`)], 200],
    ];
    for (const [name, headers, status] of cases) expect([name, await exchange(headers)]).toEqual([name, status]);

    await fc.assert(fc.asyncProperty(
      fc.array(fc.integer({ min: 0x20, max: 0xff }).filter((b) => b !== 0x7f), { maxLength: 300 }),
      fc.constantFrom('', 'Bearer ', 'bearer ', 'BEARER  ', `Bearer ${MASTER}`),
      async (bytes, prefix) => {
        const status = await exchange([line(Buffer.concat([Buffer.from(prefix, 'latin1'), Buffer.from(bytes)]))]);
        expect(status).toBeDefined();
        expect(status!).toBeLessThan(500);
        const exact = Buffer.concat([Buffer.from(prefix, 'latin1'), Buffer.from(bytes)]).toString('latin1').trim();
        if (!/^bearer +/i.test(exact) || exact.replace(/^bearer +/i, '') !== MASTER) expect(status).not.toBe(200);
      },
    ), { numRuns: 150, seed: 22 });
  }, 60_000);
});

it('docs/security.md gives the endpoint → action table, as generated from the one the server consults', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/security.md'), 'utf8');
  const table = /<!-- actions-reference:start -->\n([\s\S]*?)\n<!-- actions-reference:end -->/.exec(doc)?.[1];
  // Regenerate with: node --input-type=module -e "Promise.all([import('@tessera/coordinator'), import('@tessera/http')]).then(([c, h]) => console.log(c.actionsReference(h.KNOWN_METHODS)))"
  expect(table).toBe(actionsReference(KNOWN_METHODS));
});

describe('the loopback default', () => {
  const dir = tempDataDir('tessera-keys-bind-');
  afterAll(() => removeDir(dir));

  it('serve and coordinator on a non-loopback address without a key refuse to start, in one line that says how to fix it', async () => {
    for (const [command, args, env] of [
      ['serve', ['--host', '0.0.0.0'], {}],
      ['serve', [], { TESSERA_HOST: '::' }],
      ['coordinator', ['--host', '0.0.0.0', '--rpc-port', '0'], {}],
    ] as const) {
      const run = await runCli([command, ...args, '--port', '0', '--data', join(dir, command)], { env: { ...env, TESSERA_API_KEY: '' } });
      expect([command, run.code]).toEqual([command, 2]);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^tessera: refusing to serve the HTTP API on .* without an API key.*--api-key.*--allow-anonymous/);
    }
    // A key too short to be one is refused too, without repeating it.
    const weak = await runCli(['serve', '--port', '0', '--data', join(dir, 'weak'), '--api-key', 'short']);
    expect(weak.code).toBe(2);
    expect(weak.stderr).toMatch(/--api-key: expected 16 to 1024 visible ASCII/);
    expect(weak.stderr).not.toContain('short');
    const weakEnv = await runCli(['serve', '--port', '0', '--data', join(dir, 'weak')], { env: { TESSERA_API_KEY: 'short key' } });
    expect(weakEnv.code).toBe(2);
    expect(weakEnv.stderr).toMatch(/TESSERA_API_KEY=…: expected 16 to 1024/);
    expect(weakEnv.stderr).not.toContain('short key');
    // --print-config shows that a key is set, never the key.
    const printed = await runCli(['serve', '--print-config', '--host', '0.0.0.0'], { env: { TESSERA_API_KEY: MASTER } });
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toMatchObject({ apiKey: '<redacted>', host: '0.0.0.0', allowAnonymous: false });
    expect(printed.stdout).not.toContain(MASTER);
  }, 90_000);

  it('starts on every address with --allow-anonymous (no key asked) or with a key (asked)', async () => {
    const anonymous = await startServer({ args: ['--host', '0.0.0.0', '--port', '0', '--data', join(dir, 'anonymous'), '--allow-anonymous'], env: { TESSERA_API_KEY: '' } });
    try {
      expect((await call(anonymous, 'GET', '/')).status).toBe(200);
    } finally {
      expect(await anonymous.stop()).toBe(0);
    }
    const keyed = await startServer({ args: ['--host', '0.0.0.0', '--port', '0', '--data', join(dir, 'keyed')], env: { TESSERA_API_KEY: MASTER } });
    try {
      expectUnauthorized(await call(keyed, 'GET', '/'), 'GET');
      expect((await call(keyed, 'GET', '/', undefined, asMaster)).status).toBe(200);
    } finally {
      expect(await keyed.stop()).toBe(0);
    }
    // /.keys/ is refused where there is no master key: nobody could plant a key for later.
    const open = await startServer({ args: ['--port', '0', '--data', join(dir, 'open')], env: { TESSERA_API_KEY: '' } });
    try {
      const refused = await call(open, 'POST', '/.keys/', { _name: 'planted', _actions: ['admin'], _indexes: ['/*'] });
      expect([refused.status, refused.json.code]).toEqual([403, 'api_keys_disabled']);
      expect((await call(open, 'PUT', '/open/1', { a: 1 })).status).toBe(200);
    } finally {
      await open.stop();
    }
  }, 60_000);
});

describe('two coordinators on etcd', () => {
  interface EtcdProcess { endpoint: string; stop(): Promise<void> }
  let root: string;
  let etcd: EtcdProcess;
  const coordinators: Array<{ proc: ClusterProcess; url: string }> = [];

  beforeAll(async () => {
    root = tempDataDir('tessera-keys-etcd-');
    const script = (await import(pathToFileURL(join(REPO_ROOT, 'scripts/etcd.mjs')).href)) as { startEtcd(o: { dataDir: string }): Promise<EtcdProcess> };
    etcd = await script.startEtcd({ dataDir: join(root, 'etcd') });
    for (const name of ['k1', 'k2']) {
      const proc = await spawnTessera(name, ['coordinator', '--name', name, '--port', '0', '--rpc-port', '0', '--data', join(root, name),
        '--etcd', etcd.endpoint, '--etcd-prefix', '/tessera-keys-test', '--coordinator-lease-ms', '2000'], { TESSERA_API_KEY: MASTER }, 'listening');
      coordinators.push({ proc, url: `http://127.0.0.1:${(proc.logs.find((l) => l.msg === 'listening') as { port: number }).port}` });
    }
    // Both answer, one of them elected (a write through the other is forwarded to it).
    await eventually('an elected coordinator', async () => {
      const created = await call(coordinators[1]!, 'POST', '/.keys/', { _name: 'probe', _actions: ['read'], _indexes: ['/*'] }, asMaster);
      return created.status === 201;
    }, 30_000);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(coordinators.map((c) => c.proc.stop()));
    await etcd?.stop();
    removeDir(root);
  });

  it('a key made through one coordinator works on the other; revoked through one, the other refuses it promptly', async () => {
    for (const [maker, user] of [[0, 1], [1, 0]] as const) {
      const name = `made-on-${maker}`;
      const secret = await createKey(coordinators[maker]!, { _name: name, _actions: ['read'], _indexes: ['/*'] });
      const works = async (i: number) => (await call(coordinators[i]!, 'GET', '/', undefined, bearer(secret))).status === 200;
      await eventually(`${name} on coordinator ${user}`, () => works(user));
      expect(await works(maker)).toBe(true);
      // Revoked through the other one.
      expect((await call(coordinators[user]!, 'DELETE', `/.keys/${name}`, undefined, asMaster)).status).toBe(204);
      await eventually(`${name} refused on coordinator ${maker}`, async () => !(await works(maker)));
      expect(await works(user)).toBe(false);
      expectUnauthorized(await call(coordinators[maker]!, 'GET', '/', undefined, bearer(secret)), 'GET');
    }
    // A scoped key's change through either coordinator (the one not elected forwards it with the key): accepted by the elected one.
    const admin = await createKey(coordinators[0]!, { _name: 'templater', _actions: ['admin'], _indexes: ['/*'] });
    for (const [i, c] of coordinators.entries()) {
      await eventually(`a template through coordinator ${i}`, async () =>
        (await call(c, 'PUT', `/.templates/t${i}`, { _patterns: [`/t${i}/*`] }, bearer(admin))).status === 200);
    }
    expectForbidden(await call(coordinators[1]!, 'GET', '/x/1', undefined, bearer(admin)));
    expect((await call(coordinators[0]!, 'DELETE', '/.keys/templater', undefined, asMaster)).status).toBe(204);
    // Both list the same keys, without secrets.
    for (const c of coordinators) {
      await eventually('the same list', async () => JSON.stringify((await call(c, 'GET', '/.keys/', undefined, asMaster)).json.map((k: { _name: string }) => k._name)) === '["probe"]');
    }
  }, 60_000);
});
