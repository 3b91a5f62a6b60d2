// Shard-workers benchmark (not a test): PUT and SEARCH throughput of the
// embedded server (`tessera serve`) with its shard copies on the main thread
// (--shard-workers 0) and on worker threads (--shard-workers N), each held
// to one core (`taskset -c 0`) and given every core, in the same run.
// Prints req/s with p50/p99 per setup, and the ratios that matter: workers ÷
// main thread on the same cores, and all cores ÷ one core in the same mode
// (the scaling figure: issue 24 asks ≥ 4× on 16 cores with workers); then
// the server's CPU per request: its main thread's (the coordinator's share,
// which bounds the scaling whatever N is) and the whole process's — steadier
// than throughput on a shared machine.
//
// Loads, through autocannon: (a) PUT of small documents with distinct IDs
// into an index of --shards shards; (b) SEARCH of a term query ({colour:
// red}, _limit 10) over --preload documents of another such index. The
// server runs with the node flags and malloc environment of `npm start`
// (packages/cli/src/node-flags.ts). The client (this process) is not pinned:
// on a machine with few cores it competes with the server for them, which
// lowers the all-cores figures — read them with that in mind.
//
//   node scripts/bench/shard-workers.mjs [--workers N] [--shards N]
//     [--duration S] [--connections N] [--preload N] [--modes 0,N]
//     [--cpus one,all] [--log-level info] [--malloc-arena-max N] [--schema-fields N]
//   env (the same defaults): DURATION (seconds per load, 6), CONNECTIONS (50),
//     PRELOAD (5000), WORKERS (one per core up to --shards, at least 2),
//     SHARDS (the larger of 5 and the cores), SCHEMA_FIELDS (0: fields the
//     indexes' schema declares besides the documents' three, as a real
//     index's schema has: the schema is what each shard call names or carries)
//
// `--cpus one` alone, or `all` alone, measures half the grid; without
// taskset (not Linux) only `all` is measured. Every server started is
// stopped at the end, on failure and on Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';
import { cpuSeconds, createIndex, loadFigures, markdownTable, putLoad, searchLoad, stopOnInterrupt } from './load-lib.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(ROOT, 'packages/cli/dist/main.js');
const CORES = availableParallelism();
const { values: flags } = parseArgs({
  options: {
    workers: { type: 'string', default: process.env.WORKERS },
    shards: { type: 'string', default: process.env.SHARDS ?? String(Math.max(5, CORES)) },
    duration: { type: 'string', default: process.env.DURATION ?? '6' },
    connections: { type: 'string', default: process.env.CONNECTIONS ?? '50' },
    preload: { type: 'string', default: process.env.PRELOAD ?? '5000' },
    'schema-fields': { type: 'string', default: process.env.SCHEMA_FIELDS ?? '0' },
    modes: { type: 'string' },
    cpus: { type: 'string', default: 'one,all' },
    'log-level': { type: 'string', default: 'info' },
    'malloc-arena-max': { type: 'string' },
  },
  strict: true,
});

function count(name, text, min = 1) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`bench: --${name} must be an integer of at least ${min}, not '${text}'\n`);
    process.exit(2);
  }
  return n;
}
const SHARDS = count('shards', flags.shards);
const WORKERS = count('workers', flags.workers ?? String(Math.max(2, Math.min(CORES, SHARDS))));
const DURATION = count('duration', flags.duration);
const CONNECTIONS = count('connections', flags.connections);
const PRELOAD = count('preload', flags.preload);
const SCHEMA_FIELDS = count('schema-fields', flags['schema-fields'], 0);
const MODES = (flags.modes ?? `0,${WORKERS}`).split(',').map((m) => count('modes', m, 0));
const HAS_TASKSET = spawnSync('taskset', ['--version']).status === 0;
const CPU_SETS = flags.cpus.split(',').filter((c) => {
  if (c !== 'one' && c !== 'all') {
    process.stderr.write(`bench: --cpus takes one, all or both, not '${c}'\n`);
    process.exit(2);
  }
  if (c === 'one' && !HAS_TASKSET) process.stderr.write('bench: no taskset here: the one-core setups are skipped\n');
  return c === 'all' || HAS_TASKSET;
});
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/** The server running now (one at a time), and its data directory. */
let server;

/** A port free now (the server is given it: at --log-level warn it does not log the one it got). */
function freePort() {
  return new Promise((res, rej) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => res(port));
    }).on('error', rej);
  });
}

/** Start `tessera serve` (on core 0 alone with cpus 'one') and wait until it is ready; resolves with its URL. */
async function startServer(workers, cpus) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-workers-'));
  const port = await freePort();
  const node = [...SERVER_NODE_FLAGS, CLI, 'serve', '--port', String(port), '--data', dataDir, '--log-level', flags['log-level'], '--shard-workers', String(workers)];
  const [command, args] = cpus === 'one' ? ['taskset', ['-c', '0', process.execPath, ...node]] : [process.execPath, node];
  const env = { ...process.env, ...SERVER_ENV, ...(flags['malloc-arena-max'] === undefined ? {} : { MALLOC_ARENA_MAX: flags['malloc-arena-max'] }) };
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'], env });
  const exited = new Promise((res) => child.once('exit', (code, signal) => res(code ?? signal)));
  server = { child, exited, dataDir };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before it was ready`);
    const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) return url;
    if (Date.now() > deadline) throw new Error('the server was not ready in time');
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function stopServer() {
  if (server === undefined) return;
  const { child, exited, dataDir } = server;
  server = undefined;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  const code = await exited;
  clearTimeout(timer);
  rmSync(dataDir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`the server exited with ${code} on SIGTERM`);
}

async function measure(workers, cpus) {
  const url = await startServer(workers, cpus);
  try {
    await createIndex(url, '/bench-write/', SHARDS, 0, SCHEMA_FIELDS);
    await createIndex(url, '/bench-search/', SHARDS, 0, SCHEMA_FIELDS);
    const preload = await putLoad(CONNECTIONS, url, '/bench-search/', 's', { amount: PRELOAD });
    if (preload.non2xx + preload.errors > 0) throw new Error(`preload: ${preload.non2xx} non-2xx, ${preload.errors} errors`);
    await (await fetch(`${url}/bench-search/?commit`, { method: 'COMMIT' })).arrayBuffer();
    const { total } = await (await fetch(`${url}/bench-search/`, { method: 'COUNT' })).json();
    if (total !== PRELOAD) throw new Error(`preloaded ${PRELOAD} documents, COUNT says ${total}`);
    const write = await withCpu(() => putLoad(CONNECTIONS, url, '/bench-write/', 'w', { duration: DURATION }));
    const search = await withCpu(() => searchLoad(CONNECTIONS, [`${url}/bench-search/`], DURATION));
    return { workers, cpus, write, search };
  } finally {
    await stopServer();
  }
}

/**
 * Runs `load` and adds the server's CPU µs per request over it: its main
 * thread's (the coordinator's share, which every worker waits on: what
 * bounds the scaling) and the whole process's. taskset execs the server, so
 * the child's pid is the server's.
 */
async function withCpu(load) {
  const { pid } = server.child;
  const [mainBefore, processBefore] = [cpuSeconds(pid, pid), cpuSeconds(pid)];
  const result = loadFigures(await load());
  const perRequest = (seconds) => (seconds * 1e6) / Math.max(1, result.requests);
  result.mainUs = perRequest(cpuSeconds(pid, pid) - mainBefore);
  result.processUs = perRequest(cpuSeconds(pid) - processBefore);
  return result;
}

function cpusLabel(cpus) {
  return cpus === 'one' ? '1 core (taskset -c 0)' : `all ${CORES} cores`;
}

function table(rows) {
  const find = (workers, cpus) => rows.find((r) => r.workers === workers && r.cpus === cpus);
  const ratio = (v, base) => (base === undefined || base === 0 ? '' : `${(v / base).toFixed(2)}×`);
  const head = ['shard workers', 'cores', 'PUT docs/s', 'p50 ms', 'p99 ms', 'vs 0 workers', 'vs 1 core',
    'SEARCH req/s', 'p50 ms', 'p99 ms', 'vs 0 workers', 'vs 1 core', 'failed'];
  const body = rows.map((r) => {
    const inProcess = r.workers === 0 ? undefined : find(0, r.cpus);
    const oneCore = r.cpus === 'one' ? undefined : find(r.workers, 'one');
    return [
      String(r.workers), cpusLabel(r.cpus),
      r.write.rps.toFixed(0), String(r.write.p50), String(r.write.p99), ratio(r.write.rps, inProcess?.write.rps), ratio(r.write.rps, oneCore?.write.rps),
      r.search.rps.toFixed(0), String(r.search.p50), String(r.search.p99), ratio(r.search.rps, inProcess?.search.rps), ratio(r.search.rps, oneCore?.search.rps),
      String(r.write.failed + r.search.failed),
    ];
  });
  return markdownTable(head, body);
}

/** CPU µs per request: the main thread's and the process's. */
function cpuTable(rows) {
  const head = ['shard workers', 'cores', 'PUT main thread µs', 'PUT process µs', 'SEARCH main thread µs', 'SEARCH process µs'];
  const body = rows.map((r) => [String(r.workers), cpusLabel(r.cpus), ...[r.write, r.search].flatMap((f) => [f.mainUs.toFixed(0), f.processUs.toFixed(0)])]);
  return markdownTable(head, body);
}

const interrupted = stopOnInterrupt(stopServer);

try {
  const rows = [];
  for (const cpus of CPU_SETS) {
    for (const workers of MODES) {
      if (interrupted()) break;
      process.stderr.write(`== --shard-workers ${workers}, ${cpusLabel(cpus)}: ${DURATION} s of PUT, ${DURATION} s of SEARCH, ${CONNECTIONS} connections\n`);
      rows.push(await measure(workers, cpus));
    }
  }
  process.stdout.write(`${table(rows)}\n`);
  process.stdout.write(`PUT: small documents, distinct IDs; SEARCH: {colour: red} over ${PRELOAD} documents, _limit 10; indexes of ${SHARDS} shards, ` +
    `no replicas. vs 0 workers: throughput ÷ that of --shard-workers 0 on the same cores; vs 1 core: ÷ the same mode held to one core. ` +
    `${CORES} cores seen; the client (autocannon, this process) is not pinned.\n\n`);
  process.stdout.write(`${cpuTable(rows)}\nCPU (user + system) of the server per request over each load (/proc): its main thread, and the whole process.\n`);
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await stopServer().catch(() => undefined);
}
