#!/usr/bin/env node
// Benchmark (prints, never asserts): what a Lua script costs a write.
//  1. The script runner alone: µs per run of a trivial script on a small
//     document, as PUT (`_doc` only) and as UPDATE (`_doc` and `_old_doc`),
//     and µs per compile (a cache miss).
//  2. Writes per second on one engine shard (no HTTP), with and without the
//     trivial script, 64 writes in flight.
//  3. Writes per second through HTTP on the embedded server (`tessera serve`
//     in a child process), with and without the script, 32 in flight.
// Plain and scripted runs alternate, `--rounds` times, and the best of each
// is printed: on a shared machine the best run is the least disturbed one.
//   npx tsc -b && node scripts/bench/scripts.mjs [--seconds 2] [--rounds 3]
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { Shard } from '../../packages/engine/dist/index.js';
import { createSchema, foldDocument } from '../../packages/schema/dist/index.js';
import { ScriptRunner } from '../../packages/scripting/dist/index.js';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const seconds = option('seconds', 2);
const rounds = option('rounds', 3);
const TRIVIAL = '_doc.n = _doc.n + 1';
const doc = () => ({ title: 'A small document', n: 1, price: 9.5, tags: ['a', 'b'], user: { name: 'someone', id: 7 } });

let commit = 'unknown';
try { commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { /* not a checkout */ }
console.log(`node ${process.version}, commit ${commit}, ${seconds} s per run, best of ${rounds}; document: ${JSON.stringify(doc())}`);

await runner();
await shardWrites();
await httpWrites();

/** The best of `rounds` measurements of each of `runs` (alternating): highest writes/s, or lowest µs. */
async function best(runs, better) {
  const out = runs.map(() => undefined);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < runs.length; i++) {
      const value = await runs[i]();
      if (out[i] === undefined || better(value, out[i])) out[i] = value;
    }
  }
  return out;
}
const faster = (a, b) => a < b;
const more = (a, b) => a > b;

/** Runs `work` for `seconds` (after a warm-up); returns µs per call. */
function timed(work, warmup = 5000) {
  for (let i = 0; i < warmup; i++) work(i);
  let done = 0;
  const startedAt = performance.now();
  const endAt = startedAt + seconds * 1000;
  while (performance.now() < endAt) {
    for (let i = 0; i < 100; i++) work(done + i);
    done += 100;
  }
  return ((performance.now() - startedAt) * 1000) / done;
}

async function runner() {
  const scripts = await ScriptRunner.create();
  const body = doc();
  const old = { ...doc(), n: 0 };
  let serial = 0;
  const [put, update, empty, compile] = await best([
    () => timed(() => scripts.run({ body: TRIVIAL, doc: body, method: 'PUT' })),
    () => timed(() => scripts.run({ body: TRIVIAL, doc: body, oldDoc: old, method: 'UPDATE' })),
    () => timed(() => scripts.run({ body: '-- nothing', doc: body, oldDoc: old, method: 'UPDATE' })),
    // Every body different: each run compiles.
    () => timed(() => scripts.run({ body: `${TRIVIAL} -- ${serial++}`, doc: body, method: 'PUT' }), 200),
  ], faster);
  const stats = scripts.stats();
  await scripts.close();
  console.log('\nscript runner (µs per run)');
  console.log(`  trivial script, PUT (_doc)                 ${put.toFixed(1).padStart(7)} µs`);
  console.log(`  trivial script, UPDATE (_doc, _old_doc)    ${update.toFixed(1).padStart(7)} µs`);
  console.log(`  empty script, UPDATE                       ${empty.toFixed(1).padStart(7)} µs`);
  console.log(`  compile + run (every body new)             ${compile.toFixed(1).padStart(7)} µs   (cache: ${stats.cacheHits} hits, ${stats.cacheMisses} misses, ${stats.cacheEvictions} evictions)`);
}

/** Keeps `inFlight` writes going for `seconds`; returns writes per second. */
async function drive(write, inFlight) {
  for (let i = 0; i < 2000; i++) await write(i);
  let done = 0;
  const startedAt = performance.now();
  const endAt = startedAt + seconds * 1000;
  const lane = async (lane) => {
    let i = 0;
    while (performance.now() < endAt) {
      await write(lane * 1_000_000 + i++);
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, lane) => lane + 1).map(lane));
  return done / ((performance.now() - startedAt) / 1000);
}

async function shardWrites() {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-scripts-'));
  const scripts = await ScriptRunner.create();
  const shard = await Shard.open({ path: join(dir, 'shard'), scripts });
  const schema = foldDocument(createSchema(), doc()).schema;
  const ids = 10_000;
  try {
    const [plain, scripted, updates] = await best([
      () => drive((i) => shard.write({ op: 'index', id: `d${i % ids}`, body: doc(), schema }), 64),
      () => drive((i) => shard.write({ op: 'index', id: `d${i % ids}`, body: doc(), schema, script: { body: TRIVIAL, method: 'PUT' } }), 64),
      () => drive((i) => shard.write({ op: 'update', id: `d${i % ids}`, body: {}, schema, script: { body: TRIVIAL, method: 'UPDATE' } }), 64),
    ], more);
    console.log('\none engine shard, 64 writes in flight');
    report('PUT', plain, scripted);
    console.log(`  UPDATE with the script                     ${Math.round(updates).toLocaleString('en-US').padStart(9)} writes/s`);
  } finally {
    await shard.close();
    await scripts.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(what, plain, scripted) {
  const overhead = (1e6 / scripted - 1e6 / plain);
  console.log(`  ${what} without a script                     ${Math.round(plain).toLocaleString('en-US').padStart(9)} writes/s`);
  console.log(`  ${what} with the trivial script              ${Math.round(scripted).toLocaleString('en-US').padStart(9)} writes/s   (+${overhead.toFixed(1)} µs per write)`);
}

async function httpWrites() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-scripts-http-'));
  const cli = fileURLToPath(new URL('../../packages/cli/dist/main.js', import.meta.url));
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data', dataDir, '--shards', '1', '--replicas', '0'],
    // Info level: the server says where it listens in its `listening` line.
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, TESSERA_LOG_LEVEL: 'info' } });
  try {
    const port = await new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        try {
          const entry = JSON.parse(line);
          if (entry.msg === 'listening') resolve(entry.port);
        } catch { /* not JSON */ }
      });
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
      setTimeout(() => reject(new Error('the server did not start in 15 s')), 15_000).unref();
    });
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 32, pipelining: 1 });
    const put = (body) => async (i) => {
      const res = await pool.request({ method: 'PUT', path: `/bench/${i % 10_000}?echo=false`, body, headers: { 'content-type': 'application/json' } });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`PUT answered ${res.statusCode}`);
    };
    const [plain, scripted] = await best([
      () => drive(put(JSON.stringify(doc())), 32),
      () => drive(put(JSON.stringify({ ...doc(), _script: TRIVIAL })), 32),
    ], more);
    await pool.close();
    console.log('\nHTTP, embedded server (1 shard, no replica), 32 requests in flight');
    report('PUT', plain, scripted);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
