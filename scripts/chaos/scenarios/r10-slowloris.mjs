// R10 — slowloris: 300 sockets holding request heads open beside normal clients.
//
// Method: one `tessera serve` (1 shard) with a known --headers-timeout-ms
// (3 s quick, the 10 s default full). Normal clients: 4 keep-alive
// connections, each sending a request every 20 ms (GET of a random one of
// 200 documents, or a PUT of one, 1 in 4), latency measured per request.
// Baseline windows (normal clients alone) alternate with attack windows of
// the same length (the same clients beside 300 slow sockets), so the
// machine's own load drifts into both alike. The attacker is its own process
// (slowloris.mjs): a third of its sockets `trickle` (a request head one
// byte every 300–1000 ms, seeded), a third `stall` (the whole head but its
// final CRLF, then nothing), a third stay `silent` (connect, send nothing);
// a socket the server closes is reopened at once, so 300 stay open all along.
// Passes when the normal p99 under attack is ≤ 2× the baseline p99 (full
// variant only: see `pass` below), no
// normal request failed, and every slow socket was closed by the server
// within headersTimeoutMs + 1 s of its connect (a socket still open at the
// end of the attack past that bound counts as not closed).
//
// quick: 3 s headers timeout, 2 cycles of 3 s baseline + 3 s attack;
// full: the 10 s default, 6 cycles of 15 s baseline + 15 s attack.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { random } from '../../bench/bench-lib.mjs';
import { keepAliveAgent, paced, quantile, request, sleep, SLOW_LOG_OFF, startServer } from '../lib.mjs';

export const id = 'R10';
export const title = '300 slowloris sockets (trickled, stalled and silent request heads) beside normal keep-alive clients';
export const target = 'normal p99 ≤ 2× baseline; slow sockets closed within the headers timeout';

const SLOW_SOCKETS = 300;
const SLOWLORIS = join(dirname(fileURLToPath(import.meta.url)), '../slowloris.mjs');
const NORMAL_CLIENTS = 4;
const PERIOD_MS = 20;
const DOCS = 200;
const CLOSE_SLACK_MS = 1000;
/** The attacker's start-up and ramp (it opens its sockets over about a second), not measured. */
const RAMP_MS = 1500;

/** Normal traffic until `stopAt`: latencies (ms) and failures. */
async function normalTraffic(port, agent, next, stopAt) {
  const latencies = [];
  const failures = [];
  await paced(NORMAL_CLIENTS, PERIOD_MS, stopAt, async () => {
    const n = Math.floor(next() * DOCS);
    const write = next() < 0.25;
    const started = performance.now();
    try {
      const r = write
        ? await request(port, 'PUT', `/r10/${n}`, { n, at: Date.now() }, { agent, timeoutMs: 10_000 })
        : await request(port, 'GET', `/r10/${n}`, undefined, { agent, timeoutMs: 10_000 });
      latencies.push(performance.now() - started);
      if (r.status !== 200) failures.push(`${write ? 'PUT' : 'GET'} ${r.status}`);
    } catch (err) {
      failures.push(String(err.message ?? err));
    }
  });
  return { latencies, failures };
}

/** The attack, in its own process (slowloris.mjs) so its sockets and timers do not delay the measuring clients. */
async function slowloris(port, seed, durationMs, boundMs) {
  const child = spawn(process.execPath, [SLOWLORIS, String(port), String(seed), String(SLOW_SOCKETS), String(durationMs), String(boundMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const code = await new Promise((res) => child.once('exit', (c) => res(c)));
  if (code !== 0) throw new Error(`slowloris process exited with ${code}`);
  return JSON.parse(out);
}

export async function run({ quick, seed, workDir, log }) {
  const next = random(seed);
  const headersTimeoutMs = quick ? 3000 : 10_000;
  const cycles = quick ? 2 : 6;
  const windowMs = quick ? 3000 : 15_000;
  const boundMs = headersTimeoutMs + CLOSE_SLACK_MS;
  const dataDir = join(workDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer({ dataDir, args: [...SLOW_LOG_OFF, '--headers-timeout-ms', String(headersTimeoutMs), '--shards', '1', '--replicas', '0'] });
  const agent = keepAliveAgent(NORMAL_CLIENTS);
  try {
    for (let n = 0; n < DOCS; n++) await request(server.port, 'PUT', `/r10/${n}`, { n }, { agent });
    await normalTraffic(server.port, agent, next, Date.now() + 1000); // warm-up, not measured
    const baseline = { latencies: [], failures: [] };
    const attacked = { latencies: [], failures: [] };
    const lifetimes = [];
    // Baseline and attack alternate, so the machine's own load drifts into both alike.
    for (let cycle = 0; cycle < cycles; cycle++) {
      const quiet = await normalTraffic(server.port, agent, next, Date.now() + windowMs);
      const attack = slowloris(server.port, seed * 100 + cycle, RAMP_MS + windowMs, boundMs);
      await sleep(RAMP_MS);
      const loud = await normalTraffic(server.port, agent, next, Date.now() + windowMs);
      const slow = await attack;
      for (const [into, from] of [[baseline, quiet], [attacked, loud]]) {
        into.latencies.push(...from.latencies);
        into.failures.push(...from.failures);
      }
      lifetimes.push(...slow.closed, ...slow.overdue);
      await sleep(500); // the server closes the sockets the attack left open before the next baseline
      log(`R10 cycle ${cycle + 1}/${cycles}: baseline p99 ${quantile(quiet.latencies, 0.99).toFixed(2)} ms, under attack ${quantile(loud.latencies, 0.99).toFixed(2)} ms, ${slow.closed.length} slow sockets closed, ${slow.overdue.length} overdue`);
    }
    const baseP99 = quantile(baseline.latencies, 0.99);
    const attackP99 = quantile(attacked.latencies, 0.99);
    const late = lifetimes.filter((s) => s.ms > boundMs);
    const byKind = {};
    for (const s of lifetimes) {
      const k = (byKind[s.kind] ??= { sockets: 0, maxMs: 0, late: 0, answers: {} });
      k.sockets++;
      k.maxMs = Math.max(k.maxMs, s.ms);
      if (s.ms > boundMs) k.late++;
      const answer = /^HTTP\/1\.1 (\d{3})/.exec(s.answered)?.[1] ?? (s.answered === 'still open' ? 'still open' : 'closed silently');
      k.answers[answer] = (k.answers[answer] ?? 0) + 1;
    }
    log(`R10 slow sockets by kind: ${JSON.stringify(byKind)}`);
    const failures = [...baseline.failures, ...attacked.failures];
    const latencyOk = attackP99 <= 2 * baseP99;
    const alive = server.alive();
    // Quick runs inside `npm test`, beside other test files on a shared machine: 3 s windows measure the
    // neighbours as much as the attack, so there the ratio is printed, not gated (tests assert behaviour, not timing).
    // At least one full set of slow sockets must have been seen closing (sockets still young when an attack
    // window ends are abandoned, not counted; on a loaded machine the attacker's start-up eats into the window).
    const pass = (latencyOk || quick) && late.length === 0 && lifetimes.length >= SLOW_SOCKETS && failures.length === 0 && alive;
    const longest = Math.max(0, ...lifetimes.map((s) => s.ms));
    return {
      pass,
      figure: `normal p99 ${attackP99.toFixed(1)} ms under attack vs ${baseP99.toFixed(1)} ms baseline (${(attackP99 / baseP99).toFixed(2)}×${quick ? ', not gated in quick' : ''}, ${attacked.latencies.length}/${baseline.latencies.length} requests); `
        + `${lifetimes.length - late.length}/${lifetimes.length} slow sockets closed within ${boundMs} ms (headers timeout ${headersTimeoutMs} ms, longest ${longest} ms); `
        + `${failures.length} normal requests failed`,
      details: { baseP99, attackP99, byKind, failures: failures.slice(0, 20), alive },
    };
  } finally {
    agent.destroy();
    await server.stop();
  }
}
