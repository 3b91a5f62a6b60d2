#!/usr/bin/env node
// Engine-only A/B (prints, never asserts): the peers' queries of engine-search.mjs
// run in one process on this checkout's engine and on another built
// checkout's, query by query in turn (which goes first alternates by pass), so
// that both sides run under the same load: on a machine shared with other
// work, separate runs of engine-search.mjs move by more than the difference
// being measured.
//
//   node scripts/bench/engine-search-ab.mjs <data dir of a KEEP_DATA=1 scripts/bench/search run> <other checkout> [passes=10]
//   GROUP=text2,filter: only these groups (default: all five)
//
// The other side opens a copy of the shard (LevelDB locks it), made in a temp
// dir and removed at the end. Per group and side: each query's fastest time
// over the passes after the first (mean and p50 of those minima, µs), the
// ratio other ÷ this (> 1: this checkout is faster), and whether both
// answered the same totals and hits (docid and weight).
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineRequestFor, pct, shardPathIn } from './bench-lib.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PEERS = resolve(process.env.PEERS_DIR ?? join(ROOT, '../shared/bench/peers'));
const [data, other, passesArg] = process.argv.slice(2);
if (!data || !other) {
  console.error('usage: engine-search-ab.mjs <data dir> <other built checkout> [passes]');
  process.exit(2);
}
const passes = Math.max(2, Number(passesArg ?? 10));
const copy = mkdtempSync(join(tmpdir(), 'tessera-engine-ab-'));
cpSync(shardPathIn(data), copy, { recursive: true });

async function side(name, root, path) {
  const { Shard } = await import(join(resolve(root), 'packages/engine/dist/index.js'));
  const model = await import(join(resolve(root), 'packages/search-model/dist/index.js'));
  const shard = await Shard.open({ path });
  return { name, shard, model, schema: shard.schema ?? undefined };
}

const sides = [await side('this', ROOT, shardPathIn(data)), await side('other', other, copy)];
const only = process.env.GROUP?.split(',');
const queries = JSON.parse(readFileSync(join(PEERS, 'queries.json'), 'utf8')).queries.filter((q) => only === undefined || only.includes(q.group));
const groups = [...new Set(queries.map((q) => q.group))];

async function timed(s, q) {
  const raw = engineRequestFor(q, s.schema);
  const start = process.hrtime.bigint();
  const request = { query: s.model.parseQuery(raw.query), sort: s.model.parseSort(raw.sort), k: raw.k, schema: raw.schema };
  if (raw.aggs !== undefined) request.aggs = s.model.parseAggregations(raw.aggs);
  const result = await s.shard.search(request);
  const us = Number(process.hrtime.bigint() - start) / 1000;
  return { us, answer: `${result.total} ${result.hits.map((h) => `${h.docid}:${h.score}`).join(',')}` };
}

const fastest = sides.map(() => queries.map(() => Infinity));
const differ = new Set();
for (let pass = 0; pass < passes; pass++) {
  for (let i = 0; i < queries.length; i++) {
    const answers = [];
    for (let t = 0; t < 2; t++) {
      const s = (pass + t) % 2;
      const { us, answer } = await timed(sides[s], queries[i]);
      answers[s] = answer;
      if (pass > 0 && us < fastest[s][i]) fastest[s][i] = us;
    }
    if (answers[0] !== answers[1]) differ.add(queries[i].group);
  }
}
for (const s of sides) await s.shard.close();
rmSync(copy, { recursive: true, force: true });

console.log(`this: ${ROOT}\nother: ${resolve(other)}\n${passes} passes, each query's fastest over passes 2..${passes} (µs)\n`);
console.log('| group | this mean | other mean | other ÷ this (mean) | this p50 | other p50 | other ÷ this (p50) | same answers |');
console.log('|---|---|---|---|---|---|---|---|');
for (const g of groups) {
  const [a, b] = fastest.map((f) => f.filter((_, i) => queries[i].group === g).sort((x, y) => x - y));
  const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
  console.log(`| ${g} | ${mean(a).toFixed(1)} | ${mean(b).toFixed(1)} | ${(mean(b) / mean(a)).toFixed(3)} | `
    + `${pct(a, 50).toFixed(1)} | ${pct(b, 50).toFixed(1)} | ${(pct(b, 50) / pct(a, 50)).toFixed(3)} | ${differ.has(g) ? 'NO' : 'yes'} |`);
}
