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
//     [--settle-s 60] [--settle-quiet-s 25] [--node-arg=--trace-gc] [--heap-snapshot DIR] [--concurrency 1] [--heavy N]
// The default is issue 18's protocol: one request at a time, a quarter of the cases heavy (makeCase).
// R8's high volume: --cases 1000000 --heavy 1000 --concurrency 24 — small cases (valid, truncated, flipped,
// spliced, duplicate keys, wrong types, odd values and keys, random bytes, nesting around the depth limit)
// cut from pools built once, with N heavy ones per codec among them.
// --heap-snapshot writes a heap snapshot of the settled server into DIR (open it in Chrome's DevTools, Memory tab).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect as connectTcp } from 'node:net';
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
    // High volume (R8's 10⁶ per codec): requests in flight at once, each on its own keep-alive connection,
    concurrency: { type: 'string', default: '1' },
    // sent over concurrency/pipeline connections, that many pipelined on each (1: node:http, one per connection),
    pipeline: { type: 'string', default: '1' },
    // and with --heavy N, N heavy cases per codec evenly spaced among small ones (default: makeCase's mix).
    heavy: { type: 'string' },
  },
});
const CASES = Number(args.cases);
const SEED = Number(args.seed);
const TIME_LIMIT_MS = Number(args['time-limit-s']) * 1000;
const SAMPLE_MS = Number(args['sample-ms']);
const CONCURRENCY = Number(args.concurrency);
const HEAVY = args.heavy === undefined ? undefined : Math.min(Number(args.heavy), CASES);
if (!(CASES >= 0) || !Number.isFinite(SEED)) throw new Error('--cases and --seed take numbers');
if (!(CONCURRENCY >= 1) || !(Number(args.pipeline) >= 1) || (HEAVY !== undefined && !(HEAVY >= 0))) throw new Error('--concurrency and --pipeline take a number >= 1, --heavy one >= 0');

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
  return heavyCase(codec, r);
}

const HEAVY_KINDS = new Set(['deep', 'huge-declared/alias-bomb', 'many-fields', 'big-number', 'big-array', 'big-string']);
/** A hostile, megabytes-heavy case; `r` in [0.75, 1) picks the kind (makeCase's share of each). */
function heavyCase(codec, r) {
  const bodies = bigBodies(codec);
  if (r < 0.80) return ['deep', bodies.deep];
  if (r < 0.85) { const h = bodies.huge; return ['huge-declared/alias-bomb', Array.isArray(h) ? h[int(h.length)] : h]; }
  if (r < 0.90) return ['many-fields', bodies.manyFields];
  if (r < 0.94) return ['big-number', bodies.bigNumber];
  if (r < 0.97) return ['big-array', bodies.bigArray];
  return ['big-string', bodies.bigString];
}

// ---- high volume (--heavy N) ------------------------------------------------
// For 10⁶ bodies per codec the small cases are cut from pools built once per codec (encoded documents
// of each kind) and mutated into the sending worker's scratch buffer, so a case costs the generator
// microseconds; the heavy kinds come at N evenly spaced positions instead of makeCase's share.

/** Bytes that stand for themselves in a body: an odd literal (JSON/YAML text) or MessagePack encoding. */
class Raw {
  constructor(codec, literal) { this.bytes = codec === 'msgpack' ? Buffer.from(literal) : Buffer.from(String(literal)); }
}
const ODD_LITERALS = {
  json: ['1e400', '-0', 'NaN', 'Infinity', '123456789012345678901234567890', '"\\ud800"', '"a\\u0000b"', '0x10', '01', '.5',
    '[1,,2]', '{"a" 1}', 'true false', '"\\x41"', "'single'", 'undefined', '[]', '{}', '""', '{"_id": 1}'],
  yaml: ['.nan', '.inf', '-.inf', '!!binary aGVsbG8=', '!!timestamp 2001-12-14t21:59:43.10-05:00', '0x1F', '0o17', '~',
    '!custom x', '*nowhere', '&x [1, 2]', '"\\ud800"', '!!str', '!!map [1]', '|\n  block\n  text', '>-\n  folded', '{? [a]: 1}',
    '[a, b]: c', '"a\\0b"', '!!int "12"'],
  msgpack: [[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], [0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0], [0xca, 0x7f, 0xc0, 0, 0],
    [0xcb, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0], [0xc4, 3, 1, 2, 3], [0xd6, 0xff, 0, 0, 0, 0], [0xc7, 1, 5, 0], [0xc1], [0xc0],
    [0xa2, 0xed, 0xa0], [0xd9, 0x05, 0x61], [0x92, 0x80, 0x90], [0x81, 0xc0, 0x01], [0x81, 0x91, 0x01, 0x02], [0xd4, 0x00, 0x01],
    [0xdc, 0x00, 0x00], [0xde, 0x00, 0x01], [0xc2], [0xcc, 0xff], [0xd0, 0x80]],
};
const ODD_KEYS = ['_id', '_schema', '_type', '_recurse', '_script', '_value', '_namespace', '', ' ', 'a.b', '.', '..', 'a..b',
  '\u0000', '💥', 'k'.repeat(1000), '__proto__', 'constructor', 'toString', '_', '#', '*', 'name.first', '_strict'];
const TYPE_SWAPS = ['text', 123, -1.5e300, true, null, [1, 'a', {}], { x: { y: 1 } }, [], {}, '', [[1]], 0.5];
const KEYS = ['name', 'version', 'size', 'ratio', 'installed', 'description', 'depends', 'maintainer'];
const pick = (list) => list[int(list.length)];

/** An object from key-value pairs, duplicate keys kept, values or Raw literals as they stand. */
function encodePairs(codec, pairs) {
  if (codec === 'msgpack') {
    const n = pairs.length;
    const header = n < 16 ? [0x80 | n] : [0xde, n >> 8, n & 0xff];
    const part = (v) => (v instanceof Raw ? v.bytes : encodeMsgpack(v));
    return Buffer.concat([Buffer.from(header), ...pairs.flatMap(([k, v]) => [part(k), part(v)])]);
  }
  const text = (v) => (v instanceof Raw ? v.bytes.toString() : JSON.stringify(v));
  const entries = pairs.map(([k, v]) => `${text(k)}: ${text(v)}`);
  return Buffer.from(codec === 'json' ? `{${entries.join(', ')}}` : `${entries.join('\n')}\n`);
}

function nested(codec, depth) {
  const objects = draw() < 0.5;
  if (codec === 'msgpack') {
    const level = objects ? [0x81, 0xa1, 0x61] : [0x91];
    return Buffer.concat([Buffer.from([0x81, 0xa1, 0x61]), Buffer.alloc(depth * level.length).fill(Buffer.from(level)), Buffer.from([0x01])]);
  }
  const [open, close] = objects ? ['{"a": ', '}'] : ['[', ']'];
  return Buffer.from(`${codec === 'json' ? '{"a": ' : 'a: '}${open.repeat(depth)}1${close.repeat(depth)}${codec === 'json' ? '}' : '\n'}`);
}

const smallPools = {};
let randomBlock = null;
function poolsOf(codec) {
  if (smallPools[codec]) return smallPools[codec];
  const c = CODECS[codec];
  const odd = () => new Raw(codec, pick(ODD_LITERALS[codec]));
  const pools = {
    valid: Array.from({ length: 2048 }, () => c.encode(validDoc())),
    duplicateKeys: Array.from({ length: 512 }, () => {
      const pairs = Object.entries(validDoc());
      for (let k = 1 + int(4); k > 0; k--) pairs.splice(int(pairs.length + 1), 0, [pick(pairs)[0], pick(TYPE_SWAPS)]);
      return encodePairs(codec, pairs);
    }),
    wrongTypes: Array.from({ length: 1024 }, () => {
      const doc = validDoc();
      for (let k = 1 + int(3); k > 0; k--) doc[pick(KEYS)] = pick(TYPE_SWAPS);
      return c.encode(doc);
    }),
    oddValues: Array.from({ length: 1024 }, () => {
      const pairs = Object.entries(validDoc()).slice(0, 1 + int(4));
      for (let k = 1 + int(3); k > 0; k--) pairs.push(draw() < 0.5 ? [pick(ODD_KEYS), pick(TYPE_SWAPS)] : [pick(KEYS), odd()]);
      if (codec !== 'json' && draw() < 0.2) pairs.push([odd(), 1]); // a key that is not a string
      return encodePairs(codec, pairs);
    }),
    // Around the depth limit (128 by default): under it, at it, past it.
    nested: Array.from({ length: 256 }, () => nested(codec, 1 + int(400))),
  };
  randomBlock ??= Buffer.from(Array.from({ length: 1 << 20 }, () => int(256)));
  smallPools[codec] = pools;
  return pools;
}

/** A small case: [kind, body]; `scratch` is the sending worker's buffer, reused once its request is answered. */
function smallCase(codec, scratch) {
  const pools = poolsOf(codec);
  const r = draw();
  if (r < 0.20) return ['valid', pick(pools.valid)];
  if (r < 0.32) { const b = pick(pools.valid); return ['truncated', b.subarray(0, int(b.length))]; }
  if (r < 0.46) {
    const b = pick(pools.valid);
    b.copy(scratch);
    for (let k = 1 + int(4); k > 0; k--) scratch[int(b.length)] = int(256);
    return ['flipped', scratch.subarray(0, b.length)];
  }
  if (r < 0.56) {
    const a = pick(pools.valid);
    const b = pick(poolsOf(pick(['json', 'msgpack', 'yaml'])).valid);
    const head = a.copy(scratch, 0, 0, int(a.length));
    return ['spliced', scratch.subarray(0, head + b.copy(scratch, head, int(b.length)))];
  }
  if (r < 0.64) return ['duplicate-keys', pick(pools.duplicateKeys)];
  if (r < 0.74) return ['wrong-types', pick(pools.wrongTypes)];
  if (r < 0.84) return ['odd-values', pick(pools.oddValues)];
  if (r < 0.92) { const at = int(randomBlock.length - 1024); return ['random-bytes', randomBlock.subarray(at, at + 1 + int(1024))]; }
  return ['nested', pick(pools.nested)];
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

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
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

/**
 * Requests pipelined on one keep-alive connection (--pipeline), answered in order: fewer reads and writes
 * per request on both sides than one request per round trip. The document answers are length-framed; an
 * answer that is not (chunked) or that closes ends the connection, and what it still owed answers 'closed'.
 */
class PipelinedConnection {
  owed = [];
  socket = null;

  connect() {
    const socket = connectTcp({ host: '127.0.0.1', port, noDelay: true });
    const owed = (this.owed = []);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (let headEnd; (headEnd = pending.indexOf('\r\n\r\n')) >= 0;) {
        const head = pending.toString('latin1', 0, headEnd);
        const end = headEnd + 4 + Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end) break;
        pending = pending.subarray(end);
        owed.shift()?.(Number(head.slice(9, 12)));
        if (/\r\n(connection: *close|transfer-encoding)/i.test(head)) { socket.destroy(); break; }
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
      for (const answer of owed.splice(0)) answer('closed');
    });
    this.socket = socket;
  }

  send(method, path, type, body) {
    if (this.socket === null) this.connect();
    return new Promise((answer) => {
      this.owed.push(answer);
      this.socket.cork();
      this.socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1');
      this.socket.write(body);
      this.socket.uncork();
    });
  }

  close() { this.socket?.destroy(); }
}
const PIPELINE = Number(args.pipeline);
const pipelines = PIPELINE > 1 ? Array.from({ length: Math.ceil(CONCURRENCY / PIPELINE) }, () => new PipelinedConnection()) : [];

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

async function runCase(i, codec, kind, body, workerIndex = 0) {
  const method = i % 2 === 0 ? 'PUT' : 'UPDATE';
  const t0 = performance.now();
  const path = `/fuzz-${codec}/${i % IDS}?upsert`;
  const status = await (pipelines.length === 0 ? send(method, path, CODECS[codec].type, body)
    : pipelines[workerIndex % pipelines.length].send(method, path, CODECS[codec].type, body));
  const ms = performance.now() - t0;
  slowest.push({ ms, codec, kind, method, status, bytes: body.length });
  if (slowest.length > 50) { slowest.sort((a, b) => b.ms - a.ms); slowest.length = 10; }
  return status;
}

// The pools are built before the clock starts, so generatorCasesPerSecond is what a case costs.
const poolsStarted = performance.now();
if (HEAVY !== undefined) for (const codec of Object.keys(CODECS)) poolsOf(codec);
const poolSeconds = (performance.now() - poolsStarted) / 1000;

for (let i = 0; i < WARMUP; i++) {
  const codec = ['json', 'msgpack', 'yaml'][i % 3];
  await runCase(i, codec, 'warm-up', CODECS[codec].encode(validDoc()));
}
const afterWarmup = memory();
console.log(`warm-up: ${WARMUP} valid documents; RSS ${afterWarmup.rssMb.toFixed(1)} MB (anon ${afterWarmup.anonMb.toFixed(1)}, file ${afterWarmup.fileMb.toFixed(1)}), heap ${JSON.stringify(await heapFigures())}`);

let timedOut = false;
const phases = {};
const PROGRESS_EVERY = Math.max(2000, Math.round(CASES / 20));
let generatorMs = 0;

/** Case i of a codec: makeCase's mix, or with --heavy the small mix and N heavy cases evenly spaced. */
function caseAt(codec, i, scratch) {
  if (HEAVY === undefined) return makeCase(codec);
  const heavy = Math.floor(((i + 1) * HEAVY) / CASES) > Math.floor((i * HEAVY) / CASES);
  return heavy ? heavyCase(codec, 0.75 + draw() * 0.25) : smallCase(codec, scratch);
}

async function runCodec(codec) {
  const counts = (perCodec[codec] = { cases: 0, heavy: 0, byKind: {}, fiveHundredsByKind: {}, seconds: 0 });
  const codecStarted = Date.now();
  let next = 0;
  // Each worker keeps one request in flight on its own keep-alive connection.
  const worker = async (_, workerIndex) => {
    const scratch = Buffer.alloc(1 << 16);
    while (!crashed && !timedOut && next < CASES) {
      if (Date.now() - started > TIME_LIMIT_MS) { timedOut = true; return; }
      const i = next++;
      const t0 = performance.now();
      const [kind, body] = caseAt(codec, i, scratch);
      generatorMs += performance.now() - t0;
      const status = await runCase(i, codec, kind, body, workerIndex);
      counts.cases++;
      if (HEAVY_KINDS.has(kind)) counts.heavy++;
      counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
      histogram.set(status, (histogram.get(status) ?? 0) + 1);
      if (typeof status === 'number' && status >= 500) {
        fiveHundreds++;
        counts.fiveHundredsByKind[kind] = (counts.fiveHundredsByKind[kind] ?? 0) + 1;
      }
      if (counts.cases % PROGRESS_EVERY === 0) {
        // Where the RSS is: anonymous (V8 heap + malloc) or file-backed (mapped code, LevelDB tables), and V8's share.
        const now = memory();
        console.log(`  ${codec} ${counts.cases}/${CASES}: RSS ${now.rssMb.toFixed(1)} MB (anon ${now.anonMb.toFixed(1)}, file ${now.fileMb.toFixed(1)}), ` +
          `heap ${JSON.stringify(await heapFigures())}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  counts.seconds = (Date.now() - codecStarted) / 1000;
  phases[codec] = +memory().rssMb.toFixed(1);
  console.log(`after ${codec}: ${counts.cases} cases (${counts.heavy} heavy) in ${counts.seconds.toFixed(0)} s (${(counts.cases / counts.seconds).toFixed(0)}/s), ` +
    `RSS ${phases[codec]} MB, peak so far ${Math.max(memory().hwmMb, peakSampledMb).toFixed(1)} MB, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

for (const codec of args.codecs.split(',').filter((c) => c in CODECS)) {
  if (crashed || timedOut) break;
  await runCodec(codec);
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
for (const connection of pipelines) connection.close();
rmSync(dataDir, { recursive: true, force: true });

slowest.sort((a, b) => b.ms - a.ms);
const pass = !crashed && fiveHundreds === 0 && !timedOut && growthMb < GROWTH_MB_MAX && peakMb < PEAK_MB_MAX;
console.log(JSON.stringify({
  node: process.version, seed: SEED, concurrency: CONCURRENCY, pipeline: PIPELINE, casesPerCodec: Object.fromEntries(Object.entries(perCodec).map(([k, v]) => [k, v.cases])),
  heavyPerCodec: Object.fromEntries(Object.entries(perCodec).map(([k, v]) => [k, v.heavy])),
  casesPerSecond: Object.fromEntries(Object.entries(perCodec).map(([k, v]) => [k, Math.round(v.cases / v.seconds)])),
  poolSeconds: +poolSeconds.toFixed(1), generatorCasesPerSecond: Math.round(Object.values(perCodec).reduce((n, v) => n + v.cases, 0) / (generatorMs / 1000)),
  kinds: Object.fromEntries(Object.entries(perCodec).map(([k, v]) => [k, v.byKind])),
  statuses: Object.fromEntries([...histogram].sort()), fiveHundreds,
  fiveHundredsByKind: Object.fromEntries(Object.entries(perCodec).map(([k, v]) => [k, v.fiveHundredsByKind])), errorLogs, crashed, timedOut, serverAnsweredAfter: alive,
  rssAfterWarmupMb: +afterWarmup.rssMb.toFixed(1), rssAfterPhaseMb: phases,
  rssEndMb: +end.rssMb.toFixed(1), immediateGrowthMb: +immediateGrowthMb.toFixed(1),
  rssSettledMb: +settled.rssMb.toFixed(1), settleSeconds: +settleSeconds.toFixed(0), heapSettledMb: heapSettled, growthMb: +growthMb.toFixed(1), peakRssMb: +peakMb.toFixed(1),
  seconds: +((Date.now() - started) / 1000).toFixed(1),
  slowest: slowest.slice(0, 5).map((s) => `${s.ms.toFixed(0)} ms ${s.codec} ${s.kind} ${s.method} ${s.bytes} B -> ${s.status}`),
}, null, 2));
console.log(`${pass ? 'PASS' : 'FAIL'}: growth ${growthMb.toFixed(1)} MB settled after ${settleSeconds.toFixed(0)} s (< ${GROWTH_MB_MAX}; ${immediateGrowthMb.toFixed(1)} MB 2 s after the burst), peak ${peakMb.toFixed(1)} MB (< ${PEAK_MB_MAX}), 5xx ${fiveHundreds}, crashes ${crashed ? 1 : 0}`);
process.exitCode = pass ? 0 : 1;
