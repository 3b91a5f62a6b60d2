#!/usr/bin/env node
// The search benchmark's query mix over HTTP alone (prints, never asserts), on
// an index kept by a full run, so that two builds can be compared in minutes
// (issue 24: the path around the engine):
//
//   KEEP_DATA=1 scripts/bench/search                 # once: builds the Debian index, prints its data dir
//   node scripts/bench/search-http.mjs <data dir>    # this checkout's server beside the HTTP floor
//   BASE_ROOT=../wt-base node scripts/bench/search-http.mjs <data dir>   # and another checkout's (built) server
//
// Each server (this checkout's, BASE_ROOT's, each on its own copy of the data
// dir, as `tessera serve`) and the bare node:http server of search.mjs's
// HTTP floor run side by side, and the client alternates between them query
// by query: on a shared machine whose load changes by the second, each figure
// is then taken under the same load as the others, and their ratios hold
// where absolute figures do not. One keep-alive connection per server: a
// warm-up pass, then PASSES (default 2) timed passes of the 1,000 queries of
// queries.json, each query sent to every server (and the floor's empty
// search to the bare one) in turn, the first turn rotating. Then the same
// queries from CONNECTIONS (default 50) connections at once, in 5 rounds of
// 1,000 searches per server that alternate between the servers.
//
// A second, replay floor takes its turn too: a bare node:http server that
// answers each query with the very bytes this checkout's server answered it
// in the warm-up pass, from memory. The plain floor answers 21 bytes; a page
// of ten Debian packages is ~10 KB, which the wire and the client's JSON.parse
// pay whoever sends it. Against the replay floor, what is left is the
// server's own work (parse, search, fetch, render).
//
// Prints per server: q/s and its ratio to both floors, the server's `took`
// p50/p99, its CPU per search (user + system of the process, all threads,
// /proc/PID/stat), and the concurrent q/s (its ratio to one connection's), p99
// and CPU per search; with BASE_ROOT, this checkout's figures over the base's.
// The last lines are the same as JSON.
//
// SERVER_ROOT: another built checkout in this checkout's place (swapping it
// with BASE_ROOT tells a difference of builds from one of places in the turn).
// SELECTOR (e.g. `_id`): hits carry only what it picks, as in search.mjs.
// SERVER_PROFILE=DIR: this checkout's server runs with `--cpu-prof
// --cpu-prof-dir DIR` (the profile covers the whole run).
// RESPONSES=FILE: writes every answer of this checkout's server in the first
// timed pass, `took` blanked, one per line (FILE.base for BASE_ROOT's), to
// compare two builds byte for byte.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';
import { concurrentSearches, freePort, httpCall, round1, searchBodyFor, startBareHttpServer, summarize, tookUs } from './bench-lib.mjs';
import { cpuSeconds, stopOnInterrupt } from './load-lib.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PEERS = resolve(process.env.PEERS_DIR ?? join(ROOT, '../shared/bench/peers'));
const SELECTOR = process.env.SELECTOR || undefined;
const PASSES = Number(process.env.PASSES ?? 2);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const CONCURRENT_ROUNDS = 5;
const INDEX = '/debian/';
const FLOOR_BODY = JSON.stringify({ _query: { _match_none: {} }, _limit: 0 });

const kept = process.argv[2];
if (!kept) {
  console.error('usage: search-http.mjs <data dir of a KEEP_DATA=1 scripts/bench/search run>');
  process.exit(2);
}

const timed = JSON.parse(readFileSync(join(PEERS, 'queries.json'), 'utf8')).queries.filter((q) => q.group !== 'facet');
const bodies = timed.map((q) => searchBodyFor(q, SELECTOR));
const clock = process.hrtime.bigint;

/** `tessera serve` of checkout `root` on a copy of the kept data dir, answering once COUNT does. */
async function startServer(name, root, profileDir) {
  const data = mkdtempSync(join(tmpdir(), 'tessera-bench-search-http-'));
  cpSync(kept, data, { recursive: true });
  const port = await freePort();
  const profile = profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(profileDir)];
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...profile, join(root, 'packages/cli/dist/main.js'), 'serve', '--port', String(port), '--data', data, '--log-level', 'error'],
    { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((res) => child.once('exit', res));
  const server = {
    name, root, port, child, agent: new Agent({ keepAlive: true, maxSockets: 1 }), lat: [], took: [], responses: [],
    async stop() {
      server.agent.destroy();
      if (child.exitCode === null && child.signalCode === null) { child.kill('SIGTERM'); await exited; }
      rmSync(data, { recursive: true, force: true, maxRetries: 3 });
    },
  };
  for (let i = 0; ; i++) {
    try { if ((await httpCall(server.agent, port, 'COUNT', INDEX)).status === 200) break; } catch (err) {
      if (i >= 600 || child.exitCode !== null) { await server.stop(); throw new Error(`${root}: server did not start: ${err.message}`); }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return server;
}

const servers = [];
let bare;
let replay;
const stopAll = async () => {
  bare?.stop();
  replay?.stop();
  bare = undefined;
  replay = undefined;
  await Promise.all(servers.splice(0).map((s) => s.stop()));
};
stopOnInterrupt(stopAll);
try {
  servers.push(await startServer('this', resolve(process.env.SERVER_ROOT ?? ROOT), process.env.SERVER_PROFILE));
  if (process.env.BASE_ROOT) servers.push(await startServer('base', resolve(process.env.BASE_ROOT)));
  bare = await startBareHttpServer();
  // The warm-up pass records this checkout's answers for the replay floor: a bare server sending the same bytes.
  const answers = new Map();
  for (const server of servers) {
    for (const body of bodies) {
      const reply = await httpCall(server.agent, server.port, 'SEARCH', INDEX, body);
      if (server === servers[0]) answers.set(body, reply.text);
    }
  }
  const answersFile = join(mkdtempSync(join(tmpdir(), 'tessera-bench-answers-')), 'answers.json');
  writeFileSync(answersFile, JSON.stringify([...answers]));
  replay = await startBareHttpServer(answersFile);
  /** The floors take turns as the servers do: the plain one is sent the empty search, the replay one each query. */
  const floorTurn = (server, bodyFor) => ({ port: server.port, agent: new Agent({ keepAlive: true, maxSockets: 1 }), bodyFor, lat: [] });
  const plainFloor = floorTurn(bare, () => FLOOR_BODY);
  const replayFloor = floorTurn(replay, (body) => body);
  const floors = [plainFloor, replayFloor];
  for (const f of floors) for (const body of bodies.slice(0, 200)) await httpCall(f.agent, f.port, 'SEARCH', INDEX, f.bodyFor(body));

  const cpuBefore = servers.map((s) => cpuSeconds(s.child.pid));
  const turns = [...servers, ...floors];
  let step = 0;
  for (let pass = 0; pass < PASSES; pass++) {
    for (const body of bodies) {
      // Each server, and the floor, takes its turn first as often as the others (no place in the order favoured).
      step++;
      for (let t = 0; t < turns.length; t++) {
        const server = turns[(step + t) % turns.length];
        const start = clock();
        if (floors.includes(server)) {
          await httpCall(server.agent, server.port, 'SEARCH', INDEX, server.bodyFor(body));
          server.lat.push(Number(clock() - start) / 1000);
          continue;
        }
        const reply = await httpCall(server.agent, server.port, 'SEARCH', INDEX, body);
        server.lat.push(Number(clock() - start) / 1000);
        if (reply.status !== 200) throw new Error(`${server.root}: ${body} answered ${reply.status}: ${reply.text}`);
        server.took.push(tookUs(reply.value.took));
        if (pass === 0 && process.env.RESPONSES) server.responses.push(reply.text.replace(/"took":("[^"]*"|[\d.e-]+)/, '"took":-'));
      }
    }
  }
  servers.forEach((s, i) => { s.cpuUs = (1e6 * (cpuSeconds(s.child.pid) - cpuBefore[i])) / s.lat.length; });
  for (const f of floors) f.agent.destroy();
  rmSync(dirname(answersFile), { recursive: true, force: true });
  if (process.env.RESPONSES) {
    for (const s of servers) writeFileSync(process.env.RESPONSES + (s.name === 'this' ? '' : '.base'), s.responses.join('\n') + '\n');
  }

  for (const s of servers) Object.assign(s, { concurrentLat: [], concurrentS: 0, concurrentCpuS: 0 });
  for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
    for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
      const cpu0 = cpuSeconds(s.child.pid);
      const r = await concurrentSearches(s.port, INDEX, bodies, CONNECTIONS, bodies.length);
      s.concurrentCpuS += cpuSeconds(s.child.pid) - cpu0;
      s.concurrentLat.push(...r.lat);
      s.concurrentS += r.wall_s;
    }
  }

  const plain = summarize(plainFloor.lat);
  const replayed = summarize(replayFloor.lat);
  const ms = (us) => (us / 1000).toFixed(3);
  console.log(`node ${process.version}, ${cpus().length} cores${SELECTOR === undefined ? '' : `, _selector ${SELECTOR}`}; HTTP floor (bare node:http, alternated with the searches): ${plain.qps} q/s, p50 ${ms(plain.p50_us)} ms, p99 ${ms(plain.p99_us)} ms; `
    + `replay floor (bare node:http sending this checkout's answers from memory): ${replayed.qps} q/s, p50 ${ms(replayed.p50_us)} ms, p99 ${ms(replayed.p99_us)} ms`);
  const figures = servers.map((s) => {
    const one = summarize(s.lat);
    const took = summarize(s.took);
    const many = summarize(s.concurrentLat);
    const manyQps = round1(s.concurrentLat.length / s.concurrentS);
    const f = {
      server: s.name, root: s.root, qps: one.qps, over_floor: Math.round((1000 * one.qps) / plain.qps) / 1000,
      over_replay: Math.round((1000 * one.qps) / replayed.qps) / 1000, p50_us: one.p50_us, p99_us: one.p99_us,
      took_p50_us: took.p50_us, took_p99_us: took.p99_us, cpu_us: Math.round(s.cpuUs),
      concurrent_qps: manyQps, concurrent_over_one: Math.round((100 * manyQps) / one.qps) / 100, concurrent_p50_us: many.p50_us, concurrent_p99_us: many.p99_us,
      concurrent_cpu_us: Math.round((1e6 * s.concurrentCpuS) / s.concurrentLat.length), floor_qps: plain.qps, replay_qps: replayed.qps,
    };
    console.log(`${s.root}: one connection ${f.qps} q/s (${f.over_floor}x the floor, ${f.over_replay}x the replay floor), p50 ${ms(f.p50_us)} ms, p99 ${ms(f.p99_us)} ms; `
      + `server took p50 ${ms(f.took_p50_us)} ms, p99 ${ms(f.took_p99_us)} ms; server CPU ${f.cpu_us} µs per search; `
      + `${CONNECTIONS} connections ${f.concurrent_qps} q/s (${f.concurrent_over_one}x one), p99 ${ms(f.concurrent_p99_us)} ms, CPU ${f.concurrent_cpu_us} µs per search`);
    return f;
  });
  if (figures.length === 2) {
    const [a, b] = figures;
    const r = (x, y) => Math.round((1000 * x) / y) / 1000;
    const ratios = { qps: r(a.qps, b.qps), took_p99: r(a.took_p99_us, b.took_p99_us), cpu: r(a.cpu_us, b.cpu_us), concurrent_qps: r(a.concurrent_qps, b.concurrent_qps), concurrent_p99: r(a.concurrent_p99_us, b.concurrent_p99_us), concurrent_cpu: r(a.concurrent_cpu_us, b.concurrent_cpu_us) };
    console.log(`this over base: q/s ${ratios.qps}x, took p99 ${ratios.took_p99}x, CPU per search ${ratios.cpu}x; ${CONNECTIONS} connections: q/s ${ratios.concurrent_qps}x, p99 ${ratios.concurrent_p99}x, CPU per search ${ratios.concurrent_cpu}x`);
    figures.push({ ratios });
  }
  for (const f of figures) console.log(JSON.stringify(f));
} finally {
  await stopAll();
}
