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
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, startServer as startChaosServer } from '../chaos/lib.mjs';
import { sigtermDrain } from './sigterm-drain.mjs';

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

/** `tessera serve` on port 0, the slow-request log out of the way. */
function startServer(dataDir, extra = []) {
  return startChaosServer({ dataDir, args: ['--slow-request-ms', '600000', ...extra] });
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
    const { before, after, exit, exitMs } = await sigtermDrain(server, { writers: WRITERS, signalAfter: SIGNAL_AFTER });
    console.log(`(a) SIGTERM drain, ${WRITERS} writers (one PUT each, fresh connection), signal after ${SIGNAL_AFTER} fully sent`);
    console.log(`    fully sent before the signal: ${before.count}; answered ${before.answered}; reset ${before.resets}; outcomes ${JSON.stringify(before.statuses)}`);
    console.log(`    sent after the signal (or not at all): ${after.count}; answered ${after.answered}; reset ${after.resets}; refused ${after.refused}`);
    console.log(exit === null
      ? '    exit: none within 30 s (killed)'
      : `    exit code ${exit.code}${exit.signal ? ` (signal ${exit.signal})` : ''}, ${exitMs} ms after the signal`);
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
    await server.stop(15_000);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`node ${process.version}, ${CLI}`);
await drain();
await slowHeader();
