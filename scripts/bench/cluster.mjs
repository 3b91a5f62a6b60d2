// Cluster benchmark (not a test): the embedded server (`tessera serve`) and
// clusters of 1, 2 and 3 shard nodes (a `tessera coordinator` and `tessera
// node` processes on loopback, temporary data directories), each measured
// with autocannon against the HTTP port: (a) PUT of small documents with
// distinct IDs — write throughput including replication — and (b) SEARCH of
// a term query over 5,000 preloaded small documents. Indexes have 3 shards
// and min(1, nodes - 1) replicas (none for the embedded server). Prints
// req/s with p50/p99 per setup and the ratio to the embedded server (the
// cost of the RPC hop). Every process started is stopped at the end, on
// failure and on Ctrl-C. Run through scripts/bench/cluster (which builds).
//
//   env: DURATION (seconds per load, 6), CONNECTIONS (50), PRELOAD (5000), SETUPS (embedded,1,2,3)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(ROOT, 'packages/cli/dist/main.js');
const DURATION = Number(process.env.DURATION ?? 6);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const PRELOAD = Number(process.env.PRELOAD ?? 5000);
const SETUPS = (process.env.SETUPS ?? 'embedded,1,2,3').split(',');
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Every child still running, so that any exit path stops them. */
const children = new Set();
const dataDirs = new Set();

function startProcess(name, args) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const entry = { name, child, lines: [], exited: new Promise((res) => child.once('exit', (code, signal) => res(code ?? signal))) };
  children.add(entry);
  void entry.exited.then(() => children.delete(entry));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      try {
        entry.lines.push(JSON.parse(line));
      } catch {
        if (stream === child.stderr) process.stderr.write(`[${name}] ${line}\n`);
      }
    });
  }
  return entry;
}

async function waitFor(what, check, timeoutMs = START_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function listening(entry) {
  return waitFor(`${entry.name} to listen`, () => {
    if (entry.child.exitCode !== null) throw new Error(`${entry.name} exited (${entry.child.exitCode})`);
    return entry.lines.find((l) => l.msg === 'listening');
  });
}

async function stopAll() {
  await Promise.all([...children].map(async (entry) => {
    entry.child.kill('SIGTERM');
    const timer = setTimeout(() => entry.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await entry.exited;
    clearTimeout(timer);
  }));
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  dataDirs.clear();
}

/** Start a setup; resolves with its HTTP base URL and the replicas its indexes get. */
async function startSetup(setup) {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-cluster-'));
  dataDirs.add(dir);
  const common = ['--log-level', 'info'];
  if (setup === 'embedded') {
    const server = startProcess('serve', ['serve', '--port', '0', '--data', dir, ...common]);
    const { port } = await listening(server);
    return { url: `http://127.0.0.1:${port}`, replicas: 0 };
  }
  const nodes = Number(setup);
  const coordinator = startProcess('coordinator', ['coordinator', '--port', '0', '--rpc-port', '0', '--data', join(dir, 'coordinator'), ...common]);
  const { port, rpcPort } = await listening(coordinator);
  const names = Array.from({ length: nodes }, (_, i) => `node${i + 1}`);
  for (const name of names) startProcess(name, ['node', '--join', `ws://127.0.0.1:${rpcPort}`, '--name', name, '--data', join(dir, name), ...common]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor('every node active', async () => {
    const list = await (await fetch(`${url}/.nodes`)).json();
    return names.every((name) => list.some((n) => n.name === name && n.active));
  });
  return { url, replicas: Math.min(1, nodes - 1) };
}

async function createIndex(url, path, replicas) {
  const res = await fetch(`${url}${path}`, {
    method: 'PUT', headers: JSON_HEADERS,
    body: JSON.stringify({ _settings: { number_of_shards: 3, number_of_replicas: replicas } }),
  });
  if (res.status !== 200) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
}

function doc(i) {
  return JSON.stringify({ title: `document ${i}`, colour: i % 4 === 0 ? 'red' : 'blue', n: i });
}

/** The autocannon run in progress, stopped by Ctrl-C. */
let current;

function run(options) {
  return new Promise((res, rej) => {
    current = autocannon({ connections: CONNECTIONS, ...options }, (err, result) => {
      current = undefined;
      if (err) rej(err);
      else res(result);
    });
  });
}

/** PUTs of distinct IDs: `duration` seconds, or exactly `amount` requests. */
function puts(url, index, prefix, limits) {
  let next = 0;
  return run({
    url, ...limits,
    requests: [{ method: 'PUT', headers: JSON_HEADERS, setupRequest: (req) => {
      const i = next++;
      return { ...req, path: `${index}${prefix}${i}`, body: doc(i) };
    } }],
  });
}

function figures(result) {
  const failed = result.non2xx + result.errors + result.timeouts;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, failed };
}

async function measure(setup) {
  const { url, replicas } = await startSetup(setup);
  await createIndex(url, '/bench-write/', replicas);
  await createIndex(url, '/bench-search/', replicas);
  const preload = await puts(url, '/bench-search/', 's', { amount: PRELOAD });
  if (preload.non2xx + preload.errors > 0) throw new Error(`preload: ${preload.non2xx} non-2xx, ${preload.errors} errors`);
  const commit = await fetch(`${url}/bench-search/?commit`, { method: 'COMMIT' });
  await commit.arrayBuffer();
  const count = await (await fetch(`${url}/bench-search/`, { method: 'COUNT' })).json();
  if (count.total !== PRELOAD) throw new Error(`preloaded ${PRELOAD} documents, COUNT says ${count.total}`);
  const write = figures(await puts(url, '/bench-write/', 'w', { duration: DURATION }));
  const search = figures(await run({
    // autocannon sends only standard methods: SEARCH goes as the API's method override.
    url: `${url}/bench-search/`, duration: DURATION, method: 'POST', headers: { ...JSON_HEADERS, 'x-http-method-override': 'SEARCH' },
    body: JSON.stringify({ _query: { colour: 'red' }, _limit: 10 }),
  }));
  await stopAll();
  return { setup: setup === 'embedded' ? 'embedded (serve)' : `cluster, ${setup} node${setup === '1' ? '' : 's'} (r=${replicas})`, write, search };
}

function table(rows) {
  const base = rows.find((r) => r.setup.startsWith('embedded'));
  const ratio = (v, b) => (b === undefined ? '' : `${(v / b).toFixed(2)}×`);
  const head = ['setup', 'PUT docs/s', 'p50 ms', 'p99 ms', 'vs embedded', 'SEARCH req/s', 'p50 ms', 'p99 ms', 'vs embedded', 'failed'];
  const body = rows.map((r) => [
    r.setup, r.write.rps.toFixed(0), String(r.write.p50), String(r.write.p99), ratio(r.write.rps, base?.write.rps),
    r.search.rps.toFixed(0), String(r.search.p50), String(r.search.p99), ratio(r.search.rps, base?.search.rps),
    String(r.write.failed + r.search.failed),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) return;
  interrupted = true;
  current?.stop();
  process.stderr.write('\ninterrupted: stopping every process\n');
  void stopAll().finally(() => process.exit(130));
});
process.on('SIGTERM', () => void stopAll().finally(() => process.exit(143)));

try {
  const rows = [];
  for (const setup of SETUPS) {
    if (interrupted) break;
    process.stderr.write(`== ${setup}: ${DURATION} s of PUT, ${DURATION} s of SEARCH, ${CONNECTIONS} connections\n`);
    rows.push(await measure(setup));
  }
  process.stdout.write(`${table(rows)}\n`);
  process.stdout.write(`PUT: small documents, distinct IDs, 3 shards; SEARCH: {colour: red} over ${PRELOAD} documents, _limit 10. ` +
    `vs embedded: throughput ratio to \`tessera serve\`.\n`);
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
