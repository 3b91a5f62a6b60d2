#!/usr/bin/env node
// Search benchmark (prints, never asserts): Tessera beside the peer engines of
// ../shared/bench/peers (Xapian, SQLite FTS5, PostgreSQL, MiniSearch, Orama) on
// their workload, as issue 4 asks. Run through `scripts/bench/search`, which
// builds first; this file expects packages/*/dist to be current.
//
// 1. Starts the real server (`tessera serve`) on a free port and a temp data dir.
// 2. Creates index `debian` with an explicit schema for the peers' workload:
//    `text` = package + summary + description, text without `_language` (no
//    stemming, no stop words), terms only; `section` keyword; `installed_size`
//    integer; `_id` integer = 0-based line number. The rest of the record is
//    stored and not indexed (`_dynamic: false`), as Xapian keeps the JSON line
//    as document data.
// 3. Loads the 63,440 documents through RESTORE (NDJSON, streamed in 1 MiB
//    chunks laid out before the clock starts, as the peers hold each
//    document's JSON line) and COMMIT, timed from parsed documents to the
//    durable commit like the peers.
// 4. Runs the 1,000 queries of queries.json (+ 100 facet queries) over HTTP on
//    one keep-alive connection (node:http), sequentially: one warm-up pass, one timed pass.
//    Then the bare node:http floor, and the same 1,000 queries from CONNECTIONS
//    connections at once (5,000 searches).
// 5. Writes results/tessera-run<RUN>.json in the shape of the peers' common.py
//    and prints a table, with the agreement of totals with Xapian's results.
//
// Environment: RUN (default 1), SHARDS (default 1; other values are recorded as
// engine `tessera-<n>shards`), PEERS_OUT (where results/ goes, as run.sh),
// SELECTOR (e.g. `_id`: hits carry only what the selector picks; engine
// `tessera-selector`), KEEP_DATA=1 (keep the data directory and print it),
// CONNECTIONS (50: the group of searches from that many connections at once),
// SERVER_ROOT (another built checkout whose server is measured, for an A/B with
// this bench), SERVER_PROFILE=DIR (the server runs with `--cpu-prof
// --cpu-prof-dir DIR`).
//
// The `geo` group (search-geo.mjs): 1,000 seeded circle queries on the accounts
// sample in an index of its own, run after the figures above are taken;
// ONLY=geo runs that group alone on a fresh server.
//
// The `fuzzy` group (search-fuzzy.mjs): 500 seeded fuzzy words (`w~1`, `w~2`,
// corpus words with one typo) on the Debian index, run after the peers'
// groups and before geo.
//
// Memory and indexing against Xapian in the same run (issue 24): before
// Tessera, the peers' Xapian harness (bench_xapian.py, Debian's python3-xapian)
// runs once on the same corpus and queries, and its peak RSS is taken as the
// server's: VmHWM of its process. Then the server's peak over the whole run
// (load and every query group), its RSS after start, after the load and once
// settled after the queries, and docs/s, each beside Xapian's with the ratio.
// XAPIAN=0 skips the harness (the ratios are then left out).
import { spawn, execSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Client } from 'undici';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';
import {
  bareHttpFloor, concurrentSearches, freePort, httpCall, memoryOf, resultsDir, round1, runXapian, searchBodyFor, summarize, tookUs,
} from './bench-lib.mjs';
import { runFuzzyGroup } from './search-fuzzy.mjs';
import { runGeoGroup, runGeoOnly } from './search-geo.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PEERS = resolve(process.env.PEERS_DIR ?? join(ROOT, '../shared/bench/peers'));
// The checkout whose (built) server is measured: this one, or another for an A/B with the same bench.
const SERVER_ROOT = resolve(process.env.SERVER_ROOT ?? ROOT);
const CORPUS = resolve(process.env.CORPUS ?? join(PEERS, '../../data/debian-packages.ndjson.gz'));
const RUN = process.env.RUN ?? '1';
const SHARDS = Number(process.env.SHARDS ?? 1);
const SELECTOR = process.env.SELECTOR || undefined;
const ENGINE = process.env.ENGINE
  ?? `tessera${SHARDS === 1 ? '' : `-${SHARDS}shards`}${SELECTOR === undefined ? '' : '-selector'}`;
const INDEX = '/debian/';
const CHUNK_BYTES = 1 << 20;
const GROUPS = ['text1', 'text2', 'filter', 'range'];
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
/** Issue 24's targets: peak RSS at most this times Xapian's, RSS settled within this of after start, docs/s at least this times Xapian's. */
const PEAK_RATIO_MAX = 1.2;
const SETTLED_GROWTH_MAX = 0.2;
const DOCS_PER_S_RATIO_MIN = 4;

if (!Number.isSafeInteger(SHARDS) || SHARDS < 1) throw new Error(`SHARDS must be a positive integer, not ${process.env.SHARDS}`);

/** Apparent size of every file below `path`, as the peers' common.du. */
function du(path) {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, entry.name);
    try {
      if (entry.isDirectory()) total += du(p);
      else total += lstatSync(p).size;
    } catch { /* removed meanwhile (a compaction) */ }
  }
  return total;
}

/**
 * The server's RSS once it has given back what it frees when idle (idle-gc.ts looks every 5 s, and gives
 * committed heap back in collections at least 6 s apart): sampled every second until it has not fallen for
 * 12 s, at least 20 s and at most 60 s; MiB.
 */
async function settledRss(pid) {
  const started = Date.now();
  let low = memoryOf(pid).now;
  let lowAt = started;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = memoryOf(pid).now;
    if (now < low - 0.5) { low = now; lowAt = Date.now(); }
    const waited = Date.now() - started;
    if (waited >= 60_000 || (waited >= 20_000 && Date.now() - lowAt >= 12_000)) return now;
  }
}

/**
 * Parsed corpus: the NDJSON lines RESTORE receives, one per document, id = line
 * number. Xapian stores the JSON line as document data and indexes the joined
 * text without storing it. Tessera does not index a `_store: false` field (the
 * shard derives terms from the stored form), so `text` is stored and replaces
 * package, summary and description: the document keeps the record's
 * information once, as Xapian's does.
 */
function loadCorpus() {
  const lines = gunzipSync(readFileSync(CORPUS)).toString('utf8').split('\n').filter((l) => l.length > 0);
  return lines.map((line, i) => {
    const { package: name, summary, description, ...rest } = JSON.parse(line);
    const text = [name, summary, description].filter(Boolean).join(' ');
    return JSON.stringify({ _id: i, text, ...rest });
  });
}

const SCHEMA = {
  _dynamic: false, // the rest of the record is stored, not indexed (Xapian: document data)
  _id: { _type: 'integer' },
  // No `_language`: no stemming and no stop words, as the peers. Terms only (no value slot).
  text: { _type: 'text', _index: 'field_terms' },
  section: { _type: 'keyword' },
  installed_size: { _type: 'integer' },
};

/** 'ok' when a facet reply carries the `_values` buckets; else why the facet group is skipped. */
function facetProblem(reply) {
  if (reply.status !== 200) return `${reply.status}: ${reply.value?.message ?? JSON.stringify(reply.value)}`;
  const buckets = reply.value?.aggregations?.sections;
  if (!Array.isArray(buckets) || buckets.some((b) => typeof b?._key !== 'string' || typeof b?._doc_count !== 'number')) {
    return `unexpected aggregations: ${JSON.stringify(reply.value?.aggregations).slice(0, 200)}`;
  }
  return 'ok';
}

async function call(client, method, path, body, headers = { 'content-type': 'application/json' }) {
  const res = await client.request({ method, path, headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, value: text.length > 0 ? JSON.parse(text) : undefined };
}

/** One query on the benchmark's keep-alive connection (bench-lib.mjs: node:http, not undici). */
const queryCall = (agent, port, path, body) => httpCall(agent, port, 'SEARCH', path, body);

function check(reply, what) {
  if (reply.status >= 300) throw new Error(`${what} answered ${reply.status}: ${JSON.stringify(reply.value)}`);
  return reply.value;
}

async function main() {
  const outDir = resultsDir(PEERS);
  const queriesFile = JSON.parse(readFileSync(join(PEERS, 'queries.json'), 'utf8'));
  const queries = queriesFile.queries;
  const timed = queries.filter((q) => q.group !== 'facet');
  const facets = queries.filter((q) => q.group === 'facet');
  const bodies = new Map(queries.map((q) => [q.id, searchBodyFor(q, SELECTOR)]));
  const xapian = await runXapian(PEERS, outDir, RUN);

  let t0 = process.hrtime.bigint();
  const docs = loadCorpus();
  const parseS = Number(process.hrtime.bigint() - t0) / 1e9;

  const data = mkdtempSync(join(tmpdir(), 'tessera-bench-search-'));
  const port = await freePort();
  let stderr = '';
  const profile = process.env.SERVER_PROFILE === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.SERVER_PROFILE)];
  const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...profile, join(SERVER_ROOT, 'packages/cli/dist/main.js'), 'serve', '--port', String(port), '--data', data, '--log-level', 'warn'],
    { stdio: ['ignore', 'inherit', 'pipe'], env: { ...process.env, ...SERVER_ENV } });
  server.stderr.on('data', (d) => { stderr += d; process.stderr.write(d); });
  const exited = new Promise((res) => server.once('exit', res));
  let client;
  try {
    client = new Client(`http://127.0.0.1:${port}`, { pipelining: 1, keepAliveTimeout: 60_000, bodyTimeout: 0, headersTimeout: 0 });
    for (let i = 0; ; i++) {
      try { await call(client, 'GET', '/'); break; } catch (err) {
        if (i >= 300 || server.exitCode !== null) throw new Error(`server did not start: ${err.message}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const afterStart = memoryOf(server.pid);

    // --- Indexing: from parsed documents to the durable commit. The NDJSON bytes are laid out first, as the peers
    // hold their documents' data (`raw`) before their clock starts: the client then streams them as it would a file.
    const ndjson = [];
    {
      let parts = [];
      let bytes = 0;
      for (const doc of docs) {
        parts.push(doc);
        bytes += doc.length + 1;
        if (bytes >= CHUNK_BYTES) { ndjson.push(Buffer.from(parts.join('\n') + '\n')); parts = []; bytes = 0; }
      }
      if (parts.length > 0) ndjson.push(Buffer.from(parts.join('\n') + '\n'));
    }
    t0 = process.hrtime.bigint();
    check(await call(client, 'PUT', INDEX, JSON.stringify({ _settings: { number_of_shards: SHARDS, number_of_replicas: 0 }, _schema: SCHEMA })), 'PUT /debian/');
    const report = check(await call(client, 'RESTORE', INDEX, Readable.from(ndjson), { 'content-type': 'application/x-ndjson' }), 'RESTORE');
    check(await call(client, 'COMMIT', INDEX), 'COMMIT');
    const buildS = Number(process.hrtime.bigint() - t0) / 1e9;
    if (report.indexed !== docs.length) {
      const failures = report.items.filter((it) => it.status !== undefined).slice(0, 5);
      throw new Error(`RESTORE indexed ${report.indexed} of ${docs.length}: ${JSON.stringify(failures)}`);
    }
    const bytesAtCommit = du(data);
    const afterBuild = memoryOf(server.pid);
    const { total: counted } = check(await call(client, 'COUNT', INDEX), 'COUNT');
    if (counted !== docs.length) throw new Error(`COUNT answered ${counted}, expected ${docs.length}`);

    // --- Queries: one connection, one at a time; one warm-up pass, one timed pass (common.run_queries).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const search = (q) => queryCall(agent, port, INDEX, bodies.get(q.id));
    for (const q of timed) check(await search(q), `query ${q.id}`);
    let facetStatus = 'ok';
    for (const q of facets) {
      const reply = await search(q);
      facetStatus = facetProblem(reply);
      if (facetStatus !== 'ok') break;
    }
    const lat = Object.fromEntries([...GROUPS, 'facet'].map((g) => [g, []]));
    const took = Object.fromEntries([...GROUPS, 'facet'].map((g) => [g, []]));
    const per = {};
    const clock = process.hrtime.bigint;
    const tAll0 = clock();
    for (const q of timed) {
      const start = clock();
      const value = check(await search(q), `query ${q.id}`);
      lat[q.group].push(Number(clock() - start) / 1000);
      took[q.group].push(tookUs(value.took));
      per[q.id] = { count: value.total, top: value.hits.map((h) => (SELECTOR === undefined ? h._id : h)) };
    }
    const tAll = Number(clock() - tAll0) / 1e9;
    if (facetStatus === 'ok') {
      for (const q of facets) {
        const start = clock();
        const value = check(await search(q), `query ${q.id}`);
        lat.facet.push(Number(clock() - start) / 1000);
        took.facet.push(tookUs(value.took));
        per[q.id] = { facet: value.aggregations.sections.map((b) => [b._key, b._doc_count]) };
      }
    }
    const stats = {};
    for (const [g, v] of Object.entries(lat)) if (v.length > 0) stats[g] = summarize(v);
    stats.all1000 = summarize(GROUPS.flatMap((g) => lat[g]));
    stats.all1000.wall_qps = round1(timed.length / tAll);
    // The server's own `took` (handler start to the page built: body, search, fetch; not the HTTP
    // exchange, the response's JSON or the client): the rest of the latency is the round trip.
    const serverTook = {};
    for (const [g, v] of Object.entries(took)) if (v.length > 0) serverTook[g] = summarize(v);
    serverTook.all1000 = summarize(GROUPS.flatMap((g) => took[g]));
    // The fixed cost of one query on this connection: a search that matches nothing.
    const floorBody = JSON.stringify({ _query: { _match_none: {} }, _limit: 0 });
    const floorLat = [];
    for (let i = 0; i < 1000; i++) {
      const start = clock();
      check(await queryCall(agent, port, INDEX, floorBody), 'empty search');
      if (i >= 200) floorLat.push(Number(clock() - start) / 1000);
    }
    const floor = summarize(floorLat);
    const bareFloor = await bareHttpFloor(INDEX, floorBody);
    // The same 1,000 queries from CONNECTIONS connections at once (issue 24): what the server answers when it is kept busy.
    const concurrent = await concurrentSearches(port, INDEX, timed.map((q) => bodies.get(q.id)), CONNECTIONS, 5 * timed.length);
    const rssEnd = memoryOf(server.pid).peak;
    const bytesBeforeShutdown = du(data);
    // The fuzzy group: the same index and connection, after the figures above so that it does not change them.
    const fuzzy = await runFuzzyGroup(docs, (body) => queryCall(agent, port, INDEX, body), tookUs);
    stats.fuzzy = summarize(fuzzy.lat);
    stats.fuzzy.mean_total = round1(fuzzy.meanTotal);
    serverTook.fuzzy = summarize(fuzzy.took);
    // The geo group: its own index, after the figures above so that it does not change them.
    const geo = await runGeoGroup(port, SHARDS);
    stats.geo = summarize(geo.lat);
    serverTook.geo = summarize(geo.took);
    const afterAll = memoryOf(server.pid);
    const settled = await settledRss(server.pid);

    agent.destroy();
    await client.close();
    client = undefined;
    server.kill('SIGTERM');
    await exited;
    const bytesAfterShutdown = du(data);

    let commit = 'unknown';
    try {
      const git = (args) => execSync(`git ${args}`, { cwd: SERVER_ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
      commit = git('rev-parse --short HEAD') + (git('status --porcelain -- packages') === '' ? '' : '+uncommitted packages/');
    } catch { /* not a checkout */ }
    const version = JSON.parse(readFileSync(join(SERVER_ROOT, 'packages/cli/package.json'), 'utf8')).version;
    const result = {
      engine: ENGINE, version: `tessera ${version} (${commit}, node ${process.version}, ${SHARDS} shard${SHARDS === 1 ? '' : 's'})`, run: RUN,
      docs: docs.length, parse_s: Math.round(parseS * 100) / 100,
      index: { seconds: Math.round(buildS * 100) / 100, docs_per_s: round1(docs.length / buildS), bytes: bytesAtCommit, mb: round1(bytesAtCommit / 1048576) },
      rss_mb: {
        after_parse: afterStart.peak, peak_after_build: afterBuild.peak, peak_end: rssEnd,
        // Issue 24: the peak over every group (fuzzy and geo too), and the resident set now at each point.
        peak_all: afterAll.peak, now_after_start: afterStart.now, now_after_build: afterBuild.now, now_settled: settled,
      },
      extra: {
        shards: SHARDS, selector: SELECTOR ?? null, connections: 1, count_mode: 'exact',
        bytes_before_shutdown: bytesBeforeShutdown, bytes_after_shutdown: bytesAfterShutdown,
        facet: facetStatus, rss_note: 'server process VmHWM (client not included)',
        xapian: xapian === undefined ? null : { peak_rss_mb: xapian.peakMb, docs_per_s: xapian.docsPerS },
        empty_search: { qps: floor.qps, p50_us: floor.p50_us, p99_us: floor.p99_us },
        bare_http: { qps: bareFloor.qps, p50_us: bareFloor.p50_us, p99_us: bareFloor.p99_us },
        concurrent: { connections: CONNECTIONS, queries: concurrent.n, qps: concurrent.wall_qps, p50_us: concurrent.p50_us, p99_us: concurrent.p99_us },
        server_took: Object.fromEntries(Object.entries(serverTook).map(([g, t]) => [g, { p50_us: t.p50_us, p99_us: t.p99_us, mean_us: round1(1e6 / t.qps) }])),
      },
      query: stats,
      results: per,
    };
    const outFile = join(outDir, `${ENGINE}-run${RUN}.json`);
    writeFileSync(outFile, JSON.stringify(result));
    printTable(result, facetStatus, outFile);
    printMemory(result, xapian);
    printAgreement(per, queries, outDir);
    console.log(`\nBeside the peers (medians over runs, count agreement): ${process.env.PEERS_OUT ? `PEERS_OUT=${process.env.PEERS_OUT} ` : ''}bash ${join(PEERS, 'run.sh')} report`);
  } finally {
    if (client) await client.destroy();
    if (server.exitCode === null && server.signalCode === null) { server.kill('SIGTERM'); await exited; }
    if (process.env.KEEP_DATA === '1') console.log(`data kept in ${data}`);
    else rmSync(data, { recursive: true, force: true, maxRetries: 3 });
  }
}

function printTable(r, facetStatus, outFile) {
  const ms = (us) => (us === null || us === undefined ? '-' : (us / 1000).toFixed(2));
  const n = (x) => (x === null || x === undefined ? '-' : Math.round(x).toLocaleString('en-US'));
  console.log(`${r.version}, ${cpus().length} cores; ${r.docs.toLocaleString('en-US')} documents`);
  console.log(`index: ${r.index.seconds} s, ${n(r.index.docs_per_s)} docs/s; on disk ${r.index.mb} MiB after COMMIT`
    + ` (${round1(r.extra.bytes_before_shutdown / 1048576)} MiB after the queries, ${round1(r.extra.bytes_after_shutdown / 1048576)} MiB after shutdown)`);
  console.log(`server peak RSS: ${r.rss_mb.after_parse} MiB after start, ${r.rss_mb.peak_after_build} MiB after indexing, ${r.rss_mb.peak_end} MiB at the end`);
  console.log('\n| group | queries | q/s | p50 ms | p99 ms | server took: mean ms | p50 ms | p99 ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const g of ['all1000', ...GROUPS, 'facet', 'fuzzy', 'geo']) {
    const s = r.query[g];
    const t = r.extra.server_took[g];
    if (!s) { console.log(`| ${g} | 0 | skipped: ${facetStatus} | - | - | - | - | - |`); continue; }
    console.log(`| ${g} | ${s.n} | ${n(s.qps)}${g === 'all1000' ? ` (wall ${n(s.wall_qps)})` : ''} | ${ms(s.p50_us)} | ${ms(s.p99_us)} | ${ms(t.mean_us)} | ${ms(t.p50_us)} | ${ms(t.p99_us)} |`);
  }
  const f = r.extra.empty_search;
  console.log(`fixed cost per query (SEARCH matching nothing, same connection): ${n(f.qps)} q/s, p50 ${ms(f.p50_us)} ms, p99 ${ms(f.p99_us)} ms`);
  const b = r.extra.bare_http;
  console.log(`HTTP floor (a bare node:http server answering at once, own process, same client): ${n(b.qps)} q/s, p50 ${ms(b.p50_us)} ms, p99 ${ms(b.p99_us)} ms`);
  const c = r.extra.concurrent;
  console.log(`${c.connections} connections at once (the 1,000 queries, ${n(c.queries)} searches): ${n(c.qps)} q/s (${(c.qps / r.query.all1000.wall_qps).toFixed(2)}x one connection's), p50 ${ms(c.p50_us)} ms, p99 ${ms(c.p99_us)} ms`);
  console.log(`all1000 over the HTTP floor: ${(r.query.all1000.qps / b.qps).toFixed(2)}x`);
  console.log(`\nwrote ${outFile}`);
}

/** Issue 24's figures: peak and settled RSS, docs/s, each beside the Xapian harness of the same run. */
function printMemory(r, xapian) {
  const mb = (x) => `${x.toFixed(1)} MiB`;
  const m = r.rss_mb;
  console.log('\nmemory and indexing against Xapian in this run (issue 24):');
  if (xapian === undefined) console.log('  (no Xapian harness in this run: ratios left out)');
  else {
    const peak = m.peak_all / xapian.peakMb;
    console.log(`  peak RSS: Tessera ${mb(m.peak_all)}, Xapian harness ${mb(xapian.peakMb)}: ${peak.toFixed(2)}x (target <= ${PEAK_RATIO_MAX})${peak <= PEAK_RATIO_MAX ? '' : ' MISSED'}`);
    const speed = r.index.docs_per_s / xapian.docsPerS;
    console.log(`  indexing: Tessera ${Math.round(r.index.docs_per_s).toLocaleString('en-US')} docs/s, Xapian ${Math.round(xapian.docsPerS).toLocaleString('en-US')} docs/s: `
      + `${speed.toFixed(2)}x (target >= ${DOCS_PER_S_RATIO_MIN})${speed >= DOCS_PER_S_RATIO_MIN ? '' : ' MISSED'}`);
  }
  const growth = m.now_settled / m.now_after_start - 1;
  console.log(`  Tessera RSS: ${mb(m.now_after_start)} after start, ${mb(m.now_after_build)} after the load, ${mb(m.now_settled)} settled after the queries: `
    + `${growth >= 0 ? '+' : ''}${(100 * growth).toFixed(0)} % of after start (target within ${100 * SETTLED_GROWTH_MAX} %)${growth <= SETTLED_GROWTH_MAX ? '' : ' MISSED'}`);
}

/**
 * Two top-10 bucket lists with the same counts in the same order, differing
 * only in how equal counts are ordered (Tessera: key descending, API.md §10.2;
 * Xapian's top_values: key ascending) and so which key a tie at the cut keeps.
 */
function sameUpToTies(a, b) {
  if (a.length !== b.length || a.some(([, c], i) => c !== b[i][1])) return false;
  const counts = new Map(b);
  return a.every(([k, c]) => !counts.has(k) || counts.get(k) === c);
}

/** Totals against Xapian's first run (what compare.py compares with), with the disagreeing queries. */
function printAgreement(per, queries, outDir) {
  const files = existsSync(outDir) ? readdirSync(outDir).filter((f) => /^xapian-run.*\.json$/.test(f) && !f.endsWith('-runt.json')).sort() : [];
  if (files.length === 0) { console.log('\nno Xapian results to compare with: run `bash run.sh xapian 1` first'); return; }
  const ref = JSON.parse(readFileSync(join(outDir, files[0]), 'utf8'));
  console.log(`\nagainst ${files[0]} (Xapian: ${ref.index.docs_per_s} docs/s, ${ref.index.mb} MiB, all1000 ${ref.query.all1000.qps} q/s):`);
  console.log('| group | totals equal | within 0.5 % | Tessera hits | Xapian hits | sum differs by | largest difference |');
  console.log('|---|---|---|---|---|---|---|');
  const differing = [];
  for (const g of [...GROUPS, 'facet']) {
    let equal = 0, close = 0, seen = 0, mine = 0, theirs = 0, worst = 0;
    for (const q of queries.filter((x) => x.group === g)) {
      const a = per[q.id], b = ref.results[String(q.id)];
      if (!a || !b) continue;
      seen++;
      if (g === 'facet') {
        if (JSON.stringify(a.facet) === JSON.stringify(b.facet)) equal++;
        else differing.push({ q, mine: a.facet, theirs: b.facet });
        if (sameUpToTies(a.facet, b.facet)) close++;
        continue;
      }
      mine += a.count; theirs += b.count;
      const off = Math.abs(a.count - b.count) / Math.max(1, b.count);
      if (a.count === b.count) equal++;
      else differing.push({ q, mine: a.count, theirs: b.count });
      if (off <= 0.005) close++;
      worst = Math.max(worst, off);
    }
    const share = (k) => `${k}/${seen} (${(100 * k / seen).toFixed(1)} %)`;
    const pc = (x) => `${(100 * x).toFixed(2)} %`;
    if (seen === 0) console.log(`| ${g} | - | - | - | - | - | - |`);
    else if (g === 'facet') console.log(`| ${g} (top-10 equal; up to the order of ties) | ${share(equal)} | ${share(close)} | - | - | - | - |`);
    else {
      console.log(`| ${g} | ${share(equal)} | ${share(close)} | ${mine.toLocaleString('en-US')} | ${theirs.toLocaleString('en-US')} | `
        + `${pc((mine - theirs) / Math.max(1, theirs))} | ${pc(worst)} |`);
    }
    if (g === 'range') {
      const topEqual = queries.filter((x) => x.group === 'range' && per[x.id] && ref.results[String(x.id)])
        .filter((x) => JSON.stringify(per[x.id].top) === JSON.stringify(ref.results[String(x.id)].top)).length;
      console.log(`| range top-10 ids | ${share(topEqual)} | | | | | |`);
    }
  }
  if (differing.length > 0) {
    console.log(`\n${differing.length} queries differ (the first 25 counts, the first 5 facets):`);
    const shown = [...differing.filter((d) => d.q.group !== 'facet').slice(0, 25), ...differing.filter((d) => d.q.group === 'facet').slice(0, 5)];
    for (const { q, mine, theirs } of shown) {
      const what = q.group === 'range' ? `${q.range.from}..${q.range.to}` : `${q.terms.join(' ')}${q.section ? ` section=${q.section}` : ''}`;
      console.log(`  #${q.id} ${q.group} [${what}]: Tessera ${JSON.stringify(mine)}, Xapian ${JSON.stringify(theirs)}`);
    }
  }
}

await (process.env.ONLY === 'geo' ? runGeoOnly() : main());
