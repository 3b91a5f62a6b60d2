#!/usr/bin/env node
// Benchmark (prints, never asserts): stored content (API.md §6) throughput.
// Writes COUNT blobs of SIZE bytes to a fresh `tessera serve` over one
// keep-alive HTTP connection (PUT /bench/<i>, Content-Type
// application/octet-stream), reads them back (GET), and does the same with
// plain `fs` (writeFile/readFile of one file per blob, same bytes) in the same
// run, so the ratio is measured on the same machine at the same time. Then the
// same with ?commit against writeFile + fsync.
//   npx tsc -b && node scripts/bench/content.mjs [--count 200] [--size 1048576] [--rounds 3]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { count: { type: 'string', default: '200' }, size: { type: 'string', default: String(1 << 20) }, rounds: { type: 'string', default: '3' } } });
const COUNT = Number(values.count);
const SIZE = Number(values.size);
const ROUNDS = Number(values.rounds);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'packages/cli/dist/main.js');
const data = mkdtempSync(join(tmpdir(), 'tessera-bench-content-'));
const plain = mkdtempSync(join(tmpdir(), 'tessera-bench-fs-'));

const blobs = Array.from({ length: COUNT }, (_, n) => {
  const b = Buffer.allocUnsafe(SIZE);
  for (let i = 0; i < SIZE; i += 4) b.writeUInt32LE(((i + n) * 2654435761) >>> 0, i);
  return b;
});

const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data', data, '--shards', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((res, rej) => {
  let buffered = '';
  child.stdout.on('data', (d) => {
    buffered += d;
    const line = buffered.split('\n').find((l) => l.includes('"msg":"listening"'));
    if (line) res(JSON.parse(line).port);
  });
  child.once('exit', (code) => rej(new Error(`server exited with ${code}`)));
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function send(method, path, body) {
  return new Promise((res, rej) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/octet-stream', 'content-length': body.length };
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers }, (response) => {
      const chunks = [];
      response.on('data', (c) => chunks.push(c));
      response.on('end', () => (response.statusCode < 300 ? res(Buffer.concat(chunks)) : rej(new Error(`${method} ${path}: ${response.statusCode}`))));
    });
    req.on('error', rej);
    req.end(body);
  });
}

async function timed(work) {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const mbps = (seconds) => (COUNT * SIZE) / 1048576 / seconds;
const rows = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const commit of [false, true]) {
    const suffix = commit ? '?commit' : '';
    const tWrite = await timed(async () => { for (let i = 0; i < COUNT; i++) await send('PUT', `/bench/r${round}c${commit ? 1 : 0}n${i}${suffix}`, blobs[i]); });
    let same = true;
    const tRead = await timed(async () => {
      for (let i = 0; i < COUNT; i++) if (!(await send('GET', `/bench/r${round}c${commit ? 1 : 0}n${i}`)).equals(blobs[i])) same = false;
    });
    if (!same) throw new Error('a blob came back different');
    const fsWrite = await timed(async () => {
      for (let i = 0; i < COUNT; i++) {
        const path = join(plain, `r${round}c${commit ? 1 : 0}n${i}`);
        if (!commit) await writeFile(path, blobs[i]);
        else {
          const f = await open(path, 'w');
          await f.writeFile(blobs[i]);
          await f.datasync();
          await f.close();
        }
      }
    });
    const fsRead = await timed(async () => { for (let i = 0; i < COUNT; i++) await readFile(join(plain, `r${round}c${commit ? 1 : 0}n${i}`)); });
    rows.push({ round, commit, write: mbps(tWrite), read: mbps(tRead), fsWrite: mbps(fsWrite), fsRead: mbps(fsRead) });
  }
}

console.log(`stored content: ${COUNT} blobs of ${SIZE} bytes per run, one keep-alive connection, sequential; plain fs = one file per blob`);
console.log('round  mode     tessera write  fs write  ratio | tessera read  fs read  ratio   (MB/s)');
for (const r of rows) {
  console.log(`${String(r.round).padStart(5)}  ${r.commit ? 'commit' : 'buffer'}  ${r.write.toFixed(0).padStart(13)}  ${r.fsWrite.toFixed(0).padStart(8)}  ${(r.write / r.fsWrite).toFixed(2).padStart(5)} | ${r.read.toFixed(0).padStart(12)}  ${r.fsRead.toFixed(0).padStart(7)}  ${(r.read / r.fsRead).toFixed(2).padStart(5)}`);
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const commit of [false, true]) {
  const sel = rows.filter((r) => r.commit === commit);
  console.log(`median ${commit ? 'commit' : 'buffer'}: write ${median(sel.map((r) => r.write / r.fsWrite)).toFixed(2)}× fs, read ${median(sel.map((r) => r.read / r.fsRead)).toFixed(2)}× fs`);
}
agent.destroy();
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(data, { recursive: true, force: true });
rmSync(plain, { recursive: true, force: true });
