// R13 — SIGTERM under 200 concurrent writers.
//
// Method: a server on a fresh data directory; 200 clients each open a fresh
// connection and send one PUT, slightly staggered; once a seeded number of
// them (between 10 % and 90 %) are fully written, the server gets SIGTERM
// (scripts/reliability/sigterm-drain.mjs, shared with http-faults.mjs).
// Every request fully sent before the signal must get an HTTP answer (no
// reset, no close without one), and the process must exit with code 0 within
// 10 s of the signal. Quick: 1 round, whose exit time is printed, not
// judged (it runs in npm test, beside other tests); full: 25 rounds, each
// its own server.
import { join } from 'node:path';
import { random, request, startServer } from '../lib.mjs';
import { sigtermDrain } from '../../reliability/sigterm-drain.mjs';

export const id = 'R13';
export const title = 'SIGTERM under 200 concurrent writers';
export const target = '0 resets among requests sent before the signal, exit 0 ≤ 10 s';

const WRITERS = 200;
const EXIT_MS_MAX = 10_000;

export async function run({ quick, seed, workDir, log }) {
  const rounds = quick ? 1 : 25;
  const rand = random(seed);
  let sentBefore = 0;
  let unanswered = 0;
  let resets = 0;
  let worstExitMs = 0;
  const badExits = [];
  for (let round = 0; round < rounds; round++) {
    const signalAfter = Math.round(WRITERS * (0.1 + 0.8 * rand()));
    const server = await startServer({ dataDir: join(workDir, `data-${round}`), args: ['--slow-request-ms', '600000'] });
    try {
      const warm = await request(server.port, 'PUT', '/faults/warm', { warm: true });
      if (warm.status !== 200) throw new Error(`warm-up PUT answered ${warm.status}: ${warm.text}`);
      const { before, exit, exitMs } = await sigtermDrain(server, { writers: WRITERS, signalAfter, exitWaitMs: 20_000 });
      sentBefore += before.count;
      unanswered += before.count - before.answered;
      resets += before.resets;
      if (exit === null || exit.code !== 0 || (!quick && exitMs > EXIT_MS_MAX)) {
        badExits.push(exit === null ? `round ${round}: no exit in 20 s` : `round ${round}: exit ${exit.code ?? exit.signal} after ${exitMs} ms`);
      }
      worstExitMs = Math.max(worstExitMs, exitMs ?? Infinity);
      log(`round ${round + 1}/${rounds}: signal after ${signalAfter} sent; before it ${before.count} sent, ${before.answered} answered ${JSON.stringify(before.statuses)}; exit ${exit?.code ?? 'none'} after ${exitMs} ms`);
    } finally {
      await server.kill();
    }
  }
  const pass = sentBefore > 0 && unanswered === 0 && resets === 0 && badExits.length === 0;
  return {
    pass,
    figure: `${resets} resets and ${unanswered} unanswered of ${sentBefore} requests sent before the signal in ${rounds} round(s); `
      + `${badExits.length === 0 ? 'every exit 0' : badExits.join(', ')}, slowest ${(worstExitMs / 1000).toFixed(2)} s`,
    details: { rounds, sentBefore, unanswered, resets, badExits, worstExitMs },
  };
}
