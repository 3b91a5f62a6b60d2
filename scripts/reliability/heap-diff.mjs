#!/usr/bin/env node
// What grew between two heap snapshots of one process (schema-growth.mjs --retained --keep DIR writes
// DIR/warm-up.heapsnapshot and DIR/end.heapsnapshot), by structure: every object of the second snapshot that the
// first lacks (snapshot ids are stable within a process) is charged to the nearest structure already alive in the
// first — its dominator chain (the objects that alone keep it alive; weak edges left out) walked up to the first
// object the first snapshot has — and the edge from it. Prints the bytes (objects' own sizes, array buffers'
// memory included) per such structure, then per constructor. With --drill REGEX, the new objects under the
// structures whose first new object's label matches, by their path below it (docs/reliability.md, R8).
//
//   node scripts/reliability/heap-diff.mjs BEFORE.heapsnapshot AFTER.heapsnapshot [--top 30] [--drill REGEX] [--depth 3]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, drill: { type: 'string' }, depth: { type: 'string', default: '3' } },
});
if (positionals.length !== 2) throw new Error('usage: heap-diff.mjs BEFORE.heapsnapshot AFTER.heapsnapshot [--top N] [--drill REGEX] [--depth N]');
const TOP = Number(options.top);

function load(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const { node_fields: nodeFields, node_types: nodeTypes, edge_fields: edgeFields, edge_types: edgeTypes } = snapshot.snapshot.meta;
  const F = nodeFields.length;
  const E = edgeFields.length;
  const nodes = snapshot.nodes;
  const count = nodes.length / F;
  const firstEdge = new Uint32Array(count + 1);
  const edgeCount = nodeFields.indexOf('edge_count');
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * F + edgeCount] * E;
  }
  firstEdge[count] = snapshot.edges.length;
  return {
    F, E, nodes, edges: snapshot.edges, strings: snapshot.strings, count, firstEdge,
    nodeTypes: nodeTypes[0], edgeTypes: edgeTypes[0],
    type: nodeFields.indexOf('type'), name: nodeFields.indexOf('name'), id: nodeFields.indexOf('id'), size: nodeFields.indexOf('self_size'),
    to: edgeFields.indexOf('to_node'), edgeType: edgeFields.indexOf('type'), edgeName: edgeFields.indexOf('name_or_index'),
  };
}

const before = load(positionals[0]);
const oldIds = new Set();
for (let i = 0; i < before.count; i++) oldIds.add(before.nodes[i * before.F + before.id]);
const s = load(positionals[1]);
const { F, E, nodes, edges, count, firstEdge } = s;
const skipped = new Set([s.edgeTypes.indexOf('weak'), s.edgeTypes.indexOf('shortcut')]);
const label = (i) => `${s.nodeTypes[nodes[i * F + s.type]]}:${String(s.strings[nodes[i * F + s.name]]).slice(0, 40)}`;
const selfSize = (i) => nodes[i * F + s.size];
const isNew = (i) => !oldIds.has(nodes[i * F + s.id]);
const edgeLabel = (e) => {
  const t = s.edgeTypes[edges[e + s.edgeType]];
  return t === 'element' || t === 'hidden' ? '[]' : String(s.strings[edges[e + s.edgeName]]);
};
function edgeBetween(parent, child) {
  for (let e = firstEdge[parent]; e < firstEdge[parent + 1]; e += E) if (edges[e + s.to] / F === child) return edgeLabel(e);
  return '?';
}
const followed = (e) => !skipped.has(edges[e + s.edgeType]);

// Dominators (Cooper, Harvey and Kennedy's iteration over a depth-first postorder from the root, node 0).
const postorder = new Int32Array(count).fill(-1);
const byPostorder = new Uint32Array(count);
let reached = 0;
{
  const stack = [0];
  const next = [firstEdge[0]];
  postorder[0] = -2;
  while (stack.length > 0) {
    const v = stack[stack.length - 1];
    let e = next[next.length - 1];
    while (e < firstEdge[v + 1] && (!followed(e) || postorder[edges[e + s.to] / F] !== -1)) e += E;
    if (e < firstEdge[v + 1]) {
      const w = edges[e + s.to] / F;
      next[next.length - 1] = e + E;
      postorder[w] = -2;
      stack.push(w);
      next.push(firstEdge[w]);
    } else {
      stack.pop();
      next.pop();
      postorder[v] = reached;
      byPostorder[reached++] = v;
    }
  }
}
const predecessors = Array.from({ length: count }, () => []);
for (let v = 0; v < count; v++) {
  if (postorder[v] < 0) continue;
  for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += E) if (followed(e)) predecessors[edges[e + s.to] / F].push(v);
}
const dominator = new Int32Array(count).fill(-1);
dominator[0] = 0;
const intersect = (a, b) => {
  while (a !== b) {
    while (postorder[a] < postorder[b]) a = dominator[a];
    while (postorder[b] < postorder[a]) b = dominator[b];
  }
  return a;
};
for (let changed = true; changed;) {
  changed = false;
  for (let k = reached - 1; k >= 0; k--) {
    const v = byPostorder[k];
    if (v === 0) continue;
    let d = -1;
    for (const u of predecessors[v]) if (dominator[u] !== -1) d = d === -1 ? u : intersect(u, d);
    if (d !== dominator[v]) {
      dominator[v] = d;
      changed = true;
    }
  }
}

/** The new objects' chain up to (and with) the first old object: [object, …, first new object, old object]. */
function chainToOld(i) {
  const chain = [i];
  let at = i;
  while (at !== 0 && isNew(at)) chain.push(at = dominator[at]);
  return chain;
}
function where(old) {
  const parts = [];
  for (let at = old, d = 0; d < 3 && at !== 0; d++, at = dominator[at]) parts.unshift(`.${edgeBetween(dominator[at], at)} ${label(at)}`);
  return parts.join(' ');
}

const byOwner = new Map();
const byConstructor = new Map();
const drilled = new Map();
const drill = options.drill === undefined ? undefined : new RegExp(options.drill);
const add = (map, key, size) => {
  const entry = map.get(key) ?? { objects: 0, bytes: 0 };
  entry.objects++;
  entry.bytes += size;
  map.set(key, entry);
};
let total = 0;
for (let i = 0; i < count; i++) {
  if (postorder[i] < 0 || !isNew(i)) continue;
  const size = selfSize(i);
  total += size;
  add(byConstructor, label(i), size);
  const chain = chainToOld(i);
  const old = chain[chain.length - 1];
  const top = chain[chain.length - 2];
  add(byOwner, `${where(old)} -> .${edgeBetween(old, top)} ${label(top)}`, size);
  if (drill !== undefined && drill.test(label(top))) {
    const path = [];
    for (let k = chain.length - 2; k >= 0 && path.length < Number(options.depth) * 2; k--) path.push(`.${edgeBetween(chain[k + 1], chain[k])}`, label(chain[k]));
    add(drilled, path.join(' '), size);
  }
}
const print = (title, map) => {
  console.log(`--- ${title}`);
  for (const [key, { objects, bytes }] of [...map].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, TOP)) {
    console.log(`${(bytes / 1e3).toFixed(0).padStart(8)} kB ${String(objects).padStart(7)}  ${key}`);
  }
};
console.log(`objects new in the second snapshot: ${(total / 1e6).toFixed(2)} MB`);
print('by the structure alive before that keeps them', byOwner);
print('by constructor', byConstructor);
if (drill !== undefined) print(`below ${options.drill}`, drilled);
