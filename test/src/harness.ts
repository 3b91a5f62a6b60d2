/**
 * Integration-test harness: starts the real `tessera serve` process on an
 * ephemeral loopback port with its own data directory, and talks HTTP to it
 * with undici (which sends any method: UPDATE, INFO…).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { decode } from '@msgpack/msgpack';
import { Tessera } from '@tessera/client';
import { request } from 'undici';
import { parse as parseYaml } from 'yaml';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(REPO_ROOT, 'packages/cli/dist/main.js');

export interface Server {
  port: number;
  url: string;
  dataDir: string;
  process: ChildProcess;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  /** Lines the process logged (JSON objects). */
  logs: Array<Record<string, unknown>>;
  /** Resolves with the first logged line matching, waiting for it up to `timeoutMs`. */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** The server process's peak resident memory so far (VmHWM), bytes. */
export function peakRssBytes(server: Server): number {
  const status = readFileSync(`/proc/${server.process.pid}/status`, 'utf8');
  const kb = /VmHWM:\s+(\d+) kB/.exec(status);
  if (kb === null) throw new Error('no VmHWM in /proc status');
  return Number(kb[1]) * 1024;
}

export function tempDataDir(prefix = 'tessera-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function startServer(options: { dataDir?: string; args?: string[]; env?: Record<string, string> } = {}): Promise<Server> {
  const dataDir = options.dataDir ?? tempDataDir();
  const args = options.args ?? ['--port', '0', '--data', dataDir];
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    env: { ...process.env, TESSERA_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const port = await new Promise<number>((res, rej) => {
    const lines = createInterface({ input: child.stdout! });
    // A server that never says it listens is killed: left running, it would outlive the test run.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`server did not start in 15 s; stderr: ${stderr}`));
    }, 15_000);
    lines.on('line', (line) => {
      let entry: Record<string, unknown>;
      try { entry = JSON.parse(line) as Record<string, unknown>; } catch { return; }
      logs.push(entry);
      if (entry.msg === 'listening') { clearTimeout(timer); res(entry.port as number); }
    });
    void exited.then((code) => { clearTimeout(timer); rej(new Error(`server exited with ${code} before listening; stderr: ${stderr}`)); });
  });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    dataDir,
    process: child,
    logs,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async waitForLog(match, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = logs.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error('log line not seen');
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  bytes: Buffer;
  /** The decoded body, when the reply is JSON, MessagePack or YAML. */
  json: any;
}

/** One HTTP request; any method; body as an object (JSON) or raw bytes/string. */
export async function call(
  server: { url: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  let payload: string | Buffer | undefined;
  const h: Record<string, string> = { ...headers };
  if (body !== undefined) {
    if (typeof body === 'string' || Buffer.isBuffer(body)) payload = body;
    else {
      payload = JSON.stringify(body);
      if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['content-type'] = 'application/json';
    }
  }
  const res = await request(server.url + path, { method: method as 'GET', body: payload, headers: h });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const text = bytes.toString('utf8');
  const type = String(res.headers['content-type'] ?? '');
  let json: unknown;
  if (type.startsWith('application/json') && text.length > 0) json = JSON.parse(text);
  else if (/msgpack/.test(type) && bytes.length > 0) json = decode(bytes);
  else if (/yaml/.test(type) && text.length > 0) json = parseYaml(text);
  return { status: res.statusCode, headers: res.headers, text, bytes, json };
}

/**
 * A @tessera/client of the suite's server, made at first use (once the
 * server has started) and closed after the suite.
 */
export function clientForSuite(server: () => { url: string }): () => Tessera {
  let client: Tessera | undefined;
  afterAll(async () => {
    await client?.close();
  });
  return () => (client ??= new Tessera({ url: server().url }));
}
