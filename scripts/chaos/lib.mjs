// What the chaos scenarios (scripts/chaos/scenarios/) and the reliability
// scripts share: starting the built `tessera serve` the way `npm start` does
// (SERVER_NODE_FLAGS, SERVER_ENV), a cluster on loopback, one HTTP request
// over node:http, a seeded random generator, bounded waits, paced clients and
// the small statistics the figures need (raw sockets: raw-http.mjs). Run `npx tsc -b` first: servers are
// started from packages/cli/dist.
import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';
import { startEtcd } from '../etcd.mjs';

export { random } from '../bench/bench-lib.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(ROOT, 'packages/cli/dist/main.js');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `promise`'s value, or null when it has not settled within `ms` (the timer is cleared either way, so nothing is left pending). */
export async function within(promise, ms) {
  let timer;
  const timeout = new Promise((res) => { timer = setTimeout(() => res(null), ms); });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `items` picked by a generator from random(seed). */
export function pick(rand, items) {
  return items[Math.floor(rand() * items.length)];
}

/**
 * Spawn `tessera <args>` (with `prefix`: under another program, e.g. strace,
 * whose pid `pid` then is, Tessera's being `serverPid`); resolves once it logs a line whose `msg` is
 * `readyMsg`, with that line as `ready`. `stop()` sends SIGTERM and waits at
 * most `timeoutMs` before SIGKILL; `kill()` sends SIGKILL; both resolve with
 * the exit ({ code, signal, at }).
 */
export async function spawnTessera(args, { env = {}, prefix = [], readyMsg, startTimeoutMs = 60_000 }) {
  const argv = [...prefix, process.execPath, ...SERVER_NODE_FLAGS, CLI, ...args];
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...process.env, ...SERVER_ENV, TESSERA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = [];
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d.toString()).slice(-8192); });
  const exited = new Promise((res) => child.once('exit', (code, signal) => res({ code, signal, at: Date.now() })));
  const ready = await new Promise((res, rej) => {
    // A process that never says it is ready is killed: left running, it would outlive the run.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`tessera ${args[0]} did not log '${readyMsg}' in ${startTimeoutMs} ms; stderr: ${stderr}`));
    }, startTimeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry;
      try { entry = JSON.parse(line); } catch { return; }
      // The latest 10,000 lines: a cluster's coordinators log on for minutes of faults.
      logs.push(entry);
      if (logs.length > 10_000) logs.splice(0, 1000);
      if (entry.msg === readyMsg) { clearTimeout(timer); res(entry); }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      rej(new Error(`tessera ${args[0]} exited (${code ?? signal}) before '${readyMsg}'; stderr: ${stderr}`));
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  // Under a prefix (strace) the signal goes to Tessera itself (the pid it logs): strace would detach and leave it running.
  const serverPid = prefix.length > 0 && Number.isInteger(ready.pid) ? ready.pid : child.pid;
  const signal = (name) => {
    if (!running()) return;
    try {
      process.kill(serverPid, name);
    } catch {
      child.kill(name); // already gone: the wrapper is all that is left
    }
  };
  return {
    child,
    pid: child.pid,
    serverPid,
    ready,
    logs,
    exited,
    alive: running,
    stderr: () => stderr,
    async stop(timeoutMs = 15_000) {
      signal('SIGTERM');
      const exit = await within(exited, timeoutMs);
      if (exit !== null) return exit;
      signal('SIGKILL');
      return exited;
    },
    async kill() {
      signal('SIGKILL');
      return exited;
    },
  };
}

/** Server flags that keep slow-request lines out of the log (scenarios that hold requests on purpose). */
export const SLOW_LOG_OFF = ['--slow-request-ms', '600000'];

/** `tessera serve` on 127.0.0.1, port 0, on `dataDir`, once it listens; `args` adds flags. See spawnTessera. */
export async function startServer({ dataDir, args = [], env = {}, prefix = [], startTimeoutMs }) {
  const proc = await spawnTessera(['serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, ...args],
    { env, prefix, readyMsg: 'listening', startTimeoutMs });
  return { ...proc, port: proc.ready.port, url: `http://127.0.0.1:${proc.ready.port}`, dataDir };
}

/** The etcd key prefix of a chaos cluster. */
const ETCD_PREFIX = '/tessera-chaos';

/**
 * A cluster on loopback, each process with its own directory under
 * `dataDir`: `coordinators` coordinators (HTTP and RPC on ephemeral ports;
 * more than one keep the cluster state in a real etcd, scripts/etcd.mjs,
 * under `dataDir/etcd`, and elect one, as `scripts/cluster --etcd` runs
 * them) and `nodes` shard nodes (node1…) joining every coordinator.
 * Resolves once every coordinator's /.nodes shows every node active (and,
 * with several, one elected). `port` is the first coordinator's HTTP port;
 * `coordinators` and `nodes` map names to processes (`spawnTessera`'s, a
 * coordinator's with `port` and `rpcPort`); `startNode(name)` starts a node
 * again on its directory, `startCoordinator(name)` a coordinator on its
 * directory and RPC port (the nodes redial it); `leader()` is the elected
 * coordinator's name; `stop()` and `kill()` act on every process, etcd
 * last. The nodes named in `relayed` reach each coordinator through a
 * loopback TCP relay of their own (`tcpProxy`): `cut(name)` cuts such a
 * node off from every coordinator, `heal(name)` lets it redial them.
 */
export async function startCluster({ dataDir, nodes = 3, coordinators = 1, relayed = [], coordinatorArgs = [], env = {} }) {
  const etcd = coordinators > 1 ? await startEtcd({ dataDir: join(dataDir, 'etcd') }) : undefined;
  const coordinatorNames = coordinators > 1 ? Array.from({ length: coordinators }, (_, i) => `c${i + 1}`) : ['coordinator'];
  const nodeNames = Array.from({ length: nodes }, (_, i) => `node${i + 1}`);
  const procs = { coordinators: new Map(), nodes: new Map() };
  const running = (p) => p.child.exitCode === null && p.child.signalCode === null;
  const all = () => [...procs.coordinators.values(), ...procs.nodes.values()];
  const rpcPorts = new Map();
  const relays = new Map();
  const cluster = {
    coordinators: procs.coordinators,
    nodes: procs.nodes,
    get coordinator() { return procs.coordinators.get(coordinatorNames[0]); },
    get port() { return cluster.coordinator.port; },
    get url() { return `http://127.0.0.1:${cluster.port}`; },
    /** Every coordinator's RPC URL, as nodes join them. */
    get rpcUrls() { return coordinatorNames.map((name) => `ws://127.0.0.1:${rpcPorts.get(name)}`); },
    async startCoordinator(name) {
      const args = ['coordinator', '--port', '0', '--host', '127.0.0.1', '--rpc-port', String(rpcPorts.get(name) ?? 0),
        '--data', join(dataDir, name), ...(etcd === undefined ? [] : ['--name', name, '--etcd', etcd.endpoint, '--etcd-prefix', ETCD_PREFIX]),
        ...coordinatorArgs];
      const proc = await spawnTessera(args, { env, readyMsg: 'listening' });
      const started = { ...proc, name, port: proc.ready.port, rpcPort: proc.ready.rpcPort, url: `http://127.0.0.1:${proc.ready.port}` };
      rpcPorts.set(name, started.rpcPort);
      procs.coordinators.set(name, started);
      return started;
    },
    async cut(name) { await Promise.all(relays.get(name).map((r) => r.cut())); },
    async heal(name) { await Promise.all(relays.get(name).map((r) => r.heal())); },
    async startNode(name) {
      const joinUrls = relays.get(name)?.map((r) => `ws://127.0.0.1:${r.port}`) ?? cluster.rpcUrls;
      // With etcd, primaries relay the writes every coordinator sends them straight to their replicas, node to node.
      const proc = await spawnTessera(['node', '--join', joinUrls.join(','), '--name', name, '--data', join(dataDir, name), ...(etcd === undefined ? [] : ['--relay-port', '0'])],
        { env, readyMsg: 'joining' });
      procs.nodes.set(name, { ...proc, name });
      await cluster.waitForNodes([name]);
      return procs.nodes.get(name);
    },
    /** Until /.nodes of every running coordinator shows each of `names` active. */
    async waitForNodes(names, timeoutMs = 30_000) {
      for (const c of procs.coordinators.values()) {
        if (!running(c)) continue;
        const active = await waitFor(async () => {
          const r = await request(c.port, 'GET', '/.nodes', undefined, { timeoutMs: 5000 });
          return r.status === 200 && names.every((n) => r.json.some((e) => e.name === n && e.active === true));
        }, { timeoutMs, everyMs: 50 });
        if (active === null) throw new Error(`nodes ${names.join(', ')} not active on ${c.name} in ${timeoutMs} ms`);
      }
    },
    /** The coordinator every running one names elected (the one coordinator without etcd), or null. */
    async leader() {
      if (etcd === undefined) return coordinatorNames[0];
      const named = new Set();
      for (const c of procs.coordinators.values()) {
        if (!running(c)) continue;
        const r = await request(c.port, 'GET', '/.nodes', undefined, { timeoutMs: 5000 }).catch(() => undefined);
        named.add(r?.json?.find?.((e) => e.role === 'coordinator' && e.leader === true)?.name ?? null);
      }
      return named.size === 1 ? [...named][0] : null;
    },
    async stop() {
      const exits = await Promise.all(all().map((p) => p.stop()));
      await Promise.all([...relays.values()].flat().map((r) => r.close()));
      await etcd?.stop();
      return exits;
    },
    async kill() {
      const exits = await Promise.all(all().map((p) => p.kill()));
      await Promise.all([...relays.values()].flat().map((r) => r.close()));
      await etcd?.stop();
      return exits;
    },
  };
  try {
    for (const name of coordinatorNames) await cluster.startCoordinator(name);
    for (const name of relayed) relays.set(name, await Promise.all(coordinatorNames.map((c) => tcpProxy(rpcPorts.get(c)))));
    await Promise.all(nodeNames.map((name) => cluster.startNode(name)));
    if (etcd !== undefined && (await waitFor(() => cluster.leader(), { timeoutMs: 30_000, everyMs: 100 })) === null) {
      throw new Error('no coordinator elected in 30 s');
    }
  } catch (err) {
    await cluster.kill();
    throw err;
  }
  return cluster;
}

/**
 * A loopback TCP relay to 127.0.0.1:`targetPort` on a port of its own
 * (`port`), to cut one process off from another: `cut()` stops listening and
 * destroys every relayed connection (both ends see them close, as when a
 * link goes down), `heal()` listens again on the same port, `close()` cuts
 * for good. `cuts` counts the relayed connections destroyed.
 */
export async function tcpProxy(targetPort) {
  const sockets = new Set();
  const proxy = { port: 0, cuts: 0 };
  const server = createNetServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const [from, to] of [[client, upstream], [upstream, client]]) {
      sockets.add(from);
      from.pipe(to);
      from.on('error', () => to.destroy());
      from.on('close', () => { sockets.delete(from); to.destroy(); });
    }
  });
  const listen = () => new Promise((res, rej) => {
    server.once('error', rej);
    server.listen(proxy.port, '127.0.0.1', () => { server.off('error', rej); res(); });
  });
  await listen();
  proxy.port = server.address().port;
  proxy.cut = async () => {
    const closed = new Promise((res) => server.close(res));
    proxy.cuts += sockets.size / 2;
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  proxy.heal = listen;
  proxy.close = async () => { if (server.listening) await proxy.cut(); };
  return proxy;
}

/** A keep-alive agent for `request`: by default one socket, one agent per client, so clients race on their own connections. */
export function keepAliveAgent(maxSockets = 1) {
  return new Agent({ keepAlive: true, maxSockets });
}

/**
 * One HTTP request to 127.0.0.1:`port` (any method); `body` an object (sent
 * as JSON), a string or a Buffer. Resolves with { status, headers, text,
 * bytes, json } (json when the answer parses as JSON); rejects on a socket
 * error or after `timeoutMs` (the socket is destroyed).
 */
export function request(port, method, path, body, { agent, headers = {}, timeoutMs = 30_000 } = {}) {
  return new Promise((resolvePromise, reject) => {
    const payload = body === undefined ? undefined
      : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const h = { ...headers };
    if (payload !== undefined) {
      h['content-length'] = payload.length;
      if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['content-type'] = 'application/json';
    }
    const req = httpRequest({ agent: agent ?? false, host: '127.0.0.1', port, method, path, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        let json;
        try { json = text.length > 0 ? JSON.parse(text) : undefined; } catch { json = undefined; }
        resolvePromise({ status: res.statusCode, headers: res.headers, text, bytes, json });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Poll `probe` (async, truthy when done) every `everyMs` until `timeoutMs`; resolves with its value, or null on timeout. */
export async function waitFor(probe, { timeoutMs, everyMs = 25 }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch {
      // not yet
    }
    if (Date.now() >= deadline) return null;
    await sleep(everyMs);
  }
}

/**
 * Open-loop clients: `clients` loops, staggered, each calling `step()` every
 * `periodMs` (a late step does not shift the schedule) until `stopAt`.
 */
export async function paced(clients, periodMs, stopAt, step) {
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    let due = Date.now() + client * (periodMs / clients);
    while (Date.now() < stopAt) {
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      due += periodMs;
      await step();
    }
  }));
}

/** The q-quantile (0..1) of `values` (nearest rank); NaN when empty. */
export function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Resident set size of a process, MB, from /proc (null where unreadable). */
export async function rssMb(pid) {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}
