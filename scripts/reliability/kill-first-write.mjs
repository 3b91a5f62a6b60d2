#!/usr/bin/env node
// Crash during schema growth: a write that brings new fields has its grown
// schema reserved in the cluster state before it is sent to its shard, and
// folded once the write is accepted (a refused write leaves the schema as it
// was). Before the reservation, a kill -9 between the shard's acceptance and
// the fold left a document stored but not searchable by its new fields (1 in
// 10 landed first writes); the restarted server now folds what was left
// reserved. Each round starts `tessera serve` on a fresh directory, sends the
// first PUT of a new index, SIGKILLs the server 150–450 ms later, restarts it
// and, when the document landed, counts it by its field. Prints the landed
// and the half-applied (stored, counted 0) rounds; exits 1 if any was
// half-applied. The deterministic check is test/src/data-safety.test.ts.
//
//   node scripts/reliability/kill-first-write.mjs [rounds, default 25]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';

const CLI = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'packages/cli/dist/main.js');
const PORT = 18960;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const json = { 'content-type': 'application/json' };

async function start(dir) {
  const p = spawn(process.execPath, [...SERVER_NODE_FLAGS, CLI, 'serve', '--port', String(PORT), '--data', dir, '--log-level', 'warn'],
    { stdio: 'ignore', env: { ...process.env, ...SERVER_ENV } });
  for (let i = 0; i < 600; i++) {
    try { if ((await fetch(`http://127.0.0.1:${PORT}/readyz`)).status === 200) return p; } catch { /* not listening yet */ }
    await sleep(50);
  }
  p.kill('SIGKILL');
  throw new Error('server not ready within 30 s');
}
const stopped = (p) => new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', r)));

let landed = 0;
let half = 0;
for (let round = 0; round < Number(process.argv[2] ?? 25); round++) {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-first-write-'));
  let p = await start(dir);
  const put = fetch(`http://127.0.0.1:${PORT}/crash/hot0`, { method: 'PUT', headers: json, body: JSON.stringify({ key: 'hot0', tag: 'u1t' }) })
    .catch(() => null);
  await sleep(150 + Math.floor(Math.random() * 300));
  p.kill('SIGKILL');
  await stopped(p);
  await put;
  p = await start(dir);
  let keep = false;
  if ((await fetch(`http://127.0.0.1:${PORT}/crash/hot0`)).status === 200) {
    landed++;
    const count = await (await fetch(`http://127.0.0.1:${PORT}/crash/:count`, { method: 'POST', headers: json, body: JSON.stringify({ _query: { key: 'hot0' } }) })).json();
    if (count.total !== 1) {
      half++;
      keep = true;
      console.log(`round ${round}: stored, counted ${count.total} by its field; data kept in ${dir}`);
    }
  }
  p.kill('SIGTERM');
  await stopped(p);
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ landed, halfApplied: half }));
process.exitCode = half > 0 ? 1 : 0;
