// Cluster benchmark (not a test): the embedded server (`tessera serve`) and
// clusters on loopback (`tessera coordinator` and `tessera node` processes,
// temporary data directories), each measured with autocannon against the
// HTTP ports: (a) PUT of small documents with distinct IDs — write
// throughput including replication — and (b) SEARCH of a term query over
// 5,000 preloaded small documents. Indexes have 3 shards (--shards N) and
// min(1, nodes - 1) replicas (--replicas N: min(N, nodes - 1); none for the
// embedded server). Prints req/s
// with p50/p99 per setup and the ratio to the embedded server of the same
// run (the cost of the RPC hop). Every process started is stopped at the
// end, on failure and on Ctrl-C. Run through scripts/bench/cluster (which
// builds).
//
// By default the clusters have 1, 2 and 3 shard nodes and one coordinator
// (SETUPS). --coordinators 1,2,3 measures instead clusters of --nodes
// shard nodes (default 6) with 1, 2 and 3 coordinators sharing a local
// etcd (started here, as scripts/cluster --etcd does; implied for more than
// one coordinator, --etcd puts a single coordinator on etcd too). The load
// is spread over every coordinator: autocannon's connection i goes to
// coordinator i mod N (round-robin); the preload goes through the first.
// With --coordinators, a --setups list without `embedded` leaves out the
// embedded server (its other entries are ignored).
//
// Every process runs with the node flags and malloc environment of `npm start`
// and scripts/cluster (packages/cli/src/node-flags.ts): what is measured is
// what runs.
//
// Besides throughput it prints the CPU time each role spent per request
// (user + system, from /proc/PID/stat, over each load): the embedded server,
// the coordinators together, the nodes together. Their sum is what one
// request costs the machine, so cores ÷ that sum bounds the throughput a
// machine with more cores can reach, and the coordinators' share says what
// each added coordinator takes off: the figure to read on a machine with
// fewer cores than processes, where throughput itself cannot scale. With
// etcd, the elected coordinator's own share is shown too: every write's
// relay runs there, so it bounds write throughput however many coordinators
// take the requests.
//
//   node scripts/bench/cluster.mjs [--coordinators 1,2,3] [--nodes 6] [--etcd]
//     [--duration S] [--connections N] [--preload N] [--setups embedded,1,2,3]
//     [--schema-fields N] [--shards N] [--replicas N] [--profile DIR]
//   env (the same defaults): DURATION (seconds per load, 6), CONNECTIONS (50),
//     PRELOAD (5000), SETUPS (embedded,1,2,3), NODES (6), COORDINATORS (unset),
//     SCHEMA_FIELDS (0: fields the indexes' schema declares besides the
//     documents' three, as a real index's schema has: the schema is what
//     each shard call names or carries)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';
import { cpuSeconds, createIndex, ioSyscalls, loadFigures, markdownTable, putLoad, searchLoad, stopOnInterrupt } from './load-lib.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(ROOT, 'packages/cli/dist/main.js');
const { values: flags } = parseArgs({
  options: {
    coordinators: { type: 'string', default: process.env.COORDINATORS },
    nodes: { type: 'string', default: process.env.NODES ?? '6' },
    etcd: { type: 'boolean', default: false },
    duration: { type: 'string', default: process.env.DURATION ?? '6' },
    connections: { type: 'string', default: process.env.CONNECTIONS ?? '50' },
    preload: { type: 'string', default: process.env.PRELOAD ?? '5000' },
    'schema-fields': { type: 'string', default: process.env.SCHEMA_FIELDS ?? '0' },
    replicas: { type: 'string', default: process.env.REPLICAS ?? '1' },
    shards: { type: 'string', default: process.env.SHARDS ?? '3' },
    setups: { type: 'string', default: process.env.SETUPS },
    profile: { type: 'string', default: process.env.PROFILE },
  },
  strict: true,
});
function positive(name, text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`bench: --${name} must be a positive integer, not '${text}'\n`);
    process.exit(2);
  }
  return n;
}
const DURATION = positive('duration', flags.duration);
const CONNECTIONS = positive('connections', flags.connections);
const PRELOAD = positive('preload', flags.preload);
const SHARDS = positive('shards', flags.shards);
function atLeastZero(name, text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`bench: --${name} must be an integer of at least 0, not '${text}'\n`);
    process.exit(2);
  }
  return n;
}
const SCHEMA_FIELDS = atLeastZero('schema-fields', flags['schema-fields']);
const REPLICAS = atLeastZero('replicas', flags.replicas);
/**
 * What to measure: 'embedded', or { nodes, coordinators, etcd }. --coordinators
 * 1,2,3: the embedded server, then --nodes nodes under 1, 2 and 3 coordinators
 * (etcd for more than one, or for all with --etcd); otherwise SETUPS: the
 * embedded server and clusters of 1, 2 and 3 nodes under one coordinator.
 */
const SETUPS = flags.coordinators !== undefined
  ? [...(flags.setups ?? 'embedded').split(',').filter((s) => s === 'embedded'),
    ...flags.coordinators.split(',').map((c) => {
      const coordinators = positive('coordinators', c);
      return { nodes: positive('nodes', flags.nodes), coordinators, etcd: flags.etcd || coordinators > 1 };
    })]
  : (flags.setups ?? 'embedded,1,2,3').split(',').map((s) =>
    (s === 'embedded' ? s : { nodes: positive('setups', s), coordinators: 1, etcd: flags.etcd }));
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/** Every child still running, so that any exit path stops them. */
const children = new Set();
const dataDirs = new Set();
/** The role a child plays, for CPU accounting: 'serve', 'coordinator' or 'node'. */
function roleOf(name) {
  return name.replace(/\d+$/, '');
}

/** The elected coordinator's name in a setup on etcd (set by startSetup): its CPU is also shown on its own. */
let electedName;

/** `measure(pid)` summed per role over every running child; `elected` is the elected coordinator's alone (also counted in `coordinator`). */
function byRole(measure) {
  const sums = {};
  for (const entry of children) {
    const value = measure(entry.child.pid);
    sums[roleOf(entry.name)] = (sums[roleOf(entry.name)] ?? 0) + value;
    if (entry.name === electedName) sums.elected = value;
  }
  return sums;
}

/** What each role spent per request over a load, from counters read before and after it. */
function perRequest(before, after, requests, scale = 1) {
  return Object.fromEntries(Object.keys(after).map((role) => [role, ((after[role] - (before[role] ?? 0)) * scale) / Math.max(1, requests)]));
}

/** Runs `load` and adds what each role spent per request to its figures: CPU µs and read/write system calls. */
async function withCpu(load) {
  const [cpuBefore, callsBefore] = [byRole(cpuSeconds), byRole(ioSyscalls)];
  const result = loadFigures(await load());
  result.cpuUsPerRequest = perRequest(cpuBefore, byRole(cpuSeconds), result.requests, 1e6);
  result.syscallsPerRequest = perRequest(callsBefore, byRole(ioSyscalls), result.requests);
  return result;
}

/** The folder under --profile of the setup being measured. */
let profileSetup = '';

/** The etcd of the current setup, stopped after every tessera process. */
let etcd;

function startProcess(name, args) {
  // --profile DIR: each process writes a V8 CPU profile at its exit, under DIR/<setup>/<name>/.
  const profile = flags.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(resolve(flags.profile), profileSetup, name)];
  const child = spawn(process.execPath, [...profile, ...SERVER_NODE_FLAGS, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...SERVER_ENV } });
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
  // etcd last: the coordinators revoke their leases there on the way out.
  await etcd?.stop();
  etcd = undefined;
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  dataDirs.clear();
}

/** Start a setup; resolves with its coordinators' HTTP base URLs (the server's) and the replicas its indexes get. */
async function startSetup(setup) {
  electedName = undefined;
  profileSetup = setup === 'embedded' ? 'embedded' : `${setup.nodes}n-${setup.coordinators}c`;
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-cluster-'));
  dataDirs.add(dir);
  const common = ['--log-level', 'info'];
  if (setup === 'embedded') {
    const server = startProcess('serve', ['serve', '--port', '0', '--data', dir, ...common]);
    const { port } = await listening(server);
    return { urls: [`http://127.0.0.1:${port}`], replicas: 0 };
  }
  if (setup.etcd) {
    const { startEtcd } = await import(pathToFileURL(join(ROOT, 'scripts/etcd.mjs')).href);
    etcd = await startEtcd({ dataDir: join(dir, 'etcd') });
  }
  const coordinatorNames = Array.from({ length: setup.coordinators }, (_, i) => `coordinator${i + 1}`);
  const coordinators = await Promise.all(coordinatorNames.map((name) => listening(startProcess(name, [
    'coordinator', '--port', '0', '--rpc-port', '0', '--data', join(dir, name), ...common,
    ...(setup.etcd ? ['--etcd', etcd.endpoint, '--name', name] : []),
  ]))));
  const joinUrl = coordinators.map(({ rpcPort }) => `ws://127.0.0.1:${rpcPort}`).join(',');
  const names = Array.from({ length: setup.nodes }, (_, i) => `node${i + 1}`);
  // With etcd, primaries relay the writes every coordinator sends them straight to their replicas (docs/cluster.md).
  const relay = setup.etcd ? ['--relay-port', '0'] : [];
  for (const name of names) startProcess(name, ['node', '--join', joinUrl, '--name', name, '--data', join(dir, name), ...common, ...relay]);
  const urls = coordinators.map(({ port }) => `http://127.0.0.1:${port}`);
  // Every coordinator sees every node, one is elected (with etcd), and each is ready.
  for (const url of urls) {
    await waitFor(`every node active at ${url}`, async () => {
      const list = await (await fetch(`${url}/.nodes`)).json();
      return names.every((name) => list.some((n) => n.name === name && n.active)) &&
        (!setup.etcd || list.some((n) => n.role === 'coordinator' && n.leader));
    });
    await waitFor(`${url}/readyz`, async () => (await fetch(`${url}/readyz`)).status === 200);
  }
  if (setup.etcd) {
    electedName = (await (await fetch(`${urls[0]}/.nodes`)).json()).find((n) => n.role === 'coordinator' && n.leader)?.name;
    process.stderr.write(`   elected: ${electedName ?? 'none'}\n`);
  }
  return { urls, replicas: Math.min(REPLICAS, setup.nodes - 1) };
}

function label(setup, replicas) {
  if (setup === 'embedded') return 'embedded (serve)';
  const nodes = `${setup.nodes} node${setup.nodes === 1 ? '' : 's'}`;
  const coordinators = `${setup.coordinators} coordinator${setup.coordinators === 1 ? '' : 's'}${setup.etcd ? ' on etcd' : ''}`;
  return `cluster, ${nodes}, ${coordinators} (r=${replicas})`;
}

function describe(setup) {
  return setup === 'embedded' ? 'embedded' : `${setup.nodes} nodes, ${setup.coordinators} coordinator(s)${setup.etcd ? ', etcd' : ''}`;
}

async function measure(setup) {
  const { urls, replicas } = await startSetup(setup);
  const [url] = urls;
  await createIndex(url, '/bench-write/', SHARDS, replicas, SCHEMA_FIELDS);
  await createIndex(url, '/bench-search/', SHARDS, replicas, SCHEMA_FIELDS);
  // Through one coordinator: autocannon's `amount` is not split right over several URLs.
  const preload = await putLoad(CONNECTIONS, url, '/bench-search/', 's', { amount: PRELOAD });
  if (preload.non2xx + preload.errors > 0) throw new Error(`preload: ${preload.non2xx} non-2xx, ${preload.errors} errors`);
  const commit = await fetch(`${url}/bench-search/?commit`, { method: 'COMMIT' });
  await commit.arrayBuffer();
  for (const each of urls) {
    const count = await (await fetch(`${each}/bench-search/`, { method: 'COUNT' })).json();
    if (count.total !== PRELOAD) throw new Error(`preloaded ${PRELOAD} documents, COUNT at ${each} says ${count.total}`);
  }
  // Every coordinator takes a share of the connections: connection i goes to urls[i mod n].
  const write = await withCpu(() => putLoad(CONNECTIONS, urls, '/bench-write/', 'w', { duration: DURATION }));
  const search = await withCpu(() => searchLoad(CONNECTIONS, urls.map((u) => `${u}/bench-search/`), DURATION));
  await stopAll();
  return { setup: label(setup, replicas), write, search };
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
  return markdownTable(head, body);
}

/** CPU µs per request by role, and their sum: what one request costs the machine. */
function cpuTable(rows) {
  const head = ['setup', 'load', 'serve µs', 'coordinators µs', 'of which the elected one µs', 'nodes µs', 'total µs/request', 'I/O syscalls/request (coordinators, nodes)'];
  const body = [];
  for (const r of rows) {
    for (const [load, f] of [['PUT', r.write], ['SEARCH', r.search]]) {
      const cpu = f.cpuUsPerRequest;
      const cell = (role) => (cpu[role] === undefined ? '' : cpu[role].toFixed(0));
      const total = Object.entries(cpu).reduce((sum, [role, us]) => (role === 'elected' ? sum : sum + us), 0);
      const calls = f.syscallsPerRequest;
      const syscalls = ['serve', 'coordinator', 'node'].filter((role) => calls[role] !== undefined).map((role) => calls[role].toFixed(1)).join(', ');
      body.push([r.setup, load, cell('serve'), cell('coordinator'), cell('elected'), cell('node'), total.toFixed(0), syscalls]);
    }
  }
  return markdownTable(head, body);
}

const interrupted = stopOnInterrupt(stopAll);

try {
  const rows = [];
  for (const setup of SETUPS) {
    if (interrupted()) break;
    process.stderr.write(`== ${describe(setup)}: ${DURATION} s of PUT, ${DURATION} s of SEARCH, ${CONNECTIONS} connections\n`);
    rows.push(await measure(setup));
  }
  process.stdout.write(`${table(rows)}\n`);
  process.stdout.write(`PUT: small documents, distinct IDs, ${SHARDS} shards; SEARCH: {colour: red} over ${PRELOAD} documents, _limit 10. ` +
    `vs embedded: throughput ratio to \`tessera serve\`.\n\n`);
  process.stdout.write(`${cpuTable(rows)}\nCPU (user + system) each role spent per request over the load, and its read and write system calls (/proc/PID/io: sockets, files); the client's own are not counted.\n`);
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
