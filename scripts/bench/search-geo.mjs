// The `geo` group of scripts/bench/search.mjs (prints, never asserts): 1,000
// circle queries (`{"checkin": {"_in": {"_circle": …}}}`, top 10 by weight)
// on the accounts sample of ../shared/data/accounts.ndjson (1,000 documents
// with `checkin` points; `style`, a namespace, left out), over the same kind
// of keep-alive node:http connection as the other groups: one warm-up pass,
// one timed pass. Centres are accounts' check-ins moved by up to ±2°, radii
// log-uniform from 1 km to 1,000 km, from a seeded generator (SEED, default
// 42), so runs compare.
//
// search.mjs runs it after the peers' groups on its own server (index
// `accounts`, SHARDS shards). `ONLY=geo node scripts/bench/search.mjs` runs
// this group alone on a fresh server (seconds, not minutes).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';
import { httpCall, random } from './bench-lib.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ACCOUNTS = resolve(process.env.ACCOUNTS ?? join(ROOT, '../shared/data/accounts.ndjson'));
const INDEX = '/accounts/';
const QUERIES = 1000;

const call = (port, agent, method, path, body, contentType) => httpCall(agent, port, method, path, body, contentType);

function check(reply, what) {
  if (reply.status >= 300) throw new Error(`${what} answered ${reply.status}: ${JSON.stringify(reply.value)}`);
  return reply.value;
}

/** `took` in µs (`"3.3ms"`, `"559µs"`, or seconds as a number). */
function tookUs(took) {
  if (typeof took === 'number') return took * 1e6;
  const m = /^([\d.]+)(µs|ms|s)$/.exec(String(took));
  return m ? Number(m[1]) * { µs: 1, ms: 1e3, s: 1e6 }[m[2]] : NaN;
}

/** The 1,000 request bodies, from a seeded generator over the accounts' own places. */
function circleQueries(points, seed) {
  const rnd = random(seed);
  const bodies = [];
  for (let i = 0; i < QUERIES; i++) {
    const [lon, lat] = points[Math.floor(rnd() * points.length)];
    const centre = { _latitude: Math.max(-90, Math.min(90, lat + (rnd() - 0.5) * 4)), _longitude: lon + (rnd() - 0.5) * 4 };
    const radius = Math.round(1000 * 1000 ** rnd());
    bodies.push(JSON.stringify({ _query: { checkin: { _in: { _circle: { ...centre, _radius: radius } } } }, _limit: 10 }));
  }
  return bodies;
}

/**
 * Load the accounts into `accounts` (`shards` shards) on the server at `port`
 * and time the circle queries. Returns per-query latencies and server
 * `took`s in µs, and the matches per query (mean), for search.mjs's table.
 */
export async function runGeoGroup(port, shards = 1, seed = Number(process.env.SEED ?? 42)) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const lines = readFileSync(ACCOUNTS, 'utf8').trim().split('\n');
    const points = [];
    const docs = lines.map((line) => {
      const d = JSON.parse(line);
      delete d.style;
      points.push([d.checkin._point._longitude, d.checkin._point._latitude]);
      return JSON.stringify(d);
    });
    check(await call(port, agent, 'PUT', INDEX, { _settings: { number_of_shards: shards, number_of_replicas: 0 } }), `PUT ${INDEX}`);
    const report = check(await call(port, agent, 'RESTORE', INDEX, docs.join('\n'), 'application/x-ndjson'), 'RESTORE accounts');
    if (report.indexed !== docs.length) throw new Error(`RESTORE indexed ${report.indexed} of ${docs.length} accounts`);
    check(await call(port, agent, 'COMMIT', INDEX), 'COMMIT accounts');
    const bodies = circleQueries(points, seed);
    for (const body of bodies) check(await call(port, agent, 'SEARCH', INDEX, body), 'geo warm-up');
    const lat = [];
    const took = [];
    let matches = 0;
    for (const body of bodies) {
      const start = process.hrtime.bigint();
      const value = check(await call(port, agent, 'SEARCH', INDEX, body), 'geo query');
      lat.push(Number(process.hrtime.bigint() - start) / 1000);
      took.push(tookUs(value.took));
      matches += value.total;
    }
    return { lat, took, meanMatches: matches / bodies.length };
  } finally {
    agent.destroy();
  }
}

// ---- ONLY=geo: the group alone on a fresh server ------------------------------------------------

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round((p / 100) * (sorted.length - 1))))];
}

async function freePort() {
  const server = createServer();
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address();
  await new Promise((res) => server.close(res));
  return port;
}

/** Start `tessera serve`, run the geo group, print its row, stop. */
export async function runGeoOnly() {
  const shards = Number(process.env.SHARDS ?? 1);
  const data = mkdtempSync(join(tmpdir(), 'tessera-bench-geo-'));
  const port = await freePort();
  const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(ROOT, 'packages/cli/dist/main.js'), 'serve', '--port', String(port), '--data', data, '--log-level', 'warn'],
    { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((res) => server.once('exit', res));
  try {
    const agent = new Agent({ keepAlive: false });
    for (let i = 0; ; i++) {
      try { await call(port, agent, 'GET', '/'); break; } catch (err) {
        if (i >= 300 || server.exitCode !== null) throw new Error(`server did not start: ${err.message}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const { lat, took, meanMatches } = await runGeoGroup(port, shards);
    const ms = (us) => (us / 1000).toFixed(2);
    const s = [...lat].sort((a, b) => a - b);
    const t = [...took].sort((a, b) => a - b);
    const qps = Math.round(s.length / (s.reduce((a, b) => a + b, 0) / 1e6));
    console.log(`node ${process.version}, ${cpus().length} cores; accounts sample, ${shards} shard${shards === 1 ? '' : 's'}; ${QUERIES} circle queries, ${meanMatches.toFixed(1)} matches on average`);
    console.log('| group | queries | q/s | p50 ms | p99 ms | server took: mean ms | p50 ms | p99 ms |');
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(`| geo | ${s.length} | ${qps.toLocaleString('en-US')} | ${ms(pct(s, 50))} | ${ms(pct(s, 99))} | ${ms(t.reduce((a, b) => a + b, 0) / t.length)} | ${ms(pct(t, 50))} | ${ms(pct(t, 99))} |`);
  } finally {
    if (server.exitCode === null && server.signalCode === null) { server.kill('SIGTERM'); await exited; }
    rmSync(data, { recursive: true, force: true, maxRetries: 3 });
  }
}
