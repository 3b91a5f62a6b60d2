/**
 * Operating the real `tessera serve` process: shutdown on SIGTERM under load
 * (every request the server began is answered, the listener drains its
 * backlog before it closes, exit 0, the next start needs no repair), a second signal, readiness during shutdown, `/:metrics` parsed
 * strictly with its counters and histograms moving, the docs' metrics list,
 * `--log-pretty`, and no console output from the server packages.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { metricsReference } from '@tessera/coordinator';
import { Client, Pool } from 'undici';
import { runCli } from './cli-process.js';
import { startCluster } from './cluster-harness.js';
import { call, CLI, REPO_ROOT, removeDir, startServer, tempDataDir, type Server } from './harness.js';
import { parsePrometheusText, valueOf, type Family } from './prometheus-text.js';

/** A PUT whose body is sent in two halves: the second only when `finish()` is called. */
function slowPut(url: string, path: string, doc: Record<string, unknown>) {
  const bytes = Buffer.from(JSON.stringify(doc));
  const half = bytes.length >> 1;
  let halfSent!: () => void;
  let release!: () => void;
  const sentHalf = new Promise<void>((resolve) => { halfSent = resolve; });
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const client = new Client(url);
  async function* body() {
    yield bytes.subarray(0, half);
    // undici asks for the next chunk once the first is written to the socket.
    halfSent();
    await gate;
    yield bytes.subarray(half);
  }
  const response = client.request({
    // undici takes async iterables as bodies (its types list only streams).
    path, method: 'PUT', body: body() as unknown as Readable,
    headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) },
  }).then(async (r) => ({ status: r.statusCode, text: await r.body.text() }));
  return { sentHalf, finish: () => release(), response, close: () => client.destroy() };
}

/**
 * A raw connection that has sent part of a request head: the server has
 * begun the request (its parser is mid-head), so a shutdown must let it
 * finish. `complete()` sends the rest and resolves with the raw answer.
 */
function partialRequest(port: number, head: string, rest: string) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d: Buffer) => { received += d.toString('latin1'); });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  const sent = new Promise<void>((resolve) => socket.once('connect', () => socket.write(head, () => resolve())));
  return {
    sent,
    async complete(): Promise<string> {
      socket.write(rest);
      await closed;
      return received;
    },
  };
}

/** Whether a connection attempt is refused within `attempts` tries 400 ms apart (each accepted one is closed at once). */
async function refusedWithin(port: number, attempts: number): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => { socket.destroy(); resolve('connected'); });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    if (outcome === 'ECONNREFUSED') return true;
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  return false;
}

/** A round trip on another connection: once answered, the server has read what was written before it (one poll of every ready socket). */
async function barrier(server: Server): Promise<void> {
  expect((await call(server, 'GET', '/healthz')).status).toBe(200);
}

function warningsOrWorse(logs: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return logs.filter((l) => typeof l.level === 'number' && l.level >= 40);
}

async function waitReady(server: Server): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await call(server, 'GET', '/readyz');
    if (r.status === 200) return;
    if (Date.now() > deadline) throw new Error(`not ready: ${r.text}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('shutdown', () => {
  it('SIGTERM under a load of concurrent PUTs: every request the server began is answered, exit 0, the next start needs no repair', async () => {
    // Requests held open across the signal must not count as slow (a warning would fail the clean-log check).
    const dataDir = tempDataDir();
    const server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--shutdown-grace-ms', '30000', '--slow-request-ms', '600000'] });
    const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
    try {
      expect((await call(server, 'PUT', '/load/first', { n: -1 })).status).toBe(200);
      await waitReady(server);

      // Ten PUTs half-sent (begun, certainly in flight at the signal), and a /readyz half-sent.
      const slow = Array.from({ length: 10 }, (_, i) => slowPut(server.url, `/load/slow-${i}`, { slow: i, pad: 'x'.repeat(200) }));
      const readyz = partialRequest(server.port, 'GET /readyz HTTP/1.1\r\nHost: t\r\n', '\r\n');
      await Promise.all([...slow.map((s) => s.sentHalf), readyz.sent]);
      await barrier(server);

      // 200 PUTs over 10 connections, 10 pipelined on each; SIGTERM once 50 are answered.
      const pool = new Pool(server.url, { connections: 10, pipelining: 10 });
      let answered = 0;
      let signalled = false;
      const puts = Array.from({ length: 200 }, (_, i) => pool.request({
        path: `/load/${i}`, method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: i }),
      }).then(async (r) => {
        const text = await r.body.text();
        if (++answered === 50 && !signalled) {
          signalled = true;
          server.process.kill('SIGTERM');
        }
        return { status: r.statusCode, text };
      }));
      const settled = await Promise.allSettled(puts);
      expect(signalled).toBe(true);
      await server.waitForLog((l) => l.msg === 'shutting down', 10_000);

      // While connections keep arriving the listener stays open (closing it would reset those queued in the
      // accept backlog): a new one is answered, not ready, with Connection: close…
      const fresh = await call(server, 'GET', '/readyz');
      expect([fresh.status, fresh.headers.connection]).toEqual([503, 'close']);
      // …and once none has come for DRAIN_QUIET_MS (250 ms), the listener closes: new connections are refused.
      expect(await refusedWithin(server.port, 10)).toBe(true);

      // The /readyz begun before the signal is answered: 503, shutting down.
      const readyAnswer = await readyz.complete();
      expect(readyAnswer).toMatch(/^HTTP\/1\.1 503 /);
      expect(readyAnswer).toContain('{"status":"not ready","reason":"shutting down"}');

      // The half-sent PUTs complete after the signal and are acknowledged.
      for (const s of slow) s.finish();
      const slowAnswers = await Promise.all(slow.map((s) => s.response));
      for (const a of slowAnswers) expect(a.status).toBe(200);
      await Promise.all(slow.map((s) => s.close()));
      await pool.destroy();

      // No second signal: the first one's shutdown ends by itself.
      expect(await exited).toBe(0);
      expect(server.logs.some((l) => l.msg === 'stopped')).toBe(true);
      expect(warningsOrWorse(server.logs)).toEqual([]);

      // Every answer was a proper one; a request that failed was never begun by the server (its document is absent below).
      const acknowledged: number[] = [];
      const failed: number[] = [];
      settled.forEach((r, i) => {
        if (r.status === 'fulfilled') {
          expect(r.value.status).toBe(200);
          acknowledged.push(i);
        } else {
          expect(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']).toContain((r.reason as { code?: string }).code);
          failed.push(i);
        }
      });
      expect(acknowledged.length).toBeGreaterThanOrEqual(50);

      const again = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir] });
      try {
        await waitReady(again);
        for (const i of acknowledged) expect((await call(again, 'GET', `/load/${i}`)).json).toMatchObject({ n: i });
        for (const i of failed) expect((await call(again, 'GET', `/load/${i}`)).status).toBe(404);
        for (let i = 0; i < slow.length; i++) expect((await call(again, 'GET', `/load/slow-${i}`)).json).toMatchObject({ slow: i });
        // The search index has them all too (replayed from the operation log where not yet in a segment).
        expect((await call(again, 'COUNT', '/load/')).json.total).toBe(1 + acknowledged.length + slow.length);
        const opened = again.logs.find((l) => l.msg === 'shard copies open');
        expect(opened).toMatchObject({ failed: 0 });
        expect(warningsOrWorse(again.logs)).toEqual([]);
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      await server.kill();
      removeDir(dataDir);
    }
  });

  it('a second signal exits at once (143), not waiting for the drain; the next start recovers', async () => {
    const dataDir = tempDataDir();
    const server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--shutdown-grace-ms', '60000'] });
    try {
      expect((await call(server, 'PUT', '/twice/1', { ok: true })).status).toBe(200);
      const stuck = slowPut(server.url, '/twice/2', { never: 'finished' });
      await stuck.sentHalf;
      await barrier(server);
      const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
      server.process.kill('SIGTERM');
      await server.waitForLog((l) => l.msg === 'shutting down', 10_000);
      const t0 = Date.now();
      server.process.kill('SIGTERM');
      expect(await exited).toBe(143);
      expect(Date.now() - t0).toBeLessThan(5_000);
      await expect(stuck.response).rejects.toBeDefined();
      await stuck.close();

      const again = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir] });
      try {
        await waitReady(again);
        expect((await call(again, 'GET', '/twice/1')).json).toMatchObject({ ok: true });
        expect((await call(again, 'GET', '/twice/2')).status).toBe(404);
        expect(warningsOrWorse(again.logs)).toEqual([]);
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      await server.kill();
      removeDir(dataDir);
    }
  });
});

describe('/:metrics', () => {
  let server: Server;

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  async function scrape(): Promise<Map<string, Family>> {
    const r = await call(server, 'GET', '/:metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parsePrometheusText(r.text);
  }

  it('parses strictly; counters and histogram buckets move with requests; documents and bytes per index', async () => {
    expect((await call(server, 'PUT', '/metered/1', { a: 1 })).status).toBe(200);
    expect((await call(server, 'PUT', '/metered/2?commit=true', { a: 2 })).status).toBe(200);
    const before = await scrape();
    const types = new Map([...before.values()].map((f) => [f.name, f.type]));
    expect(Object.fromEntries(['tessera_http_request_duration_seconds', 'tessera_rpc_call_duration_seconds', 'tessera_storage_commit_duration_seconds',
      'tessera_http_requests_seconds', 'tessera_operations_seconds', 'tessera_documents', 'tessera_index_bytes', 'tessera_uptime_seconds',
      'tessera_http_current_connections', 'process_cpu_user_seconds_total', 'nodejs_eventloop_lag_seconds'].map((n) => [n, types.get(n)]))).toEqual({
      tessera_http_request_duration_seconds: 'histogram',
      tessera_rpc_call_duration_seconds: 'histogram',
      tessera_storage_commit_duration_seconds: 'histogram',
      tessera_http_requests_seconds: 'summary',
      tessera_operations_seconds: 'summary',
      tessera_documents: 'gauge',
      tessera_index_bytes: 'gauge',
      tessera_uptime_seconds: 'gauge',
      tessera_http_current_connections: 'gauge',
      process_cpu_user_seconds_total: 'counter',
      nodejs_eventloop_lag_seconds: 'gauge',
    });
    for (const f of before.values()) expect(f.help).toBeDefined();

    for (let i = 0; i < 10; i++) expect((await call(server, 'GET', '/metered/1')).status).toBe(200);
    for (let i = 3; i < 8; i++) expect((await call(server, 'PUT', `/metered/${i}${i === 7 ? '?commit=true' : ''}`, { a: i })).status).toBe(200);
    expect((await call(server, 'GET', '/metered/404')).status).toBe(404);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels, 0);

    // Ten GETs and the first scrape: exactly 11 more 2xx GETs, in the +Inf bucket and in some finite bucket.
    const get2xx = { method: 'GET', status_class: '2xx' };
    expect(delta('tessera_http_request_duration_seconds_count', get2xx)).toBe(11);
    expect(delta('tessera_http_request_duration_seconds_bucket', { ...get2xx, le: '+Inf' })).toBe(11);
    expect(delta('tessera_http_request_duration_seconds_bucket', { ...get2xx, le: '10' })).toBe(11);
    expect(delta('tessera_http_request_duration_seconds_sum', get2xx)).toBeGreaterThan(0);
    expect(valueOf(after, 'tessera_http_request_duration_seconds_count', { method: 'GET', status_class: '4xx' })).toBe(1);
    expect(delta('tessera_http_request_duration_seconds_count', { method: 'PUT', status_class: '2xx' })).toBe(5);
    expect(delta('tessera_http_requests_seconds_count', { method: 'PUT', status: '200' })).toBe(5);
    expect(delta('tessera_operations_seconds_count', { operation: 'document.get' })).toBe(11);

    // RPC calls as the coordinator saw them: eleven doc.get, five doc.write.
    expect(delta('tessera_rpc_call_duration_seconds_count', { method: 'doc.get' })).toBe(11);
    expect(delta('tessera_rpc_call_duration_seconds_count', { method: 'doc.write' })).toBe(5);
    expect(delta('tessera_rpc_call_duration_seconds_bucket', { method: 'doc.write', le: '+Inf' })).toBe(5);

    // LevelDB batches: the buffered ones and the synced one (?commit=true) each moved.
    const node = { node: 'node1' };
    expect(delta('tessera_storage_commit_duration_seconds_count', { ...node, sync: 'false' })).toBeGreaterThanOrEqual(1);
    expect(delta('tessera_storage_commit_duration_seconds_count', { ...node, sync: 'true' })).toBeGreaterThanOrEqual(1);
    expect(delta('tessera_storage_commit_duration_seconds_bucket', { ...node, sync: 'true', le: '+Inf' })).toBeGreaterThanOrEqual(1);

    expect(valueOf(after, 'tessera_documents', { index: '/metered/' })).toBe(7);
    expect(valueOf(after, 'tessera_index_bytes', { index: '/metered/' })).toBeGreaterThan(0);
    expect(valueOf(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it("the shard copies' search index: flushes and merges (and their failures) per node, segments and write buffers per index", async () => {
    expect((await call(server, 'PUT', '/indexed/1', { a: 1 })).status).toBe(200);
    const families = await scrape();
    expect(Object.fromEntries(['tessera_index_flushes_total', 'tessera_index_flush_failures_total', 'tessera_index_merges_total',
      'tessera_index_merge_failures_total', 'tessera_index_flush_failing_copies', 'tessera_index_segments', 'tessera_index_write_buffer_bytes']
      .map((n) => [n, families.get(n)?.type]))).toEqual({
      tessera_index_flushes_total: 'counter',
      tessera_index_flush_failures_total: 'counter',
      tessera_index_merges_total: 'counter',
      tessera_index_merge_failures_total: 'counter',
      tessera_index_flush_failing_copies: 'gauge',
      tessera_index_segments: 'gauge',
      tessera_index_write_buffer_bytes: 'gauge',
    });
    const node = { node: 'node1' };
    expect(valueOf(families, 'tessera_index_flushes_total', node)).toBeGreaterThanOrEqual(0);
    expect(valueOf(families, 'tessera_index_flush_failures_total', node)).toBe(0);
    expect(valueOf(families, 'tessera_index_merge_failures_total', node)).toBe(0);
    expect(valueOf(families, 'tessera_index_flush_failing_copies', node)).toBe(0);
    // The document is in a write buffer or, once the buffer idled, in a segment.
    const indexed = { index: '/indexed/' };
    expect(valueOf(families, 'tessera_index_write_buffer_bytes', indexed) + valueOf(families, 'tessera_index_segments', indexed)).toBeGreaterThan(0);
    expect((await call(server, 'GET', '/readyz')).status).toBe(200);
  });

  it('health endpoints answer GET and HEAD (other methods: 405); a started server with its copies open is ready', async () => {
    expect((await call(server, 'GET', '/healthz')).json).toEqual({ status: 'ok' });
    await waitReady(server);
    expect((await call(server, 'GET', '/readyz')).json).toEqual({ status: 'ready' });
    expect((await call(server, 'HEAD', '/readyz')).status).toBe(200);
    const refused = await call(server, 'POST', '/healthz', { a: 1 });
    expect(refused.status).toBe(405);
    expect(refused.json.message).toBe('Method Not Allowed: Method POST is not allowed on a health endpoint');
    expect((await call(server, 'DELETE', '/readyz')).status).toBe(405);
  });

  it('docs/operations.md lists every metric, as generated from the registry', async () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const table = /<!-- metrics-reference:start -->\n([\s\S]*?)\n<!-- metrics-reference:end -->/.exec(doc)?.[1];
    // Regenerate with: node --input-type=module -e "import('@tessera/coordinator').then(async (m) => console.log(await m.metricsReference()))"
    const generated = await metricsReference();
    // Some of prom-client's process metrics exist on Linux only: elsewhere compare Tessera's own.
    const ours = (text: string | undefined) => (text ?? '').split('\n').filter((l) => !l.startsWith('| `process_') && !l.startsWith('| `nodejs_'));
    if (process.platform === 'linux') expect(table).toBe(generated);
    else expect(ours(table)).toEqual(ours(generated));
  });
});

describe('/:metrics of a cluster (shard nodes in their own processes)', () => {
  it('the coordinator gathers commit times and bytes from every node over RPC, and times its WebSocket calls', async () => {
    const cluster = await startCluster({ nodes: 2 });
    try {
      for (let i = 0; i < 8; i++) expect((await call(cluster, 'PUT', `/spread/${i}?commit=true`, { i })).status).toBe(200);
      const metrics = parsePrometheusText((await call(cluster, 'GET', '/:metrics')).text);
      for (const node of ['node1', 'node2']) {
        expect(valueOf(metrics, 'tessera_storage_commit_duration_seconds_count', { node, sync: 'true' })).toBeGreaterThanOrEqual(1);
      }
      expect(valueOf(metrics, 'tessera_documents', { index: '/spread/' })).toBe(8);
      expect(valueOf(metrics, 'tessera_index_bytes', { index: '/spread/' })).toBeGreaterThan(0);
      expect(valueOf(metrics, 'tessera_rpc_call_duration_seconds_count', { method: 'doc.write' })).toBeGreaterThanOrEqual(8);
    } finally {
      expect(await cluster.stop()).toBe(0);
      removeDir(cluster.dataDir);
    }
  });
});

describe('logging', () => {
  it('--log-pretty loads pino-pretty when installed, else refuses to start with a clear message (exit 2)', async () => {
    const dataDir = tempDataDir();
    try {
      let installed = true;
      try {
        createRequire(join(REPO_ROOT, 'packages/cli/package.json')).resolve('pino-pretty');
      } catch {
        installed = false;
      }
      if (installed) {
        // Pretty logs are lines for people: the server says it listens, and not in JSON.
        const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', dataDir, '--log-pretty'], { stdio: ['ignore', 'pipe', 'inherit'] });
        const exited = new Promise((resolve) => child.once('exit', resolve));
        try {
          const listening = await new Promise<string>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no listening line in 15 s')), 15_000);
            createInterface({ input: child.stdout }).on('line', (line) => {
              if (!/\blistening\b/.test(line)) return;
              clearTimeout(timer);
              resolve(line);
            });
          });
          expect(listening).toMatch(/^\[.+\] INFO \(\d+\): listening/);
        } finally {
          child.kill('SIGTERM');
          await exited;
        }
      } else {
        const r = await runCli(['serve', '--port', '0', '--data', dataDir, '--log-pretty']);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain('--log-pretty needs the pino-pretty package, which is not installed');
        expect(r.stdout).toBe('');
      }
    } finally {
      removeDir(dataDir);
    }
  });

  it('TESSERA_LOG_PRETTY takes true or false; anything else is a configuration error naming it', async () => {
    const off = await runCli(['serve', '--print-config'], { env: { TESSERA_LOG_PRETTY: 'false' } });
    expect(off.code).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ logPretty: false });
    const bad = await runCli(['serve', '--print-config'], { env: { TESSERA_LOG_PRETTY: 'sometimes' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('TESSERA_LOG_PRETTY=sometimes: expected true or false');
  });

  it('the server packages write nothing with console.* (logs go through pino)', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.ts$/.test(entry.name) && !/\.(test|bench|fixture|conformance)\.ts$/.test(entry.name)) {
          readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
            if (/\bconsole\.(log|info|warn|error|debug|trace)\b/.test(line)) offenders.push(`${path}:${i + 1}`);
          });
        }
      }
    };
    for (const pkg of readdirSync(join(REPO_ROOT, 'packages'))) walk(join(REPO_ROOT, 'packages', pkg, 'src'));
    expect(offenders).toEqual([]);
  });
});
