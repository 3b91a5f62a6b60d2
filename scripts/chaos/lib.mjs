// What the chaos scenarios (scripts/chaos/scenarios/) and the reliability
// scripts share: starting the built `tessera serve` the way `npm start` does
// (SERVER_NODE_FLAGS, SERVER_ENV), one HTTP request over node:http, a seeded
// random generator, and bounded waits. Run `npx tsc -b` first: servers are
// started from packages/cli/dist.
import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';

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
      if (logs.length < 10_000) logs.push(entry);
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

/** `tessera serve` on 127.0.0.1, port 0, on `dataDir`, once it listens; `args` adds flags. See spawnTessera. */
export async function startServer({ dataDir, args = [], env = {}, prefix = [], startTimeoutMs }) {
  const proc = await spawnTessera(['serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, ...args],
    { env, prefix, readyMsg: 'listening', startTimeoutMs });
  return { ...proc, port: proc.ready.port, url: `http://127.0.0.1:${proc.ready.port}`, dataDir };
}

/**
 * A coordinator (HTTP and RPC on ephemeral loopback ports) and `nodes` shard
 * nodes joining it, each with its own directory under `dataDir`; resolves
 * once /.nodes shows every node active. `port` is the coordinator's HTTP
 * port; `stop()` and `kill()` act on every process at once.
 */
export async function startCluster({ dataDir, nodes = 3, coordinatorArgs = [], env = {} }) {
  const coordinator = await spawnTessera(['coordinator', '--port', '0', '--host', '127.0.0.1', '--rpc-port', '0',
    '--data', join(dataDir, 'coordinator'), ...coordinatorArgs], { env, readyMsg: 'listening' });
  const { port, rpcPort } = coordinator.ready;
  const members = [coordinator];
  const cluster = {
    coordinator,
    port,
    url: `http://127.0.0.1:${port}`,
    nodes: [],
    async stop() { return Promise.all(members.map((p) => p.stop())); },
    async kill() { return Promise.all(members.map((p) => p.kill())); },
  };
  try {
    const names = Array.from({ length: nodes }, (_, i) => `node${i + 1}`);
    cluster.nodes = await Promise.all(names.map((name) => spawnTessera(['node', '--join', `ws://127.0.0.1:${rpcPort}`,
      '--name', name, '--data', join(dataDir, name)], { env, readyMsg: 'joining' }).then((p) => { members.push(p); return p; })));
    const active = await waitFor(async () => {
      const r = await request(port, 'GET', '/.nodes');
      return r.status === 200 && names.every((n) => r.json.some((e) => e.name === n && e.active === true));
    }, { timeoutMs: 30_000, everyMs: 50 });
    if (active === null) throw new Error(`nodes ${names.join(', ')} not active in 30 s`);
  } catch (err) {
    await cluster.kill();
    throw err;
  }
  return cluster;
}

/** A keep-alive agent for `request`: one per client, so clients race on their own connections. */
export function keepAliveAgent() {
  return new Agent({ keepAlive: true, maxSockets: 1 });
}

/**
 * One HTTP request to 127.0.0.1:`port` (any method); `body` an object (sent
 * as JSON), a string or a Buffer. Resolves with { status, text, json } (json
 * when the answer parses as JSON); rejects on a socket error or after
 * `timeoutMs` (the socket is destroyed).
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
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try { json = text.length > 0 ? JSON.parse(text) : undefined; } catch { json = undefined; }
        resolvePromise({ status: res.statusCode, text, json });
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
