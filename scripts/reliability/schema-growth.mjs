#!/usr/bin/env node
// What each new schema field costs the server (R8's open finding,
// docs/reliability.md): starts `tessera serve` on a fresh directory with the
// server's own flags, then PUTs documents that each bring new fields into one
// index (5 shards, 500 IDs rewritten over and over, as the fuzzer does), and
// prints, every 1,000 fields, the server's RSS, V8 heap (used and total) and
// external memory from /:metrics, then the bytes its data directory holds.
// With --retained, the memory that stays: after 50 warm-up fields (so code is
// compiled) and after the last, the server writes a heap snapshot (V8 collects
// all garbage first; SIGUSR2), and the script prints the bytes the snapshot
// holds (its objects' own sizes, array buffers' memory included) and the
// difference per field (not the RSS: writing a snapshot takes memory of its own); --keep DIR keeps the two
// snapshots there, for heap-diff.mjs (what the fields cost, by structure). Each snapshot waits until the
// index's background work is over (no flush or merge for 3 s, past the idle flush), and the script prints the
// index's segments, flushes and merges then. The array buffers' part of the figure, printed apart, is
// mostly the segments' bytes, dead document versions included until a merge drops them, and the objects'
// part holds each segment's field tables: both follow that history, which a loaded machine changes from run
// to run (a shard idle for 1 s flushes its buffer; 10 to 101 flushes, 97 to 273 B per field of array
// buffers in 12 runs of 3000 fields). Compare runs of one history, or the medians of several runs with
// their histories beside them. --root runs another checkout's
// server (an A/B against the code before a change). It also prints how long
// the fields took to add, PUT after PUT (each grows the index's schema in the
// cluster state).
// Exits 0: it measures, it judges nothing.
//
//   node scripts/reliability/schema-growth.mjs [fields, default 3000] [fields per document, default 1] [--retained [--keep DIR]] [--root DIR] [--port N]
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { retained: { type: 'boolean', default: false }, keep: { type: 'string' }, root: { type: 'string' }, port: { type: 'string', default: '18970' } },
});
const ROOT = resolve(options.root ?? join(dirname(fileURLToPath(import.meta.url)), '../..'));
const { SERVER_ENV, SERVER_NODE_FLAGS } = await import(join(ROOT, 'packages/cli/dist/node-flags.js'));
const CLI = join(ROOT, 'packages/cli/dist/main.js');
const FIELDS = Number(positionals[0] ?? 3000);
const PER_DOCUMENT = Number(positionals[1] ?? 1);
const WARM_UP_FIELDS = 50;
const SETTLED_POLLS = 3;
const SETTLE_MS_MAX = 60_000;
const PORT = Number(options.port);
const url = `http://127.0.0.1:${PORT}`;
const dir = mkdtempSync(join(tmpdir(), 'tessera-schema-growth-'));
const snapshots = join(dir, 'snapshots');

function bytesUnder(path) {
  const stat = statSync(path);
  return stat.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0) : stat.size;
}

/** /:metrics now: a metric's samples summed over their label sets (an index's nodes or indexes). */
async function metrics() {
  const text = await (await fetch(`${url}/:metrics`)).text();
  return (name) => {
    let sum = 0;
    for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'gm'))) sum += Number(match[1]);
    return sum;
  };
}

/** The index's background work as /:metrics shows it: flushes and merges done, segments, write buffer bytes. */
async function indexWork() {
  const m = await metrics();
  return {
    flushes: m('tessera_index_flushes_total'), merges: m('tessera_index_merges_total'),
    segments: m('tessera_index_segments'), bufferBytes: m('tessera_index_write_buffer_bytes'),
  };
}

/**
 * Wait until the index's background work is over: no flush or merge done, and the segments and write buffers
 * unchanged, for SETTLED_POLLS polls a second apart (past the shards' idle flush, 1 s), so that a snapshot
 * finds neither written buffers nor the readers of a merge's sources alive beside its result; at most
 * SETTLE_MS_MAX. The work as it was then, and the wait.
 */
async function settle() {
  const started = performance.now();
  for (let last, same = 0; ; await new Promise((r) => setTimeout(r, 1000))) {
    const work = await indexWork();
    same = last !== undefined && Object.keys(work).every((key) => work[key] === last[key]) ? same + 1 : 0;
    last = work;
    const ms = performance.now() - started;
    if (same >= SETTLED_POLLS || ms > SETTLE_MS_MAX) return { ...work, settled: ms <= SETTLE_MS_MAX, ms };
  }
}

function described(work) {
  return `${work.segments} segments, ${work.flushes} flushes and ${work.merges} merges so far, write buffers ${(work.bufferBytes / 1e3).toFixed(0)} kB` +
    (work.settled ? `, settled in ${(work.ms / 1000).toFixed(1)} s` : `, NOT settled after ${(work.ms / 1000).toFixed(1)} s`);
}

async function memory() {
  const m = await metrics();
  const mb = (name) => (m(name) / 1e6).toFixed(1);
  return `RSS ${mb('process_resident_memory_bytes')} MB, heap used ${mb('nodejs_heap_size_used_bytes')} of ${mb('nodejs_heap_size_total_bytes')} MB, external ${mb('nodejs_external_memory_bytes')} MB`;
}

/**
 * A heap snapshot of the server (a full collection first): the bytes its nodes hold, and of them the array
 * buffers' memory (`buffers`: mostly the segments' bytes); the file kept as `keepAs` under --keep.
 */
async function retained(keepAs) {
  const before = new Set(readdirSync(snapshots));
  server.kill('SIGUSR2');
  let file;
  for (let size = -1; ;) {
    await new Promise((r) => setTimeout(r, 500));
    file ??= readdirSync(snapshots).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (file === undefined) continue;
    const now = statSync(join(snapshots, file)).size;
    if (now === size && now > 0) break;
    size = now;
  }
  const snapshot = JSON.parse(readFileSync(join(snapshots, file), 'utf8'));
  if (options.keep !== undefined) copyFileSync(join(snapshots, file), join(options.keep, keepAs));
  rmSync(join(snapshots, file));
  const { node_fields: fields, node_types: nodeTypes } = snapshot.snapshot.meta;
  const [type, name, selfSize] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
  const native = nodeTypes[0].indexOf('native');
  const bufferData = snapshot.strings.indexOf('system / JSArrayBufferData');
  let bytes = 0;
  let buffers = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    bytes += snapshot.nodes[i + selfSize];
    if (snapshot.nodes[i + type] === native && snapshot.nodes[i + name] === bufferData) buffers += snapshot.nodes[i + selfSize];
  }
  return { bytes, buffers };
}

const flags = options.retained ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : [];
if (options.retained) mkdirSync(snapshots);
if (options.keep !== undefined) mkdirSync(options.keep, { recursive: true });
const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...flags, CLI, 'serve', '--port', String(PORT), '--data', join(dir, 'data'), '--log-level', 'error'],
  { stdio: 'inherit', env: { ...process.env, ...SERVER_ENV } });
try {
  for (;;) {
    try { if ((await fetch(`${url}/readyz`)).ok) break; } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  const put = async (id, body) => {
    const res = await fetch(`${url}/growth/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`PUT /growth/${id}: ${res.status}`);
  };
  await put('seed', { _settings: { number_of_shards: 5 }, seed: 1 });
  let start;
  if (options.retained) {
    for (let i = 1; i <= WARM_UP_FIELDS; i++) await put(`w${i}`, { [`w${i}`]: `word ${i}` });
    console.log(`after the warm-up: ${described(await settle())}`);
    start = await retained('warm-up.heapsnapshot');
  }
  console.log(`0 fields: ${await memory()}`);
  let fields = 0;
  const adding = performance.now();
  for (let i = 1; fields < FIELDS; i++) {
    const body = {};
    for (let k = 0; k < PER_DOCUMENT; k++, fields++) body[`f${i}_${k}`] = `word ${i}`;
    await put(`d${i % 500}`, body);
    if (fields % 1000 < PER_DOCUMENT) console.log(`${fields} fields: ${await memory()}`);
  }
  const addingMs = performance.now() - adding;
  console.log(`${fields} fields added in ${(addingMs / 1000).toFixed(2)} s: ${(addingMs / fields).toFixed(2)} ms per field (the PUTs one after another)`);
  await new Promise((r) => setTimeout(r, 5000));
  console.log(`5 s later: ${await memory()}; data directory ${(bytesUnder(join(dir, 'data')) / 1e6).toFixed(1)} MB`);
  if (options.retained) {
    console.log(`before the snapshot: ${described(await settle())}`);
    const end = await retained('end.heapsnapshot');
    const perField = (bytes) => Math.round(bytes / fields);
    console.log(`retained after a full collection, ${WARM_UP_FIELDS} warm-up fields -> +${fields}: heap snapshot ${(start.bytes / 1e6).toFixed(2)} -> ${(end.bytes / 1e6).toFixed(2)} MB, ` +
      `${perField(end.bytes - start.bytes)} B per field: objects ${perField(end.bytes - end.buffers - start.bytes + start.buffers)} B, ` +
      `array buffers ${perField(end.buffers - start.buffers)} B`);
  }
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
