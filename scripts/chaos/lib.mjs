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
 * Start `tessera serve` on 127.0.0.1, port 0, on `dataDir`; resolves once it
 * logs `listening`. `prefix` runs the server under another program (e.g.
 * strace): the argv before `node`; `pid` is then that program's, `serverPid`
 * is read from the server's own log lines when it logs one, else null.
 * `stop()` sends SIGTERM and waits at most `timeoutMs` before SIGKILL;
 * `kill()` sends SIGKILL; both resolve with the exit ({ code, signal, at }).
 */
export async function startServer({ dataDir, args = [], env = {}, prefix = [], startTimeoutMs = 60_000 }) {
  const argv = [...prefix, process.execPath, ...SERVER_NODE_FLAGS, CLI, 'serve',
    '--port', '0', '--host', '127.0.0.1', '--data', dataDir, ...args];
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...process.env, ...SERVER_ENV, TESSERA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = [];
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d.toString()).slice(-8192); });
  const exited = new Promise((res) => child.once('exit', (code, signal) => res({ code, signal, at: Date.now() })));
  const port = await new Promise((res, rej) => {
    // A server that never says it listens is killed: left running, it would outlive the run.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`server did not start in ${startTimeoutMs} ms; stderr: ${stderr}`));
    }, startTimeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry;
      try { entry = JSON.parse(line); } catch { return; }
      if (logs.length < 10_000) logs.push(entry);
      if (entry.msg === 'listening') { clearTimeout(timer); res(entry.port); }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      rej(new Error(`server exited (${code ?? signal}) before listening; stderr: ${stderr}`));
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    pid: child.pid,
    port,
    url: `http://127.0.0.1:${port}`,
    dataDir,
    logs,
    exited,
    stderr: () => stderr,
    async stop(timeoutMs = 15_000) {
      if (running()) child.kill('SIGTERM');
      const exit = await within(exited, timeoutMs);
      if (exit !== null) return exit;
      child.kill('SIGKILL');
      return exited;
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      return exited;
    },
  };
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
