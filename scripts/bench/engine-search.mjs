#!/usr/bin/env node
// Engine-only search benchmark (prints, never asserts): the peers' queries run
// straight against a shard (`Shard.search`), without HTTP, coordinator or RPC,
// to tell the engine's cost from the rest of a request's. Each query is parsed
// (@tessera/search-model, as the coordinator does once per request) inside
// the timed span.
//
//   KEEP_DATA=1 scripts/bench/search        # builds the Debian index and keeps its data dir
//   node scripts/bench/engine-search.mjs <data dir printed by it> [passes=3]   (GROUP=range: one group)
//
// Prints per group: q/s and p50/p99 µs of the engine's `search` alone.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Shard } from '../../packages/engine/dist/index.js';
import { parseAggregations, parseQuery, parseSort } from '../../packages/search-model/dist/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PEERS = resolve(process.env.PEERS_DIR ?? join(ROOT, '../shared/bench/peers'));
const data = process.argv[2];
const passes = Number(process.argv[3] ?? 3);
if (!data) {
  console.error('usage: engine-search.mjs <data dir of a kept scripts/bench/search run> [passes]');
  process.exit(2);
}

/** The one shard copy of /debian/ under the data dir. */
function shardPath() {
  const nodes = join(data, 'nodes');
  for (const node of readdirSync(nodes)) {
    const dir = join(nodes, node, 'debian');
    try {
      const copies = readdirSync(dir).filter((d) => d.startsWith('#'));
      if (copies.length > 0) return join(dir, copies.sort()[0]);
    } catch { /* not this node */ }
  }
  throw new Error(`no /debian/ shard under ${nodes}`);
}

function requestFor(q, schema) {
  if (q.group === 'range') {
    const r = q.range;
    return { query: { [r.field]: { _in: { _range: { _from: r.from, _to: r.to } } } }, sort: [{ [r.field]: { _order: 'desc' } }, '_id'], k: q.limit, schema };
  }
  const parts = q.terms.map((t) => ({ text: t }));
  if (q.section) parts.push({ section: q.section });
  const request = { query: parts.length === 1 ? parts[0] : { _and: parts }, k: q.limit, schema };
  if (q.facet) request.aggs = { sections: { _values: { _field: q.facet.field, _limit: q.facet.size } } };
  return request;
}

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

const shard = await Shard.open({ path: shardPath() });
const schema = shard.schema ?? undefined;
const only = process.env.GROUP; // e.g. GROUP=range: one group only
const queries = JSON.parse(readFileSync(join(PEERS, 'queries.json'), 'utf8')).queries.filter((q) => only === undefined || q.group === only);
const groups = [...new Set(queries.map((q) => q.group))];
for (let pass = 0; pass < passes; pass++) {
  const lat = Object.fromEntries(groups.map((g) => [g, []]));
  for (const q of queries) {
    const raw = requestFor(q, schema);
    const start = process.hrtime.bigint();
    const request = { query: parseQuery(raw.query), sort: parseSort(raw.sort), k: raw.k, schema: raw.schema };
    if (raw.aggs !== undefined) request.aggs = parseAggregations(raw.aggs);
    await shard.search(request);
    lat[q.group].push(Number(process.hrtime.bigint() - start) / 1000);
  }
  const line = groups.map((g) => {
    const s = lat[g].sort((a, b) => a - b);
    const total = s.reduce((a, b) => a + b, 0);
    return `${g} ${Math.round((s.length / total) * 1e6)} q/s p50 ${Math.round(pct(s, 50))} p99 ${Math.round(pct(s, 99))} µs`;
  });
  console.log(`pass ${pass + 1}: ${line.join(' | ')}`);
}
await shard.close();
