#!/usr/bin/env node
// Memory under hostile bodies (issue 18, item 6): starts the built server
// (packages/cli/dist/main.js, with the flags `npm start` uses) on a temporary
// data directory and port 0, sends a 200-request warm-up, then N cases per
// codec (JSON with comments, MessagePack, YAML): valid documents, truncated,
// byte-flipped and spliced ones, 100,000-deep nesting, MessagePack headers
// declaring 4 GB, YAML alias bombs, 1,000,000-digit numbers, > 10,000 fields,
// 1,000,000-item arrays and 8 MB strings. Samples the server's RSS
// (/proc/PID/status VmRSS; VmHWM for the peak) and prints the status
// histogram, 5xx count, crashes, RSS after warm-up and at the end, growth,
// peak, and PASS/FAIL against the targets (growth < 50 MB, peak < 400 MB).
// The end RSS is sampled twice: 2 s after the last case ("immediate"), and
// once the idle server has settled — sampled every second until RSS has not
// fallen by 1 MB for --settle-quiet-s seconds, at most --settle-s — since the
// target is that the server gives memory back after such a burst; growth is
// judged on the settled figure.
// Talks only to 127.0.0.1; seeded; bounded in cases and time; stops itself.
//
//   node scripts/reliability/fuzz-bodies.mjs [--cases 20000] [--seed 18] [--time-limit-s 3600] [--codecs json,msgpack,yaml]
//     [--settle-s 60] [--settle-quiet-s 25] [--node-arg=--trace-gc] [--heap-snapshot DIR]
// --heap-snapshot writes a heap snapshot of the settled server into DIR (open it in Chrome's DevTools, Memory tab).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { encode as encodeMsgpack } from '@msgpack/msgpack';
import { stringify as stringifyYaml } from 'yaml';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';
import { random } from '../bench/bench-lib.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(ROOT, 'packages/cli/dist/main.js');
const GROWTH_MB_MAX = 50;
const PEAK_MB_MAX = 400;
const WARMUP = 200;
// Documents are written under this many IDs per codec, so valid cases replace each other instead of growing the index.
const IDS = 500;

const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '18' },
    'time-limit-s': { type: 'string', default: '3600' },
    'sample-ms': { type: 'string', default: '200' },
    codecs: { type: 'string', default: 'json,msgpack,yaml' },
    'settle-s': { type: 'string', default: '60' },
    'settle-quiet-s': { type: 'string', default: '25' },
    // Extra node flags for the server, after SERVER_NODE_FLAGS (e.g. --node-arg=--trace-gc).
    'node-arg': { type: 'string', multiple: true, default: [] },
    'heap-snapshot': { type: 'string' },
  },
});
const CASES = Number(args.cases);
const SEED = Number(args.seed);
const TIME_LIMIT_MS = Number(args['time-limit-s']) * 1000;
const SAMPLE_MS = Number(args['sample-ms']);
if (!(CASES >= 0) || !Number.isFinite(SEED)) throw new Error('--cases and --seed take numbers');

const draw = random(SEED);
const int = (n) => Math.floor(draw() * n);

// ---- bodies -------------------------------------------------------------

const WORDS = ['package', 'library', 'tool', 'free', 'game', 'server', 'data', 'the', 'of', 'and', 'search', 'index'];
function validDoc() {
  const doc = { name: `pkg-${int(1e6)}`, version: `${int(10)}.${int(100)}`, size: int(1e6), ratio: draw(), installed: draw() < 0.5 };
  doc.description = Array.from({ length: 1 + int(60) }, () => WORDS[int(WORDS.length)]).join(' ');
  doc.depends = Array.from({ length: int(12) }, () => `lib${int(500)}`);
  if (draw() < 0.3) doc.maintainer = { name: 'Someone', email: `m${int(100)}@example.org` };
  return doc;
}

const CODECS = {
  json: {
    type: 'application/json',
    encode: (doc) => Buffer.from(`// fuzz\n/* case */ ${JSON.stringify(doc, null, draw() < 0.3 ? 1 : 0).replace(/}$/, ',}')}`),
  },
  msgpack: { type: 'application/msgpack', encode: (doc) => Buffer.from(encodeMsgpack(doc)) },
  yaml: { type: 'application/yaml', encode: (doc) => Buffer.from(stringifyYaml(doc)) },
};

// The big bodies, built once per codec (they are what costs the server, not what costs this client).
const big = {};
function bigBodies(codec) {
  if (big[codec]) return big[codec];
  const million = Array.from({ length: 1_000_000 }, (_, i) => i % 10_000);
  const fields = {};
  for (let i = 0; i < 10_050; i++) fields[`f${i}`] = i;
  const string8 = 'lorem ipsum dolor '.repeat(Math.ceil((8 << 20) / 18)).slice(0, 8 << 20);
  const bodies = { bigArray: null, bigString: null, manyFields: null, deep: null, bigNumber: null, huge: null };
  if (codec === 'json') {
    bodies.bigArray = Buffer.from(`{"values":[${million.join(',')}]}`);
    bodies.bigString = Buffer.from(JSON.stringify({ text: string8 }));
    bodies.manyFields = Buffer.from(JSON.stringify(fields));
    bodies.deep = Buffer.from(`{"a":${'['.repeat(100_000)}1${']'.repeat(100_000)}}`);
    bodies.bigNumber = Buffer.from(`{"n":${'7'.repeat(1_000_000)}, "m": 0.${'3'.repeat(1_000_000)}}`);
    bodies.huge = Buffer.from(`{"a": "${'x'.repeat(100)}`); // unterminated string
  } else if (codec === 'msgpack') {
    bodies.bigArray = Buffer.from(encodeMsgpack({ values: million }));
    bodies.bigString = Buffer.from(encodeMsgpack({ text: string8 }));
    bodies.manyFields = Buffer.from(encodeMsgpack(fields));
    const deep = Buffer.alloc(100_000, 0x91); // fixarray of 1, 100,000 deep
    bodies.deep = Buffer.concat([Buffer.from([0x81, 0xa1, 0x61]), deep, Buffer.from([0x01])]);
    bodies.bigNumber = Buffer.from(encodeMsgpack({ n: '9'.repeat(1_000_000) }));
    // str32, array32 and map32 headers declaring 4 GB / 4 G items.
    bodies.huge = [[0xdb], [0xdd], [0xdf], [0xc6]].map((h) => Buffer.from([0x81, 0xa1, 0x61, ...h, 0xff, 0xff, 0xff, 0xff, 0x00]));
  } else {
    bodies.bigArray = Buffer.from(`values: [${million.join(',')}]\n`);
    bodies.bigString = Buffer.from(`text: "${string8}"\n`);
    bodies.manyFields = Buffer.from(Object.keys(fields).map((k) => `${k}: 1`).join('\n'));
    bodies.deep = Buffer.from(`a: ${'['.repeat(100_000)}1${']'.repeat(100_000)}\n`);
    bodies.bigNumber = Buffer.from(`n: ${'7'.repeat(1_000_000)}\n`);
    // Billion laughs: 10 levels of 10 aliases each.
    const lines = ['l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 10; i++) lines.push(`l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
    bodies.huge = Buffer.from(`${lines.join('\n')}\n`);
  }
  big[codec] = bodies;
  return bodies;
}

/** One case: [kind, body]. Big cases are rarer: each costs megabytes on the wire. */
function makeCase(codec) {
  const c = CODECS[codec];
  const r = draw();
  const valid = () => c.encode(validDoc());
  if (r < 0.30) return ['valid', valid()];
  if (r < 0.45) { const b = valid(); return ['truncated', b.subarray(0, int(b.length))]; }
  if (r < 0.60) {
    const b = Buffer.from(valid());
    for (let k = 1 + int(4); k > 0; k--) b[int(b.length)] = int(256);
    return ['flipped', b];
  }
  if (r < 0.75) {
    const a = valid();
    const b = CODECS[['json', 'msgpack', 'yaml'][int(3)]].encode(validDoc());
    return ['spliced', Buffer.concat([a.subarray(0, int(a.length)), b.subarray(int(b.length))])];
  }
  const bodies = bigBodies(codec);
  if (r < 0.80) return ['deep', bodies.deep];
  if (r < 0.85) { const h = bodies.huge; return ['huge-declared/alias-bomb', Array.isArray(h) ? h[int(h.length)] : h]; }
  if (r < 0.90) return ['many-fields', bodies.manyFields];
  if (r < 0.94) return ['big-number', bodies.bigNumber];
  if (r < 0.97) return ['big-array', bodies.bigArray];
  return ['big-string', bodies.bigString];
}

// ---- server ---------------------------------------------------------------

/** Signal the server for a heap snapshot and wait until its file stops growing. */
async function heapSnapshot(dir) {
  const before = new Set(readdirSync(dir));
  server.kill('SIGUSR2');
  for (let waited = 0, size = -1; waited < 300_000; waited += 500) {
    await new Promise((r) => setTimeout(r, 500));
    const file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (file === undefined) continue;
    const now = statSync(join(dir, file)).size;
    if (now === size && now > 0) return join(dir, file);
    size = now;
  }
  return 'none written in 300 s';
}

const dataDir = mkdtempSync(join(tmpdir(), 'tessera-fuzz-'));
const snapshotDir = args['heap-snapshot'] === undefined ? undefined : resolve(args['heap-snapshot']);
const snapshotFlags = snapshotDir === undefined ? [] : ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`];
const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...snapshotFlags, ...args['node-arg'], CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, '--log-level', 'info'], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, ...SERVER_ENV },
});
let crashed = null;
let stopping = false;
server.on('exit', (code, signal) => { if (!stopping) crashed = { code, signal }; });
server.stderr.on('data', (d) => process.stderr.write(`[server] ${d}`));
let errorLogs = 0;

const port = await new Promise((resolvePort, reject) => {
  let buffered = '';
  const timer = setTimeout(() => reject(new Error('server did not start in 30 s')), 30_000);
  server.stdout.on('data', (d) => {
    buffered += d.toString();
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'listening') { clearTimeout(timer); resolvePort(entry.port); }
        if (entry.level >= 50) errorLogs++;
      } catch { /* not a log line */ }
    }
  });
  server.on('exit', () => reject(new Error('server exited before listening')));
});

function memory() {
  try {
    const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024, anonMb: kb('RssAnon') / 1024, fileMb: kb('RssFile') / 1024 };
  } catch {
    return { rssMb: NaN, hwmMb: NaN, anonMb: NaN, fileMb: NaN };
  }
}
let peakSampledMb = 0;
const sampler = setInterval(() => { peakSampledMb = Math.max(peakSampledMb, memory().rssMb); }, SAMPLE_MS);

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function send(method, path, type, body) {
  return new Promise((resolveReply) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent, headers: { 'content-type': type, 'content-length': body.length } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolveReply(res.statusCode));
      res.on('error', () => resolveReply('reset'));
    });
    // A server that refuses early may close while the body is still going out: that is an answer, not a crash.
    req.on('error', () => resolveReply('closed'));
    req.end(body);
  });
}

/** The server's V8 heap figures from /:metrics (MB), to tell V8's share of RSS from malloc's. */
function heapFigures() {
  return new Promise((resolveFigures) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: '/:metrics', agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => {
        const mb = (re) => { const m = re.exec(text); return m ? +(Number(m[1]) / 1048576).toFixed(1) : null; };
        const figures = {
          heapTotal: mb(/^nodejs_heap_size_total_bytes (\S+)/m),
          heapUsed: mb(/^nodejs_heap_size_used_bytes (\S+)/m),
          external: mb(/^nodejs_external_memory_bytes (\S+)/m),
          // LevelDB's memtables and block caches (outside the JavaScript heap).
          store: mb(/^tessera_store_memory_bytes\{[^}]*\} (\S+)/m),
        };
        for (const m of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)/gm)) {
          if (Number(m[2]) >= 1048576) figures[`space_${m[1]}`] = +(Number(m[2]) / 1048576).toFixed(1);
        }
        resolveFigures(figures);
      });
      res.on('error', () => resolveFigures(null));
    });
    req.on('error', () => resolveFigures(null));
    req.end();
  });
}

// ---- run ------------------------------------------------------------------

const started = Date.now();
const histogram = new Map();
const perCodec = {};
const slowest = [];
let fiveHundreds = 0;

async function runCase(i, codec, kind, body) {
  const method = i % 2 === 0 ? 'PUT' : 'UPDATE';
  const t0 = performance.now();
  const status = await send(method, `/fuzz-${codec}/${i % IDS}?upsert`, CODECS[codec].type, body);
  const ms = performance.now() - t0;
  slowest.push({ ms, codec, kind, method, status, bytes: body.length });
  if (slowest.length > 50) { slowest.sort((a, b) => b.ms - a.ms); slowest.length = 10; }
  return status;
}

for (let i = 0; i < WARMUP; i++) {
  const codec = ['json', 'msgpack', 'yaml'][i % 3];
  await runCase(i, codec, 'warm-up', CODECS[codec].encode(validDoc()));
}
const afterWarmup = memory();
console.log(`warm-up: ${WARMUP} valid documents; RSS ${afterWarmup.rssMb.toFixed(1)} MB (anon ${afterWarmup.anonMb.toFixed(1)}, file ${afterWarmup.fileMb.toFixed(1)}), heap ${JSON.stringify(await heapFigures())}`);

let timedOut = false;
const phases = {};
outer: for (const codec of args.codecs.split(',').filter((c) => c in CODECS)) {
  const counts = (perCodec[codec] = { cases: 0, byKind: {} });
  for (let i = 0; i < CASES; i++) {
    if (crashed) break outer;
    if (Date.now() - started > TIME_LIMIT_MS) { timedOut = true; break outer; }
    const [kind, body] = makeCase(codec);
    const status = await runCase(i, codec, kind, body);
    counts.cases++;
    counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
    histogram.set(status, (histogram.get(status) ?? 0) + 1);
    if (typeof status === 'number' && status >= 500) fiveHundreds++;
    if ((i + 1) % 2000 === 0) {
      // Where the RSS is: anonymous (V8 heap + malloc) or file-backed (mapped code, LevelDB tables), and V8's share.
      const now = memory();
      console.log(`  ${codec} ${i + 1}/${CASES}: RSS ${now.rssMb.toFixed(1)} MB (anon ${now.anonMb.toFixed(1)}, file ${now.fileMb.toFixed(1)}), ` +
        `heap ${JSON.stringify(await heapFigures())}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  }
  phases[codec] = +memory().rssMb.toFixed(1);
  console.log(`after ${codec}: RSS ${phases[codec]} MB, peak so far ${Math.max(memory().hwmMb, peakSampledMb).toFixed(1)} MB, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

// A first end sample 2 s after the burst (a write-buffer flush, a GC).
await new Promise((r) => setTimeout(r, 2000));
const alive = crashed ? null : await send('GET', '/', 'application/json', Buffer.alloc(0));
const end = memory();
// Then let it give memory back: sample every second until RSS has not fallen by 1 MB for settle-quiet-s, at most settle-s.
const settleStarted = Date.now();
let settled = end;
let lowest = end.rssMb;
let lowestAt = Date.now();
while (!crashed && Date.now() - settleStarted < Number(args['settle-s']) * 1000 && Date.now() - lowestAt < Number(args['settle-quiet-s']) * 1000) {
  await new Promise((r) => setTimeout(r, 1000));
  settled = memory();
  if (settled.rssMb < lowest - 1) { lowest = settled.rssMb; lowestAt = Date.now(); }
}
const settleSeconds = (Date.now() - settleStarted) / 1000;
const heapSettled = crashed ? null : await heapFigures();
if (snapshotDir !== undefined && !crashed) console.error(`heap snapshot: ${await heapSnapshot(snapshotDir)}`);
clearInterval(sampler);
const peakMb = Math.max(end.hwmMb, settled.hwmMb || 0, peakSampledMb);
const immediateGrowthMb = end.rssMb - afterWarmup.rssMb;
const growthMb = settled.rssMb - afterWarmup.rssMb;

stopping = true;
server.kill('SIGTERM');
await new Promise((r) => (server.exitCode !== null || server.signalCode !== null ? r() : server.once('exit', r)));
agent.destroy();
rmSync(dataDir, { recursive: true, force: true });

slowest.sort((a, b) => b.ms - a.ms);
const pass = !crashed && fiveHundreds === 0 && !timedOut && growthMb < GROWTH_MB_MAX && peakMb < PEAK_MB_MAX;
console.log(JSON.stringify({
  node: process.version, seed: SEED, casesPerCodec: Object.fromEntries(Object.entries(perCodec).map(([k, v]) => [k, v.cases])),
  kinds: Object.fromEntries(Object.entries(perCodec).map(([k, v]) => [k, v.byKind])),
  statuses: Object.fromEntries([...histogram].sort()), fiveHundreds, errorLogs, crashed, timedOut, serverAnsweredAfter: alive,
  rssAfterWarmupMb: +afterWarmup.rssMb.toFixed(1), rssAfterPhaseMb: phases,
  rssEndMb: +end.rssMb.toFixed(1), immediateGrowthMb: +immediateGrowthMb.toFixed(1),
  rssSettledMb: +settled.rssMb.toFixed(1), settleSeconds: +settleSeconds.toFixed(0), heapSettledMb: heapSettled, growthMb: +growthMb.toFixed(1), peakRssMb: +peakMb.toFixed(1),
  seconds: +((Date.now() - started) / 1000).toFixed(1),
  slowest: slowest.slice(0, 5).map((s) => `${s.ms.toFixed(0)} ms ${s.codec} ${s.kind} ${s.method} ${s.bytes} B -> ${s.status}`),
}, null, 2));
console.log(`${pass ? 'PASS' : 'FAIL'}: growth ${growthMb.toFixed(1)} MB settled after ${settleSeconds.toFixed(0)} s (< ${GROWTH_MB_MAX}; ${immediateGrowthMb.toFixed(1)} MB 2 s after the burst), peak ${peakMb.toFixed(1)} MB (< ${PEAK_MB_MAX}), 5xx ${fiveHundreds}, crashes ${crashed ? 1 : 0}`);
process.exitCode = pass ? 0 : 1;
