#!/usr/bin/env node
// HTTP faults of the built server (issue 18, items 5 and 7), printed, never asserted:
//  (a) SIGTERM under 200 writers, each with one PUT on a fresh connection: of the
//      requests fully sent before the signal, how many were answered and how many
//      reset; the exit code and the time from the signal to the exit.
//  (b) a client trickling one header byte every 2 s: seconds until the server
//      closed it, against the configured headers timeout.
// Starts its own `tessera serve` (packages/cli/dist/main.js; run `npx tsc -b`
// first) on a temporary data directory and port 0, talks only to 127.0.0.1,
// and stops by itself (every wait is bounded).
//
//   node scripts/reliability/http-faults.mjs [--writers 200] [--signal-after 150] [--headers-timeout-ms N]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(ROOT, 'packages/cli/dist/main.js');
const { values } = parseArgs({
  options: {
    writers: { type: 'string', default: '200' },
    'signal-after': { type: 'string', default: '150' },
    'headers-timeout-ms': { type: 'string' },
  },
});
const WRITERS = Number(values.writers);
/** The signal goes once this many PUTs are fully sent: the rest are still being connected or written. */
const SIGNAL_AFTER = Math.min(Number(values['signal-after']), WRITERS);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Start `tessera serve` on port 0; resolves once it logs `listening`. */
async function startServer(dataDir, extra = []) {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', dataDir, '--slow-request-ms', '600000', ...extra], {
    env: { ...process.env, TESSERA_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((res) => child.once('exit', (code, signal) => res({ code, signal, at: Date.now() })));
  const port = await new Promise((res, rej) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); rej(new Error('server did not start in 20 s')); }, 20_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry;
      try { entry = JSON.parse(line); } catch { return; }
      if (entry.msg === 'listening') { clearTimeout(timer); res(entry.port); }
    });
    void exited.then(() => { clearTimeout(timer); rej(new Error('server exited before listening')); });
  });
  return { child, port, exited };
}

function put(port, path, doc) {
  return new Promise((res) => {
    const body = JSON.stringify(doc);
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.on('data', (d) => { text += d; });
    s.on('error', () => undefined);
    s.on('close', () => res(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]));
    s.on('connect', () => s.end(`PUT ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
  });
}

async function drain() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-faults-'));
  try {
    const server = await startServer(dataDir);
    await put(server.port, '/faults/warm', { warm: true });
    let sent = 0;
    let signalledAt = 0;
    const writers = Array.from({ length: WRITERS }, (_, i) => new Promise((res) => {
      const w = { sentAt: 0, text: '', error: null };
      // A small stagger, so the signal falls while writers are still connecting and writing.
      setTimeout(() => {
        const s = connect(server.port, '127.0.0.1');
        const giveUp = setTimeout(() => s.destroy(), 15_000);
        s.on('data', (d) => { w.text += d.toString('latin1'); });
        s.on('error', (err) => { w.error = err.code ?? 'error'; });
        s.on('close', () => { clearTimeout(giveUp); res(w); });
        s.on('connect', () => {
          const body = JSON.stringify({ n: i, pad: 'x'.repeat(200) });
          s.write(`PUT /faults/${i} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`, () => {
            w.sentAt = Date.now();
            if (++sent === SIGNAL_AFTER) {
              signalledAt = Date.now();
              server.child.kill('SIGTERM');
            }
          });
        });
      }, Math.floor(i / 4));
    }));
    const all = await Promise.all(writers);
    const exit = await Promise.race([server.exited, sleep(30_000).then(() => null)]);
    if (exit === null) server.child.kill('SIGKILL');
    const before = all.filter((w) => w.sentAt !== 0 && w.sentAt <= signalledAt);
    const answered = (ws) => ws.filter((w) => /^HTTP\/1\.1 \d{3} /.test(w.text)).length;
    const resets = (ws) => ws.filter((w) => w.error === 'ECONNRESET' || w.error === 'EPIPE').length;
    const statuses = {};
    for (const w of before) {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(w.text)?.[1] ?? (w.error ?? 'closed, no answer');
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    const after = all.filter((w) => !before.includes(w));
    console.log(`(a) SIGTERM drain, ${WRITERS} writers (one PUT each, fresh connection), signal after ${SIGNAL_AFTER} fully sent`);
    console.log(`    fully sent before the signal: ${before.length}; answered ${answered(before)}; reset ${resets(before)}; outcomes ${JSON.stringify(statuses)}`);
    console.log(`    sent after the signal (or not at all): ${after.length}; answered ${answered(after)}; reset ${resets(after)}; refused ${after.filter((w) => w.error === 'ECONNREFUSED').length}`);
    console.log(exit === null
      ? '    exit: none within 30 s (killed)'
      : `    exit code ${exit.code}${exit.signal ? ` (signal ${exit.signal})` : ''}, ${exit.at - signalledAt} ms after the signal`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function slowHeader() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-faults-'));
  const extra = values['headers-timeout-ms'] === undefined ? [] : ['--headers-timeout-ms', values['headers-timeout-ms']];
  try {
    const server = await startServer(dataDir, extra);
    const head = `GET /faults/1 HTTP/1.1\r\nHost: t\r\nX-Slow: ${'s'.repeat(64)}\r\n\r\n`;
    const result = await new Promise((res) => {
      const s = connect(server.port, '127.0.0.1');
      let text = '';
      let startedAt = 0;
      let bytes = 0;
      let timer;
      const giveUp = setTimeout(() => s.destroy(), 45_000);
      s.on('data', (d) => { text += d.toString('latin1'); });
      s.on('error', () => undefined);
      s.on('close', () => { clearTimeout(giveUp); clearTimeout(timer); res({ ms: Date.now() - startedAt, text, bytes }); });
      s.on('connect', () => {
        startedAt = Date.now();
        const next = () => {
          if (s.destroyed || bytes >= head.length) return;
          s.write(head[bytes++]);
          timer = setTimeout(next, 2000);
        };
        next();
      });
    });
    const bound = /within (\d+) ms/.exec(result.text)?.[1];
    console.log('(b) slow header: one byte every 2 s');
    console.log(`    closed after ${(result.ms / 1000).toFixed(2)} s, ${result.bytes} bytes sent; answer ${JSON.stringify(result.text.split('\r\n')[0] ?? '')}`);
    console.log(`    configured bound: ${values['headers-timeout-ms'] ?? 'default'}${bound ? ` (server says ${bound} ms)` : ''}`);
    server.child.kill('SIGTERM');
    await Promise.race([server.exited, sleep(15_000)]);
    server.child.kill('SIGKILL');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`node ${process.version}, ${CLI}`);
await drain();
await slowHeader();
