#!/usr/bin/env node
// Benchmark (prints, never asserts): `tessera import` of the whole Debian
// corpus (63,440 records, ../shared/data/debian-packages.ndjson.gz, as is:
// no _id, every field detected) into a fresh `tessera serve` on a temporary
// data directory, through the CLI exactly as a user runs it. Prints docs/s,
// the peak RSS of the server and of the importer, the size on disk, and the
// time a restart takes to be ready (/readyz 200) with the corpus loaded.
//   npx tsc -b && node scripts/bench/import.mjs [--batch N] [--concurrency N]
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'packages/cli/dist/main.js');
const corpus = join(root, '../shared/data/debian-packages.ndjson.gz');
const data = mkdtempSync(join(tmpdir(), 'tessera-bench-import-'));
const importArgs = process.argv.slice(2);

/** Start `tessera serve` on a free port; resolves once it listens, with the ms it took. */
async function startServer() {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, cli, 'serve', '--port', '0', '--data', data], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...SERVER_ENV } });
  const port = await new Promise((res, rej) => {
    let buffered = '';
    child.stdout.on('data', (d) => {
      buffered += d;
      const line = buffered.split('\n').slice(0, -1).find((l) => l.includes('"msg":"listening"'));
      if (line) res(JSON.parse(line).port);
      if (buffered.length > 1 << 20) buffered = '';
    });
    child.once('exit', (code) => rej(new Error(`server exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      const r = await request(`${url}/readyz`);
      await r.body.dump();
      if (r.statusCode === 200) break;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 10));
  }
  return { child, url, started, readyMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** Peak resident set of a live process, bytes (Linux VmHWM). */
function peakRss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

async function stop(child) {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

const mib = (bytes) => `${(bytes / 1048576).toFixed(0)} MiB`;

const first = await startServer();
const started = process.hrtime.bigint();
const importer = spawn(process.execPath, [cli, 'import', corpus, '--index', '/debian/', '--url', first.url, ...importArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
let summary = '';
importer.stdout.on('data', (d) => { summary += d; });
const code = await new Promise((r) => importer.once('exit', r));
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const count = await request(`${first.url}/debian/`, { method: 'COUNT' }).then((r) => r.body.json());
const serverPeak = peakRss(first.child.pid);
await stop(first.child);
const bytes = Number(execSync(`du -sb ${data}`).toString().split('\t')[0]);

const again = await startServer();
// Shards open on first use: the first COUNT includes opening the index's shards.
const countAfterRestart = await request(`${again.url}/debian/`, { method: 'COUNT' }).then((r) => r.body.json());
const firstCountMs = Number(process.hrtime.bigint() - again.started) / 1e6;
await stop(again.child);
rmSync(data, { recursive: true, force: true });

const imported = Number(/imported (\d+) of/.exec(summary)?.[1] ?? NaN);
const importerPeak = /importer peak RSS ([\d.]+) MiB/.exec(summary)?.[1];
let commit = 'unknown';
try { commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim(); } catch { /* not a checkout */ }
console.log(`Node ${process.version}, ${cpus().length} cores, commit ${commit}; tessera import ${importArgs.join(' ') || '(defaults: --batch 1000 --concurrency 2)'}`);
console.log(`importer: ${summary.trim()} (exit ${code})`);
console.log(`imported ${imported} documents (COUNT ${count.total}) in ${seconds.toFixed(1)} s wall: ${Math.round(imported / seconds)} docs/s`);
console.log(`peak RSS: server ${mib(serverPeak)}, importer ${importerPeak} MiB; on disk after shutdown ${mib(bytes)}`);
console.log(`restart with the corpus loaded: ready (/readyz 200) ${Math.round(again.readyMs)} ms after spawn, first COUNT answered (${countAfterRestart.total}) after ${Math.round(firstCountMs)} ms`);
