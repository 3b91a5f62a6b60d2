// What engineer B's chaos scenarios share: start and stop the built
// `tessera serve` (packages/cli/dist/main.js, with the flags and environment
// production starts it with), plain HTTP calls on a keep-alive agent, raw
// socket exchanges, and the small statistics the figures need.
import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CLI = join(ROOT, 'packages/cli/dist/main.js');
const { SERVER_NODE_FLAGS, SERVER_ENV } = await import(join(ROOT, 'packages/cli/dist/node-flags.js'));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Start `tessera serve --port 0 --host 127.0.0.1 --data DIR ...extra`;
 * resolves once it logs `listening` (kills it if that takes over 30 s).
 */
export async function startServer(dataDir, extra = [], env = {}) {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, '--slow-request-ms', '600000', ...extra], {
    env: { ...process.env, ...SERVER_ENV, TESSERA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = [];
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d.toString(); if (stderr.length > 100_000) stderr = stderr.slice(-50_000); });
  const exited = new Promise((res) => child.once('exit', (code, signal) => res({ code, signal })));
  const port = await new Promise((res, rej) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); rej(new Error(`server did not start in 30 s; stderr: ${stderr}`)); }, 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry;
      try { entry = JSON.parse(line); } catch { return; }
      logs.push(entry);
      if (logs.length > 20_000) logs.splice(0, 10_000);
      if (entry.msg === 'listening') { clearTimeout(timer); res(entry.port); }
    });
    void exited.then(({ code, signal }) => { clearTimeout(timer); rej(new Error(`server exited (${code ?? signal}) before listening; stderr: ${stderr}`)); });
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    port,
    pid: child.pid,
    child,
    logs,
    exited,
    alive,
    stderr: () => stderr,
    /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with { code, signal }. */
    async stop(graceMs = 15_000) {
      if (alive()) child.kill('SIGTERM');
      const timer = setTimeout(() => { if (alive()) child.kill('SIGKILL'); }, graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
    async kill() {
      if (alive()) child.kill('SIGKILL');
      return exited;
    },
  };
}

/** A keep-alive agent for `call`; destroy it when done. */
export function keepAliveAgent(maxSockets = 16) {
  return new Agent({ keepAlive: true, maxSockets });
}

/**
 * One HTTP request through node:http (any method); `body` an object (sent as
 * JSON), a string or a Buffer. Resolves with { status, headers, text, json };
 * rejects on a network error or after `timeoutMs`.
 */
export function call(port, method, path, body, { agent, headers = {}, timeoutMs = 30_000 } = {}) {
  return new Promise((resolvePromise, reject) => {
    let payload;
    const h = { ...headers };
    if (body !== undefined) {
      payload = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['content-type'] = 'application/json';
      h['content-length'] = payload.length;
    }
    const req = httpRequest({ agent: agent ?? false, host: '127.0.0.1', port, method, path, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        let json;
        if (String(res.headers['content-type'] ?? '').startsWith('application/json') && text.length > 0) {
          try { json = JSON.parse(text); } catch { json = undefined; }
        }
        resolvePromise({ status: res.statusCode, headers: res.headers, text, bytes, json });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * The HTTP/1.1 responses in `text`, in order (Content-Length or chunked
 * framed), each { status, headers, body }; stops at the first incomplete one.
 */
export function parseResponses(text) {
  const out = [];
  let pos = 0;
  while (pos < text.length) {
    const end = text.indexOf('\r\n\r\n', pos);
    if (end === -1) break;
    const [statusLine, ...lines] = text.slice(pos, end).split('\r\n');
    const headers = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    let body = '';
    let next = end + 4;
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      for (;;) {
        const eol = text.indexOf('\r\n', next);
        if (eol === -1) return out;
        const size = parseInt(text.slice(next, eol), 16);
        if (Number.isNaN(size)) return out;
        if (size === 0) { next = text.indexOf('\r\n\r\n', eol) === eol ? eol + 4 : text.indexOf('\r\n\r\n', eol) + 4; break; }
        body += text.slice(eol + 2, eol + 2 + size);
        next = eol + 2 + size + 2;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (text.length < next + length) break;
      body = text.slice(next, next + length);
      next += length;
    }
    let json;
    try { json = JSON.parse(body); } catch { json = undefined; }
    out.push({ status, headers, body, json });
    pos = next;
  }
  return out;
}

/**
 * Send `bytes` (a latin1 string or a Buffer) on a fresh connection, whole or
 * in `fragments` (sizes of successive writes, one event-loop turn apart),
 * half-closing it after unless `keepOpen`; collect everything until the
 * server closes it or `timeoutMs` passes. Resolves with
 * { text, responses, error, closedByServer, ms }.
 */
export function rawExchange(port, bytes, { timeoutMs = 5000, keepOpen = false, fragments } = {}) {
  return new Promise((resolvePromise) => {
    const socket = connect(port, '127.0.0.1');
    const startedAt = Date.now();
    let text = '';
    let error = null;
    let closedByServer = true;
    const timer = setTimeout(() => { closedByServer = false; socket.destroy(); }, timeoutMs);
    socket.on('data', (d) => { text += d.toString('latin1'); });
    socket.on('error', (err) => { error = err.code ?? 'error'; });
    socket.on('close', () => {
      clearTimeout(timer);
      resolvePromise({ text, responses: parseResponses(text), error, closedByServer, ms: Date.now() - startedAt });
    });
    socket.on('connect', async () => {
      const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1');
      let at = 0;
      for (const size of fragments ?? []) {
        if (at >= buf.length || socket.destroyed) break;
        socket.write(buf.subarray(at, at + size));
        at += size;
        await new Promise((r) => setImmediate(r));
      }
      if (socket.destroyed) return;
      if (keepOpen) socket.write(buf.subarray(at));
      else socket.end(buf.subarray(at));
    });
  });
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
