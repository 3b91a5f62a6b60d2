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
// Besides writes/s, each run reports CPU µs per write of the process doing
// the writes (for HTTP, the server's, from /proc): less sensitive than
// throughput to other load on the machine.
//   npx tsc -b && node scripts/bench/scripts.mjs [--seconds 2] [--rounds 3]
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
function faster(a, b) { return a < b; }

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

/** CPU seconds a process has used: this one, or a child's from /proc (Linux). */
const CLOCK_TICKS = (() => {
  try { return Number(execSync('getconf CLK_TCK', { stdio: ['ignore', 'pipe', 'ignore'] }).toString()) || 100; } catch { return 100; }
})();
function cpuSeconds(pid) {
  if (pid === undefined) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Keeps `inFlight` writes going for `seconds`: writes per second, and CPU µs per write of `pid` (default: this process). */
async function drive(write, inFlight, pid) {
  for (let i = 0; i < 2000; i++) await write(i);
  let done = 0;
  const cpuAtStart = cpuSeconds(pid);
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
  const rate = done / ((performance.now() - startedAt) / 1000);
  return { rate, cpu: ((cpuSeconds(pid) - cpuAtStart) * 1e6) / done };
}

/** The best run of each kind: the highest rate and, apart, the lowest CPU per write. */
async function bestRuns(runs) {
  const out = runs.map(() => ({ rate: 0, cpu: Infinity }));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < runs.length; i++) {
      const { rate, cpu } = await runs[i]();
      out[i] = { rate: Math.max(out[i].rate, rate), cpu: Math.min(out[i].cpu, cpu) };
    }
  }
  return out;
}

async function shardWrites() {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-scripts-'));
  const scripts = await ScriptRunner.create();
  const shard = await Shard.open({ path: join(dir, 'shard'), scripts });
  const schema = foldDocument(createSchema(), doc()).schema;
  const ids = 10_000;
  try {
    const [plain, scripted, updates] = await bestRuns([
      () => drive((i) => shard.write({ op: 'index', id: `d${i % ids}`, body: doc(), schema }), 64),
      () => drive((i) => shard.write({ op: 'index', id: `d${i % ids}`, body: doc(), schema, script: { body: TRIVIAL, method: 'PUT' } }), 64),
      () => drive((i) => shard.write({ op: 'update', id: `d${i % ids}`, body: {}, schema, script: { body: TRIVIAL, method: 'UPDATE' } }), 64),
    ]);
    console.log('\none engine shard, 64 writes in flight');
    report('PUT', plain, scripted);
    console.log(`  UPDATE with the script                  ${line(updates)}`);
  } finally {
    await shard.close();
    await scripts.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function line({ rate, cpu }) {
  return `${Math.round(rate).toLocaleString('en-US').padStart(9)} writes/s   ${cpu.toFixed(1).padStart(6)} µs CPU per write`;
}

function report(what, plain, scripted) {
  console.log(`  ${what} without a script                  ${line(plain)}`);
  console.log(`  ${what} with the trivial script           ${line(scripted)}`);
  console.log(`  the script's cost per write: +${(scripted.cpu - plain.cpu).toFixed(1)} µs CPU; +${(1e6 / scripted.rate - 1e6 / plain.rate).toFixed(1)} µs by throughput`);
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
    const [plain, scripted] = await bestRuns([
      () => drive(put(JSON.stringify(doc())), 32, child.pid),
      () => drive(put(JSON.stringify({ ...doc(), _script: TRIVIAL })), 32, child.pid),
    ]);
    await pool.close();
    console.log('\nHTTP, embedded server (1 shard, no replica), 32 requests in flight; CPU is the server\'s');
    report('PUT', plain, scripted);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runner();
await shardWrites();
await httpWrites();
