#!/usr/bin/env node
// Benchmark (prints, never asserts): what one decision of the elected
// coordinator costs in etcd round trips, through the real EtcdStateStore on
// a local single-member etcd (scripts/etcd.mjs, data in a temporary dir):
//
// - placement update: a compare-and-set of the cluster state (an etcd
//   transaction on the state key's revision, the whole state document put),
//   as a promotion or an in-sync change does — one shard's term bumped;
// - election: the put-if-absent of the `leader` key under a lease (the key
//   deleted again between rounds, untimed);
// - lease keep-alive, as each coordinator sends three per lease period;
// - refresh: the linearizable read of the state a coordinator that is not
//   elected makes before serving reads (one at a time, sequential here).
//
// Prints p50/p99/mean ms per operation over --ops rounds, and the state size.
//   npx tsc -b && node scripts/bench/etcd-decision.mjs [--ops 500] [--indexes 20] [--shards 4]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdStateStore } from '../../packages/coordinator/dist/index.js';
import { startEtcd } from '../etcd.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const ops = option('ops', 500);
const indexCount = option('indexes', 20);
const shardCount = option('shards', 4);
const nodes = ['node1', 'node2', 'node3'];

/** A cluster state of `indexCount` indexes, `shardCount` shards with 1 replica each, a small schema. */
function clusterState() {
  const indexes = {};
  for (let i = 0; i < indexCount; i++) {
    const path = `/index-${i}/`;
    const allocation = Array.from({ length: shardCount }, (_, s) => [nodes[(i + s) % 3], nodes[(i + s + 1) % 3]]);
    indexes[path] = {
      path, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, createdAt: new Date().toISOString(),
      settings: { number_of_shards: shardCount, number_of_replicas: 1 },
      schema: { _type: 'object', title: { _type: 'text' }, tag: { _type: 'keyword' }, n: { _type: 'integer' } },
      allocation,
      replication: allocation.map((copies) => ({ term: 1, inSync: [...copies] })),
    };
  }
  return { nodes: Object.fromEntries(nodes.map((n) => [n, { firstJoinedAt: new Date().toISOString() }])), indexes };
}

function summary(name, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  console.log(`${name.padEnd(34)} p50 ${at(0.5).toFixed(2)} ms   p99 ${at(0.99).toFixed(2)} ms   mean ${mean.toFixed(2)} ms   (${sorted.length} ops)`);
}

async function timed(rounds, run, between = async () => undefined) {
  const samples = [];
  for (let k = 0; k < rounds; k++) {
    const start = process.hrtime.bigint();
    await run(k);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    await between(k);
  }
  return samples;
}

const dataDir = mkdtempSync(join(tmpdir(), 'tessera-etcd-bench-'));
const etcd = await startEtcd({ dataDir: join(dataDir, 'etcd') });
const store = await EtcdStateStore.open({ endpoints: etcd.endpoint, prefix: '/bench', initial: { nodes: {}, indexes: {} } });
try {
  if (!(await store.compareAndSet(store.get(), clusterState()))) throw new Error('could not store the initial state');
  console.log(`etcd ${etcd.endpoint}; cluster state ${indexCount} indexes × ${shardCount} shards, ${Buffer.byteLength(JSON.stringify(store.get()))} bytes of JSON; ${ops} ops each, sequential`);
  // Warm the connection and etcd.
  await timed(20, () => store.refresh());

  summary('placement update (state CAS txn)', await timed(ops, async (k) => {
    const state = store.get();
    const path = `/index-${k % indexCount}/`;
    const meta = state.indexes[path];
    const shard = k % shardCount;
    const replication = meta.replication.map((r, s) => (s === shard ? { ...r, term: r.term + 1 } : r));
    if (!(await store.compareAndSet(state, { ...state, indexes: { ...state.indexes, [path]: { ...meta, replication } } }))) throw new Error('lost a CAS race with nobody');
  }));

  const lease = await store.grantLease(10_000);
  summary('election (leader put-if-absent)', await timed(ops, async () => {
    if (!(await store.putLeased('leader', 'bench', lease, { ifAbsent: true }))) throw new Error('the leader key was taken');
  }, () => store.deleteLeased('leader')));

  summary('lease keep-alive', await timed(ops, async () => {
    if (!(await store.keepAlive(lease))) throw new Error('the lease ended');
  }));

  summary('refresh (linearizable state read)', await timed(ops, () => store.refresh()));
  await store.revokeLease(lease);
} finally {
  await store.close();
  await etcd.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
