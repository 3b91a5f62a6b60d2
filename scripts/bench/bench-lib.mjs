// Helpers the search benchmarks share (search.mjs, search-http.mjs, search-geo.mjs, search-fuzzy.mjs, engine-search.mjs, engine-search-ab.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Agent, request as httpRequest } from 'node:http';
import { createServer as createNetServer } from 'node:net';

/** Debian's python: python3-xapian lives there (as the peers' run.sh). */
const PEER_PYTHON = '/usr/bin/python3';

/** mulberry32: a small seeded generator, so every run draws the same queries. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One request on `agent`'s keep-alive connection through node:http: the
 * answer's JSON parsed (`value`) and as sent (`text`). Not undici: on this
 * machine class undici added 300–500 µs to every request with a body (SEARCH
 * p50 835 µs vs 329 µs with node:http against the same server), which would
 * be measured as Tessera's time.
 */
export function httpCall(agent, port, method, path, body, contentType = 'application/json') {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const req = httpRequest({
      agent, host: '127.0.0.1', port, method, path,
      headers: payload === undefined ? {} : { 'content-type': contentType, 'content-length': payload.length },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode, value: text.length > 0 ? JSON.parse(text) : undefined, text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A free TCP port on 127.0.0.1 (listened on once, then closed). */
export async function freePort() {
  const server = createNetServer();
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address();
  await new Promise((res) => server.close(res));
  return port;
}

export function round1(x) { return Math.round(x * 10) / 10; }

/** The peers' percentile: nearest rank on the sorted sample. */
export function pct(sorted, p) {
  if (sorted.length === 0) return null;
  const k = Math.min(sorted.length - 1, Math.max(0, Math.round((p / 100) * (sorted.length - 1))));
  return sorted[k];
}

/** The peers' common.summarize: q/s = queries / summed latency; latencies in µs. */
export function summarize(latUs) {
  const s = [...latUs].sort((a, b) => a - b);
  const totalS = s.reduce((a, b) => a + b, 0) / 1e6;
  return {
    n: s.length, qps: totalS ? round1(s.length / totalS) : null,
    p50_us: round1(pct(s, 50)), p90_us: round1(pct(s, 90)), p99_us: round1(pct(s, 99)), max_us: round1(s[s.length - 1]),
  };
}

/** `took` of a response in µs: `"3.3ms"`, `"559.354µs"`, `"1.2s"`, or seconds as a number (`human=false`). */
export function tookUs(took) {
  if (typeof took === 'number') return took * 1e6;
  const m = /^([\d.]+)(µs|ms|s)$/.exec(String(took));
  if (!m) return NaN;
  return Number(m[1]) * { µs: 1, ms: 1e3, s: 1e6 }[m[2]];
}

/**
 * The Tessera request body for one entry of the peers' queries.json (its
 * `xapiand_hint`, with `_all` as our `text`); `selector`: the hits' `_selector`.
 */
export function searchBodyFor(q, selector) {
  const body = {};
  if (q.group === 'range') {
    const r = q.range;
    body._query = { [r.field]: { _in: { _range: { _from: r.from, _to: r.to } } } };
    body._sort = [{ [r.field]: { _order: 'desc' } }, '_id'];
  } else {
    const parts = q.terms.map((t) => ({ text: t }));
    if (q.section) parts.push({ section: q.section });
    body._query = parts.length === 1 ? parts[0] : { _and: parts };
  }
  body._limit = q.limit;
  if (q.facet) body._aggs = { sections: { _values: { _field: q.facet.field, _limit: q.facet.size } } };
  if (selector !== undefined && q.limit > 0) body._selector = selector;
  return JSON.stringify(body);
}

/**
 * A bare node:http server in its own process that answers every request
 * with a fixed empty page at once: the HTTP floor of the search benchmarks
 * (or, given `answersFile`, with the answer recorded for its body).
 * Resolves with its port and a `stop`.
 */
export async function startBareHttpServer(answersFile) {
  const port = await freePort();
  // `answersFile`: JSON [[request body, answer text], …], answered from memory: the same bytes a search server sent,
  // so the client's parse and the wire cost what they cost with the server, and only the server's own work is left out.
  const script = answersFile === undefined
    ? `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => { s.writeHead(200, { 'content-type': 'application/json' }); s.end('{"total":0,"hits":[]}'); }); }).listen(${port}, '127.0.0.1', () => console.log('ready'));`
    : `const answers = new Map(JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')));
      require('node:http').createServer((q, s) => { const chunks = []; q.on('data', (c) => chunks.push(c)); q.on('end', () => {
        s.writeHead(200, { 'content-type': 'application/json' }); s.end(answers.get(Buffer.concat(chunks).toString()) ?? '{"total":0,"hits":[]}'); });
      }).listen(${port}, '127.0.0.1', () => console.log('ready'));`;
  const bare = spawn(process.execPath, ['-e', script, ...(answersFile === undefined ? [] : [answersFile])], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((res, rej) => { bare.stdout.once('data', res); bare.once('exit', (code) => rej(new Error(`bare server exited with ${code}`))); });
  return { port, stop: () => bare.kill('SIGTERM') };
}

/**
 * The ceiling of this client on this machine: `body` as SEARCH, one at a time
 * on one keep-alive connection, against the bare server above. No server can
 * answer this client faster; a q/s target above it is out of reach over HTTP.
 */
export async function bareHttpFloor(path, body) {
  const bare = await startBareHttpServer();
  try {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const lat = [];
    for (let i = 0; i < 1200; i++) {
      const start = process.hrtime.bigint();
      await httpCall(agent, bare.port, 'SEARCH', path, body);
      if (i >= 200) lat.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    agent.destroy();
    return summarize(lat);
  } finally {
    bare.stop();
  }
}

/**
 * `bodies` as SEARCHes on `path` from `connections` keep-alive connections at
 * once, each sending its next request as soon as its answer is read, until
 * `total` are answered (connection c starts at body c * bodies.length /
 * connections, so all of them are asked). Returns the wall q/s and the
 * latency summary seen by the client (with the latencies, µs, and the wall
 * time, s, to add rounds up).
 */
export async function concurrentSearches(port, path, bodies, connections, total) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const lat = [];
  let sent = 0;
  const clock = process.hrtime.bigint;
  const worker = async (c) => {
    let i = Math.floor((c * bodies.length) / connections);
    while (sent < total) {
      sent++;
      const start = clock();
      const reply = await httpCall(agent, port, 'SEARCH', path, bodies[i++ % bodies.length]);
      lat.push(Number(clock() - start) / 1000);
      if (reply.status !== 200) throw new Error(`concurrent search answered ${reply.status}: ${JSON.stringify(reply.value)}`);
    }
  };
  const t0 = clock();
  await Promise.all(Array.from({ length: connections }, (_, c) => worker(c)));
  const wallS = Number(clock() - t0) / 1e9;
  agent.destroy();
  return { ...summarize(lat), wall_qps: round1(lat.length / wallS), lat, wall_s: wallS };
}

/** results/ beside the peers' scripts, or under PEERS_OUT (run.sh and compare.py look there too). */
export function resultsDir(peersDir) {
  const out = resolve(process.env.PEERS_OUT ?? peersDir);
  const dir = join(out, 'results');
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    console.error(`${dir} is not writable (${err.code ?? err.message}): set PEERS_OUT to a writable folder, and pass the same PEERS_OUT to run.sh`);
    process.exit(2);
  }
  return dir;
}

/** VmHWM (peak resident set) and VmRSS of a process, MiB. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return { peak: round1(kb('VmHWM') / 1024), now: round1(kb('VmRSS') / 1024) };
}

/**
 * The peers' Xapian harness (bench_xapian.py) once, into `outDir`/results as run.sh writes it: its result
 * and its peak RSS, VmHWM of its process as the server's (sampled while it runs; its own figure,
 * getrusage's ru_maxrss, is the same kernel counter, read at its end), docs/s, and its timed (warm) pass per
 * query group (`query`: group → {qps, p50_us, p99_us}). Undefined when Xapian is not installed or XAPIAN=0.
 */
export async function runXapian(peersDir, outDir, run) {
  if (process.env.XAPIAN === '0') return undefined;
  const probe = spawnSync(PEER_PYTHON, ['-c', 'import xapian'], { stdio: 'ignore' });
  if (probe.status !== 0) {
    console.error(`no Xapian (${PEER_PYTHON} -c 'import xapian' failed): apt-get install -y python3-xapian, or XAPIAN=0`);
    return undefined;
  }
  const harness = spawn(PEER_PYTHON, [join(peersDir, 'bench_xapian.py')], {
    stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PEERS_OUT: dirname(outDir), RUN: run },
  });
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      const { peak: now } = memoryOf(harness.pid);
      if (now > peak) peak = now; // NaN once it is exiting
    } catch { /* exited */ }
  }, 100);
  const code = await new Promise((res) => harness.once('exit', res));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`bench_xapian.py exited with ${code}`);
  const result = JSON.parse(readFileSync(join(outDir, `xapian-run${run}.json`), 'utf8'));
  return { peakMb: Math.max(peak, result.rss_mb.peak_end), docsPerS: result.index.docs_per_s, query: result.query };
}

/** The one shard copy of /debian/ under the data dir of a kept scripts/bench/search run. */
export function shardPathIn(data) {
  const nodes = join(data, 'nodes');
  for (const node of readdirSync(nodes)) {
    const dir = join(nodes, node, 'debian');
    try {
      const copies = readdirSync(dir).filter((d) => d.startsWith('#'));
      if (copies.length > 0) return join(dir, copies.sort()[0]);
    } catch { /* not this node */ }
  }
  throw new Error(`no /debian/ shard under ${nodes}`);
}

/** A query of queries.json as an engine search request (unparsed: query, sort, aggs in the DSL). */
export function engineRequestFor(q, schema) {
  if (q.group === 'range') {
    const r = q.range;
    return { query: { [r.field]: { _in: { _range: { _from: r.from, _to: r.to } } } }, sort: [{ [r.field]: { _order: 'desc' } }, '_id'], k: q.limit, schema };
  }
  const parts = q.terms.map((t) => ({ text: t }));
  if (q.section) parts.push({ section: q.section });
  const request = { query: parts.length === 1 ? parts[0] : { _and: parts }, k: q.limit, schema };
  if (q.facet) request.aggs = { sections: { _values: { _field: q.facet.field, _limit: q.facet.size } } };
  return request;
}
