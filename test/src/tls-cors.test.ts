/**
 * TLS, the cluster secret and CORS (API.md §16.3, docs/tls-cors.md) over
 * real sockets and processes: `tessera serve` over HTTPS with a self-signed
 * certificate made here by openssl; a coordinator serving HTTPS and wss://
 * with a cluster secret, a node that has it and one that does not; CORS
 * preflights and responses for a list of origins, for `*`, and without
 * `--cors-origin`.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Readable } from 'node:stream';
import { connect as connectTls } from 'node:tls';
import { Agent, Client, request, setGlobalDispatcher } from 'undici';
import { runCli } from './cli-process.js';
import { spawnTessera, until, type ClusterProcess } from './cluster-harness.js';
import { call, REPO_ROOT, removeDir, startServer, tempDataDir, type Server } from './harness.js';
import { parsePrometheusText, valueOf } from './prometheus-text.js';

const root = tempDataDir('tessera-tls-');
const certFile = join(root, 'cert.pem');
const keyFile = join(root, 'key.pem');
/** A second certificate: a coordinator presenting it is not trusted by a node given the first as its CA. */
const otherCertFile = join(root, 'other-cert.pem');
const otherKeyFile = join(root, 'other-key.pem');

function selfSigned(cert: string, key: string): void {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
}
selfSigned(certFile, keyFile);
selfSigned(otherCertFile, otherKeyFile);
const ca = readFileSync(certFile);
// Every request of this file (the harness's `call` included) trusts the test certificate.
setGlobalDispatcher(new Agent({ connect: { ca } }));

const APP = 'https://app.example.com';
const OTHER_APP = 'http://localhost:3000';

afterAll(() => removeDir(root));

/** No line at error level or above (pino: 50 error, 60 fatal). */
function errorLines(logs: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return logs.filter((l) => (l.level as number) >= 50);
}

/** What comes back on a raw connection after `bytes` until the server closes it. */
function rawReply(port: number, bytes: Buffer | string): Promise<{ reply: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ reply: Buffer.concat(chunks), closed: true }));
    socket.write(bytes);
  });
}

describe('HTTPS (tessera serve --tls-cert --tls-key)', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const dataDir = join(root, 'https');
    server = await startServer({
      dataDir,
      args: ['--port', '0', '--data', dataDir, '--shards', '1', '--replicas', '0', '--tls-cert', certFile, '--tls-key', keyFile,
        '--headers-timeout-ms', '2000', '--cors-origin', `${APP},${OTHER_APP}`],
    });
    url = `https://127.0.0.1:${server.port}`;
  }, 30_000);

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    expect(errorLines(server.logs)).toEqual([]);
  });

  it('logs that it listens with https, and serves PUT, GET and SEARCH', async () => {
    expect(server.logs.find((l) => l.msg === 'listening')).toMatchObject({ scheme: 'https' });
    for (let i = 1; i <= 3; i++) {
      expect((await call({ url }, 'PUT', `/tls/${i}?commit`, { name: `doc ${i}`, n: i })).status).toBe(200);
    }
    const got = await call({ url }, 'GET', '/tls/2');
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ name: 'doc 2', n: 2, _id: 2 });
    const found = await call({ url }, 'SEARCH', '/tls/', { _query: { n: { _in: { _range: { _from: 2 } } } }, _sort: 'n' });
    expect(found.status).toBe(200);
    expect(found.json.hits.map((h: { _id: number }) => h._id)).toEqual([2, 3]);
  });

  it('keeps a connection alive across requests and answers requests pipelined on it in order', async () => {
    const client = new Client(url, { connect: { ca }, pipelining: 8 });
    try {
      const replies = await Promise.all(Array.from({ length: 16 }, (_, i) =>
        client.request({ method: 'GET', path: `/tls/${(i % 3) + 1}` }).then(async (r) => ({ status: r.statusCode, body: await r.body.json() }))));
      expect(replies.map((r) => r.status)).toEqual(Array(16).fill(200));
      expect(replies.map((r) => (r.body as { n: number }).n)).toEqual(Array.from({ length: 16 }, (_, i) => (i % 3) + 1));
    } finally {
      await client.close();
    }
    // Two requests in one TLS write: two responses on the one connection, in order.
    let alpn: string | false | null = null;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connectTls({ host: '127.0.0.1', port: server.port, ca, servername: 'localhost', ALPNProtocols: ['h2', 'http/1.1'] }, () => {
        alpn = socket.alpnProtocol;
        socket.write('GET /tls/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /tls/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      });
      let got = '';
      socket.on('data', (d: Buffer) => { got += d.toString('latin1'); });
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    // A client that offers HTTP/2 too is told HTTP/1.1 (ALPN).
    expect(alpn).toBe('http/1.1');
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '200']);
    expect(text.indexOf('"doc 1"')).toBeLessThan(text.indexOf('"doc 3"'));
  });

  it('streams a 6 MiB body in (chunked) and out', async () => {
    const big = randomBytes(6 * 1024 * 1024);
    const pieces = Array.from({ length: 24 }, (_, i) => big.subarray(i * 256 * 1024, (i + 1) * 256 * 1024));
    const put = await request(`${url}/blobs/big?commit`, {
      method: 'PUT', body: Readable.from(pieces), headers: { 'content-type': 'application/octet-stream' },
    });
    await put.body.arrayBuffer();
    expect(put.statusCode).toBe(200);
    const res = await request(`${url}/blobs/big`, { headers: { accept: 'application/octet-stream' } });
    expect(res.statusCode).toBe(200);
    const received: Buffer[] = [];
    for await (const chunk of res.body as AsyncIterable<Buffer>) received.push(chunk);
    expect(Buffer.concat(received).equals(big)).toBe(true);
  });

  it('closes a plain-HTTP request to the HTTPS port without an HTTP answer, and goes on serving', async () => {
    const { reply, closed } = await rawReply(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(closed).toBe(true);
    expect(reply.toString('latin1')).not.toMatch(/^HTTP\//);
    expect((await call({ url }, 'GET', '/healthz')).status).toBe(200);
  });

  it('drops a garbage handshake and a silent one without crashing or logging an error', async () => {
    const garbage = Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x40]), randomBytes(64)]);
    expect((await rawReply(server.port, garbage)).closed).toBe(true);
    expect((await rawReply(server.port, randomBytes(300))).closed).toBe(true);
    // Nothing sent at all: closed once the handshake timeout (--headers-timeout-ms) passes.
    expect((await rawReply(server.port, Buffer.alloc(0))).closed).toBe(true);
    expect((await call({ url }, 'GET', '/healthz')).status).toBe(200);
    expect(server.process.exitCode).toBeNull();
    expect(errorLines(server.logs)).toEqual([]);
  }, 20_000);

  it('CORS over HTTPS: a preflight for SEARCH and UPDATE from a listed origin answers 204 with the methods and headers', async () => {
    for (const method of ['SEARCH', 'UPDATE']) {
      const r = await call({ url }, 'OPTIONS', '/tls/', undefined, {
        origin: APP, 'access-control-request-method': method, 'access-control-request-headers': 'content-type, authorization, x-trace',
      });
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect(r.headers['access-control-allow-origin']).toBe(APP);
      const methods = String(r.headers['access-control-allow-methods']).split(', ');
      for (const m of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'SEARCH', 'COUNT', 'INFO', 'UPDATE', 'UPSERT', 'COMMIT', 'DUMP', 'RESTORE']) {
        expect(methods).toContain(m);
      }
      const headers = String(r.headers['access-control-allow-headers']).toLowerCase().split(', ');
      for (const h of ['authorization', 'content-type', 'accept', 'x-http-method-override', 'x-trace']) expect(headers).toContain(h);
      expect(Number(r.headers['access-control-max-age'])).toBeGreaterThan(0);
      expect(String(r.headers.vary)).toMatch(/\bOrigin\b/);
    }
    // The second listed origin is echoed as itself.
    const other = await call({ url }, 'OPTIONS', '/', undefined, { origin: OTHER_APP, 'access-control-request-method': 'GET' });
    expect(other.status).toBe(204);
    expect(other.headers['access-control-allow-origin']).toBe(OTHER_APP);
  });

  it('CORS: a preflight from an origin not listed is 403 cors_origin_not_allowed with no allow headers', async () => {
    const r = await call({ url }, 'OPTIONS', '/tls/', undefined, { origin: 'https://evil.example.com', 'access-control-request-method': 'SEARCH' });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ status: 403, code: 'cors_origin_not_allowed' });
    expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  it('CORS: a GET from a listed origin carries Access-Control-Allow-Origin and Vary: Origin; from another origin, neither allow header', async () => {
    const listed = await call({ url }, 'GET', '/tls/1', undefined, { origin: APP });
    expect(listed.status).toBe(200);
    expect(listed.headers['access-control-allow-origin']).toBe(APP);
    expect(String(listed.headers['access-control-expose-headers'])).toMatch(/\bLocation\b/);
    expect(String(listed.headers.vary)).toMatch(/\bOrigin\b/);
    const unlisted = await call({ url }, 'GET', '/tls/1', undefined, { origin: 'https://evil.example.com' });
    expect(unlisted.status).toBe(200);
    expect(unlisted.json).toMatchObject({ n: 1 });
    expect(unlisted.headers['access-control-allow-origin']).toBeUndefined();
    expect(String(unlisted.headers.vary)).toMatch(/\bOrigin\b/);
    // A plain OPTIONS (no Access-Control-Request-Method) is the API's own: 200 with Allow.
    const options = await call({ url }, 'OPTIONS', '/tls/1', undefined, { origin: APP });
    expect(options.status).toBe(200);
    expect(String(options.headers.allow)).toMatch(/\bUPDATE\b/);
    expect(options.headers['access-control-allow-origin']).toBe(APP);
  });
});

describe('SIGHUP reloads the certificate', () => {
  it('new connections get the renewed certificate; a pair that cannot be used is logged and the old one kept', async () => {
    const dir = join(root, 'reload');
    const dataDir = join(dir, 'data');
    mkdirSync(dir, { recursive: true });
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    copyFileSync(certFile, cert);
    copyFileSync(keyFile, key);
    const server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--shards', '1', '--tls-cert', cert, '--tls-key', key] });
    const url = `https://127.0.0.1:${server.port}/healthz`;
    const trusting = (pem: Buffer) => new Agent({ connect: { ca: pem } });
    const status = (pem: Buffer) => request(url, { dispatcher: trusting(pem) }).then((r) => r.statusCode, (err: Error) => err.message);
    try {
      expect(await status(ca)).toBe(200);
      copyFileSync(otherCertFile, cert);
      copyFileSync(otherKeyFile, key);
      server.process.kill('SIGHUP');
      await server.waitForLog((l) => l.msg === 'tls certificate reloaded', 10_000);
      expect(await status(readFileSync(otherCertFile))).toBe(200);
      expect(await status(ca)).toMatch(/self[- ]signed|verify|certificate/i);
      writeFileSync(key, 'not a key\n');
      server.process.kill('SIGHUP');
      const failed = await server.waitForLog((l) => l.msg === 'tls certificate not reloaded: the one loaded before is kept', 10_000);
      expect(JSON.stringify(failed.err)).toContain(`--tls-key ${key}`);
      expect(await status(readFileSync(otherCertFile))).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 30_000);
});

describe('CORS with * and without --cors-origin', () => {
  let any: Server;
  let none: Server;

  beforeAll(async () => {
    const anyDir = join(root, 'cors-any');
    const noneDir = join(root, 'cors-none');
    [any, none] = await Promise.all([
      startServer({ dataDir: anyDir, args: ['--port', '0', '--data', anyDir, '--shards', '1', '--cors-origin', '*'] }),
      startServer({ dataDir: noneDir, args: ['--port', '0', '--data', noneDir, '--shards', '1'] }),
    ]);
  }, 30_000);

  afterAll(async () => {
    expect(await any.stop()).toBe(0);
    expect(await none.stop()).toBe(0);
  });

  it('* answers every origin with Access-Control-Allow-Origin: *', async () => {
    const preflight = await call(any, 'OPTIONS', '/idx/', undefined, { origin: 'https://anywhere.example', 'access-control-request-method': 'COUNT' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-methods'])).toMatch(/\bCOUNT\b/);
    const get = await call(any, 'GET', '/', undefined, { origin: 'https://anywhere.example' });
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe('*');
  });

  it('without --cors-origin: no CORS headers, and OPTIONS answers as ever (200 with Allow)', async () => {
    const preflight = await call(none, 'OPTIONS', '/idx/', undefined, { origin: APP, 'access-control-request-method': 'SEARCH' });
    expect(preflight.status).toBe(200);
    expect(String(preflight.headers.allow)).toMatch(/\bSEARCH\b/);
    const get = await call(none, 'GET', '/', undefined, { origin: APP });
    expect(get.status).toBe(200);
    for (const r of [preflight, get]) {
      expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
      expect(String(r.headers.vary ?? '')).not.toMatch(/Origin/);
    }
  });
});

describe('startup errors', () => {
  it('a certificate file that does not exist: the start fails naming the file', async () => {
    const dataDir = join(root, 'bad-cert');
    const missing = join(root, 'no-such-cert.pem');
    const r = await runCli(['serve', '--port', '0', '--data', dataDir, '--tls-cert', missing, '--tls-key', keyFile]);
    expect(r.code).toBe(1);
    const fatal = r.stdout.split('\n').filter((l) => l.includes('"could not start"')).join('\n');
    expect(fatal).toContain(`--tls-cert ${missing}: cannot read the file`);
  });

  it('a key that is not PEM, and a key of another certificate: named', async () => {
    const notPem = join(root, 'not-a-key.pem');
    writeFileSync(notPem, 'not a key\n');
    const dataDir = join(root, 'bad-key');
    const garbled = await runCli(['serve', '--port', '0', '--data', dataDir, '--tls-cert', certFile, '--tls-key', notPem]);
    expect(garbled.code).toBe(1);
    expect(garbled.stdout).toContain(`--tls-key ${notPem}: not a PEM private key`);
    const mismatched = await runCli(['serve', '--port', '0', '--data', dataDir, '--tls-cert', certFile, '--tls-key', otherKeyFile]);
    expect(mismatched.code).toBe(1);
    expect(mismatched.stdout).toContain(`--tls-key ${otherKeyFile} does not belong to the certificate of --tls-cert ${certFile}`);
  });

  it('one of --tls-cert and --tls-key alone, and a CORS origin with a path, are configuration errors (exit 2)', async () => {
    const alone = await runCli(['serve', '--tls-cert', certFile, '--print-config']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('tlsCert and tlsKey go together');
    const path = await runCli(['coordinator', '--cors-origin', 'https://app.example.com/', '--print-config']);
    expect(path.code).toBe(2);
    expect(path.stderr).toContain('write https://app.example.com');
  });
});

describe('a cluster over wss:// with a cluster secret', () => {
  const secret = `s3cret-${randomBytes(12).toString('hex')}`;
  const processes: ClusterProcess[] = [];
  let coordinator: ClusterProcess;
  let url: string;
  let rpcUrl: string;

  /** A node joining the coordinator with `extra` flags; resolves once it logs `joining`. */
  async function startNode(name: string, extra: string[], env: Record<string, string> = {}): Promise<ClusterProcess> {
    const node = await spawnTessera(name, ['node', '--join', rpcUrl, '--name', name, '--data', join(root, name), ...extra],
      { TESSERA_LOG_LEVEL: 'debug', ...env }, 'joining');
    processes.push(node);
    return node;
  }

  async function nodeList(): Promise<Array<{ name: string; active: boolean }>> {
    return (await call({ url }, 'GET', '/.nodes')).json as Array<{ name: string; active: boolean }>;
  }

  beforeAll(async () => {
    coordinator = await spawnTessera('coordinator', ['coordinator', '--port', '0', '--rpc-port', '0', '--data', join(root, 'coordinator'),
      '--tls-cert', certFile, '--tls-key', keyFile, '--cluster-secret', secret, '--shards', '1', '--replicas', '0'],
    { TESSERA_LOG_LEVEL: 'debug' }, 'listening');
    processes.push(coordinator);
    const listening = coordinator.logs.find((l) => l.msg === 'listening') as { port: number; scheme: string };
    expect(listening.scheme).toBe('https');
    url = `https://127.0.0.1:${listening.port}`;
    rpcUrl = String(coordinator.logs.find((l) => l.msg === 'rpc listening')?.url);
    expect(rpcUrl).toMatch(/^wss:\/\//);
  }, 30_000);

  afterAll(async () => {
    expect(await Promise.all(processes.map((p) => p.stop()))).toEqual(processes.map(() => 0));
  });

  it('a node with the secret (given by its variable) and the CA joins, and documents go through it', async () => {
    await startNode('good', ['--tls-ca', certFile], { TESSERA_CLUSTER_SECRET: secret });
    for (let deadline = Date.now() + 20_000; ;) {
      if ((await nodeList()).some((n) => n.name === 'good' && n.active)) break;
      if (Date.now() > deadline) throw new Error('the node did not join');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await call({ url }, 'PUT', '/wss/1?commit', { over: 'wss' })).status).toBe(200);
    expect((await call({ url }, 'GET', '/wss/1')).json).toMatchObject({ over: 'wss', _id: 1 });
    const found = await call({ url }, 'SEARCH', '/wss/', { _query: { over: 'wss' } });
    expect(found.json.total).toBe(1);
    // SIGHUP reloads the certificate of both listeners; the node stays joined, requests go on.
    coordinator.process.kill('SIGHUP');
    await coordinator.waitForLog((l) => l.msg === 'tls certificate reloaded', 10_000);
    expect((await call({ url }, 'PUT', '/wss/2?commit', { over: 'wss' })).status).toBe(200);
  }, 30_000);

  it('a node with a wrong secret is refused: it logs why, /.nodes never lists it; one without the CA does not trust the coordinator', async () => {
    const wrong = await startNode('wrong', ['--tls-ca', certFile, '--cluster-secret', 'not-the-cluster-secret-we-use']);
    const refused = await wrong.waitForLog((l) => l.msg === 'rpc refused by the other side: cluster secret', 15_000);
    expect(String(refused.reason)).toContain('cluster secret does not match');
    await coordinator.waitForLog((l) => l.msg === 'rpc peer refused' && l.peer === 'wrong', 15_000);
    // It redials with backoff and is refused again, each time.
    await wrong.waitForLog((l) => l.msg === 'rpc redial scheduled' && (l.attempt as number) >= 2, 15_000);
    const untrusting = await startNode('untrusting', ['--tls-ca', otherCertFile, '--cluster-secret', secret]);
    const tlsError = await untrusting.waitForLog((l) => l.msg === 'rpc socket error' && l.level === 40, 15_000);
    expect(JSON.stringify(tlsError.err)).toMatch(/self[- ]signed|verify|certificate/i);
    const names = (await nodeList()).map((n) => n.name);
    expect(names).toContain('good');
    expect(names).not.toContain('wrong');
    expect(names).not.toContain('untrusting');
  }, 40_000);

  it('the secret appears in no log line of any process', () => {
    for (const p of processes) {
      const text = p.logs.map((l) => JSON.stringify(l)).join('\n');
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toContain(secret);
    }
    const starting = coordinator.logs.find((l) => l.msg === 'starting') as { config: { clusterSecret: string } };
    expect(starting.config.clusterSecret).toBe('<redacted>');
    // Given as a flag, it is not in the process title either (what ps shows once the process runs).
    if (existsSync(`/proc/${coordinator.process.pid}/cmdline`)) {
      const cmdline = readFileSync(`/proc/${coordinator.process.pid}/cmdline`, 'utf8');
      expect(cmdline).toContain('--cluster-secret');
      expect(cmdline).not.toContain(secret);
    }
  });

  it('--print-config shows the secret redacted', async () => {
    const printed = await runCli(['node', '--name', 'n', '--cluster-secret', secret, '--print-config']);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toMatchObject({ clusterSecret: '<redacted>' });
    expect(printed.stdout).not.toContain(secret);
  });
});

describe('two coordinators on etcd over HTTPS, two nodes relaying over wss://', () => {
  interface EtcdProcess { endpoint: string; stop(): Promise<void> }
  const processes: ClusterProcess[] = [];
  const urls = new Map<string, string>();
  let etcd: EtcdProcess | undefined;

  beforeAll(async () => {
    const script = (await import(pathToFileURL(join(REPO_ROOT, 'scripts/etcd.mjs')).href)) as { startEtcd(o: { dataDir: string }): Promise<EtcdProcess> };
    etcd = await script.startEtcd({ dataDir: join(root, 'etcd') });
    const rpcs: string[] = [];
    for (const name of ['c1', 'c2']) {
      const proc = await spawnTessera(name, ['coordinator', '--name', name, '--port', '0', '--rpc-port', '0', '--data', join(root, name),
        '--etcd', etcd.endpoint, '--etcd-prefix', '/tessera-tls', '--shards', '1', '--replicas', '0', '--cors-origin', APP,
        '--tls-cert', certFile, '--tls-key', keyFile, '--tls-ca', certFile], { TESSERA_CLUSTER_SECRET: 'etcd-cluster-shared-secret' }, 'listening');
      processes.push(proc);
      urls.set(name, `https://127.0.0.1:${(proc.logs.find((l) => l.msg === 'listening') as { port: number }).port}`);
      rpcs.push(String(proc.logs.find((l) => l.msg === 'rpc listening')?.url));
    }
    // Each node's relay listener serves wss:// with the certificate; relays dial the other's trusting the CA.
    for (const name of ['n1', 'n2']) {
      const node = await spawnTessera(name, ['node', '--name', name, '--data', join(root, name), '--join', rpcs.join(','), '--tls-ca', certFile,
        '--relay-port', '0', '--tls-cert', certFile, '--tls-key', keyFile], { TESSERA_CLUSTER_SECRET: 'etcd-cluster-shared-secret' }, 'joining');
      processes.push(node);
      expect(String(node.logs.find((l) => l.msg === 'joining')?.relay)).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/);
    }
    for (const url of urls.values()) {
      for (let deadline = Date.now() + 30_000; ;) {
        const ready = await call({ url }, 'GET', '/readyz').catch(() => undefined);
        const listed = await call({ url }, 'GET', '/.nodes').catch(() => undefined);
        const active = (listed?.json as Array<{ name: string; active: boolean }> | undefined)?.filter((n) => n.active).map((n) => n.name) ?? [];
        if (ready?.status === 200 && active.includes('n1') && active.includes('n2')) break;
        if (Date.now() > deadline) throw new Error(`${url} not ready with n1 and n2`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }, 90_000);

  afterAll(async () => {
    expect(await Promise.all(processes.map((p) => p.stop()))).toEqual(processes.map(() => 0));
    await etcd?.stop();
  });

  it('writes through both coordinators, the follower forwarding to the elected one; CORS headers come once', async () => {
    const listed = (await call({ url: urls.get('c1')! }, 'GET', '/.nodes')).json as Array<{ name: string; role: string; leader: boolean }>;
    const leader = listed.find((n) => n.role === 'coordinator' && n.leader)!.name;
    const follower = leader === 'c1' ? 'c2' : 'c1';
    const put = await call({ url: urls.get(follower)! }, 'PUT', '/fwd/1?commit', { through: follower }, { origin: APP });
    expect(put.status).toBe(200);
    expect(put.headers['access-control-allow-origin']).toBe(APP);
    expect((await call({ url: urls.get(leader)! }, 'GET', '/fwd/1')).json).toMatchObject({ through: follower, _id: 1 });
    expect((await call({ url: urls.get(leader)! }, 'PUT', '/fwd/2?commit', { through: leader })).status).toBe(200);
    expect((await call({ url: urls.get(follower)! }, 'GET', '/fwd/2')).json).toMatchObject({ through: leader });
  });

  it('the follower writes straight to each primary, which relays to its replica over wss://: both copies hold every write', async () => {
    const listed = (await call({ url: urls.get('c1')! }, 'GET', '/.nodes')).json as Array<{ name: string; role: string; leader: boolean }>;
    const leader = listed.find((n) => n.role === 'coordinator' && n.leader)!.name;
    const url = urls.get(leader === 'c1' ? 'c2' : 'c1')!;
    const direct = async (): Promise<number> =>
      valueOf(parsePrometheusText(String((await call({ url }, 'GET', '/:metrics')).text)), 'tessera_routed_writes_total', { via: 'primary' }, 0);
    expect((await call({ url: urls.get(leader)! }, 'PUT', '/relayed/', { _settings: { number_of_shards: 2, number_of_replicas: 1 } })).status).toBe(200);
    expect((await call({ url: urls.get(leader)! }, 'PUT', '/relayed/seed?commit', { n: 0 })).status).toBe(200);
    // Placed on the way of the first writes: until then they go through the elected coordinator.
    let warm = 0;
    await until('/relayed/ placed on its primaries', async () => {
      const before = await direct();
      for (let k = 0; k < 4; k++) expect((await call({ url }, 'PUT', `/relayed/warm${warm++}`, { n: -1 })).status).toBe(200);
      return (await direct()) - before === 4 ? true : undefined;
    });
    const before = await direct();
    for (let i = 1; i <= 30; i++) expect((await call({ url }, 'PUT', `/relayed/r${i}?commit`, { n: i })).status).toBe(200);
    expect(await direct() - before).toBe(30);
    // Every copy holds every write: each shard's two copies, in sync, at the same seq with as many documents.
    await until('every copy of /relayed/ alike', async () => {
      const nodes = (await call({ url }, 'GET', '/.nodes')).json as Array<{ shards?: Array<{ index: string; shard: number; seq: number; documents?: number; in_sync: boolean }> }>;
      const copies = nodes.flatMap((n) => (n.shards ?? []).filter((c) => c.index === '/relayed/'));
      if (copies.length !== 4 || copies.some((c) => !c.in_sync)) return undefined;
      return [1, 2].every((shard) => new Set(copies.filter((c) => c.shard === shard).map((c) => `${c.seq}/${c.documents}`)).size === 1) ? true : undefined;
    }, 10_000);
    expect((await call({ url }, 'COUNT', '/relayed/', { _query: { n: { _in: { _range: { _from: 1 } } } } })).json).toMatchObject({ total: 30 });
  });

  it('off loopback, a coordinator\'s RPC listener and a node\'s relay listener need the cluster secret (or --allow-anonymous) to start', async () => {
    const coordinator = await runCli(['coordinator', '--port', '0', '--rpc-host', '0.0.0.0', '--rpc-port', '0', '--data', join(root, 'open-c')]);
    expect(coordinator.code).toBe(2);
    expect(coordinator.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^tessera: refusing to take nodes on the RPC listener on 0\.0\.0\.0 without a cluster secret.*--cluster-secret/)]);
    const node = await runCli(['node', '--name', 'open-n', '--data', join(root, 'open-n'), '--relay-host', '0.0.0.0', '--relay-port', '0']);
    expect(node.code).toBe(2);
    expect(node.stderr).toMatch(/refusing to take relayed writes on the relay listener on 0\.0\.0\.0 without a cluster secret/);
    // Said to be intended: it starts.
    const allowed = await spawnTessera('open-c', ['coordinator', '--port', '0', '--rpc-host', '0.0.0.0', '--rpc-port', '0', '--allow-anonymous',
      '--data', join(root, 'open-c')], {}, 'rpc listening');
    expect(String(allowed.logs.find((l) => l.msg === 'rpc listening')?.url)).toMatch(/^ws:\/\/0\.0\.0\.0:\d+$/);
    expect(await allowed.stop()).toBe(0);
  });

  it('a node with a relay listener but no certificate, joining over wss://, does not start and says why', async () => {
    const r = await runCli(['node', '--name', 'n3', '--data', join(root, 'n3'), '--join', 'wss://127.0.0.1:1', '--tls-ca', certFile, '--relay-port', '0'],
      { env: { TESSERA_CLUSTER_SECRET: 'etcd-cluster-shared-secret' } });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('the relay listener needs --tls-cert and --tls-key');
  });
});
