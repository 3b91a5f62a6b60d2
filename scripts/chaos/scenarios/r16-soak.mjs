// R16 — soak: mixed reads and writes at a steady rate for a long time.
//
// Method: one `tessera serve` (1 shard, 0 replicas) is loaded with 2,000
// documents (300 quick), then 4 keep-alive clients each send a request every 20 ms
// (200 requests/s in all, open loop: the rate does not follow the latency):
// 60 % GET, 25 % PUT (replacing one of them, so the data set stays the
// same size), 15 % SEARCH of one of 100 terms. The server's RSS
// (/proc/PID/status VmRSS) is sampled every few seconds. After a warm-up
// (the first fifth of the run, at least 1 minute in the full variant), a
// least-squares line through the RSS samples gives the slope in MB/min, and
// the p99 latency is taken per minute. Passes when no request failed or
// answered 5xx, the server is alive, the slope is < 1 MB/min and the last
// minute's p99 is ≤ 2× the first (post-warm-up) minute's.
//
// quick: 15 s (5 s windows), gating failures and liveness only: a slope fitted
// to 10 s of RSS, or a p99 over 5 s beside other test files, says nothing.
// full: 30 minutes, 5 minutes of warm-up.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { random } from '../../bench/bench-lib.mjs';
import { keepAliveAgent, paced, quantile, request, rssMb, sleep, SLOW_LOG_OFF, startServer } from '../lib.mjs';

export const id = 'R16';
export const title = 'soak: mixed reads and writes at a steady rate';
export const target = 'RSS slope < 1 MB/min, p99 stable (last minute ≤ 2× first)';

const CLIENTS = 4;
const PERIOD_MS = 20;
const TERMS = 100;

const body = (n, next) => ({ n, text: `t${Math.floor(next() * TERMS)} t${Math.floor(next() * TERMS)} ${'word '.repeat(20 + Math.floor(next() * 40))}`, at: Date.now() });

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) { num += (x - mx) * (y - my); den += (x - mx) ** 2; }
  return den === 0 ? Number.NaN : num / den;
}

export async function run({ quick, seed, workDir, log }) {
  const next = random(seed);
  const docs = quick ? 300 : 2000;
  const durationMs = quick ? 15_000 : 30 * 60_000;
  const warmupMs = quick ? 5000 : 5 * 60_000;
  const windowMs = quick ? 5000 : 60_000;
  const sampleMs = quick ? 1000 : 5000;
  const dataDir = join(workDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer({ dataDir, args: [...SLOW_LOG_OFF, '--shards', '1', '--replicas', '0'] });
  const agent = keepAliveAgent(CLIENTS);
  try {
    for (let n = 0; n < docs; n++) {
      const r = await request(server.port, 'PUT', `/r16/${n}`, body(n, next), { agent });
      if (r.status !== 200) throw new Error(`loading /r16/${n}: ${r.status}`);
    }
    const started = Date.now();
    const stopAt = started + durationMs;
    const windows = new Map(); // window index → latencies
    const failures = [];
    let requests = 0;
    const samples = []; // [minutes since start, MB]
    const sampler = (async () => {
      while (Date.now() < stopAt) {
        const mb = await rssMb(server.pid);
        if (mb !== null) samples.push([(Date.now() - started) / 60_000, mb]);
        await sleep(sampleMs);
      }
    })();
    await paced(CLIENTS, PERIOD_MS, stopAt, async () => {
      const pick = next();
      const n = Math.floor(next() * docs);
      const t0 = performance.now();
      try {
        const r = pick < 0.6
          ? await request(server.port, 'GET', `/r16/${n}`, undefined, { agent })
          : pick < 0.85
            ? await request(server.port, 'PUT', `/r16/${n}`, body(n, next), { agent })
            : await request(server.port, 'GET', `/r16/:search?q=t${Math.floor(next() * TERMS)}&limit=10`, undefined, { agent });
        const ms = performance.now() - t0;
        requests++;
        if (r.status !== 200) failures.push(`${r.status} ${r.json?.code ?? ''}`);
        const w = Math.floor((Date.now() - started) / windowMs);
        if (!windows.has(w)) windows.set(w, []);
        windows.get(w).push(ms);
      } catch (err) {
        failures.push(err.message);
      }
    });
    await sampler;
    const warm = samples.filter(([min]) => min * 60_000 >= warmupMs);
    const mbPerMin = slope(warm);
    const firstWindow = Math.ceil(warmupMs / windowMs);
    const lastWindow = Math.floor(durationMs / windowMs) - 1;
    const firstP99 = quantile(windows.get(firstWindow) ?? [], 0.99);
    const lastP99 = quantile(windows.get(lastWindow) ?? [], 0.99);
    const alive = server.alive();
    const rssFirst = warm[0]?.[1];
    const rssLast = warm.at(-1)?.[1];
    log(`R16 ${requests} requests, ${failures.length} failed; RSS ${rssFirst?.toFixed(1)} → ${rssLast?.toFixed(1)} MB after warm-up, slope ${mbPerMin.toFixed(2)} MB/min; p99 first ${firstP99.toFixed(1)} ms, last ${lastP99.toFixed(1)} ms`);
    const steady = mbPerMin < 1 && lastP99 <= 2 * firstP99;
    const pass = failures.length === 0 && alive && (steady || quick);
    const unit = quick ? `${windowMs / 1000} s window` : 'minute';
    const span = (ms) => (ms < 60_000 ? `${ms / 1000} s` : `${ms / 60_000} min`);
    return {
      pass,
      figure: `RSS slope ${mbPerMin.toFixed(2)} MB/min after ${span(warmupMs)} warm-up (${rssFirst?.toFixed(0)} → ${rssLast?.toFixed(0)} MB); p99 last ${unit} ${lastP99.toFixed(1)} ms vs first ${firstP99.toFixed(1)} ms (${(lastP99 / firstP99).toFixed(2)}×)${quick ? ', not gated in quick' : ''}; `
        + `${requests} requests in ${span(durationMs)} on ${docs} documents, ${failures.length} failed${alive ? '' : ', server died'}`,
      details: { samples, failures: failures.slice(0, 20), p99ByWindow: [...windows].map(([w, l]) => [w, +quantile(l, 0.99).toFixed(1), l.length]) },
    };
  } finally {
    agent.destroy();
    await server.stop();
  }
}
