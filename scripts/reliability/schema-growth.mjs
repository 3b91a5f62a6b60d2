#!/usr/bin/env node
// What each new schema field costs the server (R8's open finding,
// docs/reliability.md): starts `tessera serve` on a fresh directory with the
// server's own flags, then PUTs documents that each bring new fields into one
// index (5 shards, 500 IDs rewritten over and over, as the fuzzer does), and
// prints, every 1,000 fields, the server's RSS, V8 heap (used and total) and
// external memory from /:metrics, then the bytes its data directory holds.
// Exits 0: it measures, it judges nothing.
//
//   node scripts/reliability/schema-growth.mjs [fields, default 3000] [fields per document, default 1]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';

const CLI = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'packages/cli/dist/main.js');
const FIELDS = Number(process.argv[2] ?? 3000);
const PER_DOCUMENT = Number(process.argv[3] ?? 1);
const PORT = 18970;
const url = `http://127.0.0.1:${PORT}`;
const dir = mkdtempSync(join(tmpdir(), 'tessera-schema-growth-'));

function bytesUnder(path) {
  const stat = statSync(path);
  return stat.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0) : stat.size;
}

async function memory() {
  const text = await (await fetch(`${url}/:metrics`)).text();
  const mb = (name) => (Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1]) / 1e6).toFixed(1);
  return `RSS ${mb('process_resident_memory_bytes')} MB, heap used ${mb('nodejs_heap_size_used_bytes')} of ${mb('nodejs_heap_size_total_bytes')} MB, external ${mb('nodejs_external_memory_bytes')} MB`;
}

const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, CLI, 'serve', '--port', String(PORT), '--data', dir, '--log-level', 'warn'],
  { stdio: 'inherit', env: { ...process.env, ...SERVER_ENV } });
try {
  for (;;) {
    try { if ((await fetch(`${url}/readyz`)).ok) break; } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  const put = async (id, body) => (await fetch(`${url}/growth/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).arrayBuffer();
  await put('seed', { _settings: { number_of_shards: 5 }, seed: 1 });
  console.log(`0 fields: ${await memory()}`);
  let fields = 0;
  for (let i = 1; fields < FIELDS; i++) {
    const body = {};
    for (let k = 0; k < PER_DOCUMENT; k++, fields++) body[`f${i}_${k}`] = `word ${i}`;
    await put(`d${i % 500}`, body);
    if (fields % 1000 < PER_DOCUMENT) console.log(`${fields} fields: ${await memory()}`);
  }
  await new Promise((r) => setTimeout(r, 5000));
  console.log(`5 s later: ${await memory()}; data directory ${(bytesUnder(dir) / 1e6).toFixed(1)} MB`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
