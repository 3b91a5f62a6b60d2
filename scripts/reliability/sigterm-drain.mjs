// SIGTERM under concurrent writers (issue 18 item 5; reliability row R13),
// shared by scripts/reliability/http-faults.mjs (prints it) and
// scripts/chaos/scenarios/r13-sigterm-drain.mjs (asserts it).
import { connect } from 'node:net';
import { within } from '../chaos/lib.mjs';

/**
 * `writers` clients, each with one PUT on a fresh connection, slightly
 * staggered; once `signalAfter` of them are fully written the server gets
 * SIGTERM. Resolves with each writer's outcome split at the signal: `before`
 * (fully sent before it, which a drain must answer) and `after`, plus the
 * exit and the ms from the signal to it (exit null: none within `exitWaitMs`,
 * then SIGKILLed).
 */
export async function sigtermDrain(server, { writers, signalAfter, index = 'faults', exitWaitMs = 30_000 }) {
  signalAfter = Math.min(signalAfter, writers);
  let sent = 0;
  let signalledAt = 0;
  const outcomes = await Promise.all(Array.from({ length: writers }, (_, i) => new Promise((res) => {
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
        s.write(`PUT /${index}/${i} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`, () => {
          w.sentAt = Date.now();
          if (++sent === signalAfter) {
            signalledAt = Date.now();
            server.child.kill('SIGTERM');
          }
        });
      });
    }, Math.floor(i / 4));
  })));
  const exit = await within(server.exited, exitWaitMs);
  if (exit === null) server.child.kill('SIGKILL');
  const before = outcomes.filter((w) => w.sentAt !== 0 && signalledAt !== 0 && w.sentAt <= signalledAt);
  const after = outcomes.filter((w) => !before.includes(w));
  return { before: summarise(before), after: summarise(after), exit, exitMs: exit === null ? null : exit.at - signalledAt };
}

function summarise(outcomes) {
  const statuses = {};
  for (const w of outcomes) {
    const status = /^HTTP\/1\.1 (\d{3})/.exec(w.text)?.[1] ?? (w.error ?? 'closed, no answer');
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return {
    count: outcomes.length,
    answered: outcomes.filter((w) => /^HTTP\/1\.1 \d{3} /.test(w.text)).length,
    resets: outcomes.filter((w) => w.error === 'ECONNRESET' || w.error === 'EPIPE').length,
    refused: outcomes.filter((w) => w.error === 'ECONNREFUSED').length,
    statuses,
  };
}
