/**
 * Node liveness as an etcd lease (issue 21; docs/cluster.md "Node leases"):
 * a real etcd, two `tessera coordinator --etcd` processes, and shard nodes
 * of which some keep a lease of their own (`tessera node --etcd`).
 *
 * - A node with a lease that joined only the elected coordinator, killed
 *   with it: no live coordinator saw it lost, yet the survivor fails its
 *   shards over as soon as it is elected and the node's lease is gone —
 *   not after the rejoin timeout (10 s) — and takes writes for them.
 * - The same with a node started without `--etcd`: as before, the survivor
 *   waits the rejoin timeout for it.
 * - A connected node's lease revoked behind its back (etcd cut off from the
 *   node only): the elected coordinator counts it lost, fails its primary
 *   over and closes its connection; the node registers again under a new
 *   lease and rejoins.
 */
import { xxh32 } from '@tessera/schema';
import { Etcd3 } from 'etcd3';
import { startCluster, until, type Cluster, type ClusterProcess } from './cluster-harness.js';
import { call, removeDir } from './harness.js';

const SHARDS = 2;
/** How long a coordinator that begins deciding waits for a node that never joined it (the replication option rejoinTimeoutMs's default). */
const REJOIN_TIMEOUT_MS = 10_000;
/** The coordinators' and the nodes' leases here, ms. */
const LEASE_MS = 2_000;

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ coordinators: 2, etcd: true, nodes: 0, coordinatorLeaseMs: LEASE_MS, nodeLeaseMs: LEASE_MS });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  removeDir(cluster.dataDir);
}, 60_000);

const shardOf = (id: string) => (xxh32(id, 0) % SHARDS) + 1;

/** The elected coordinator and the other one. */
async function roles(): Promise<{ leader: string; survivor: string }> {
  const leader = await until('every running coordinator naming the same elected one', async () => {
    const named = await cluster.leaders();
    return named.length > 0 && new Set(named).size === 1 ? named[0] : undefined;
  });
  return { leader, survivor: [...cluster.coordinators.keys()].find((name) => name !== leader && cluster.coordinators.get(name)!.process.exitCode === null)! };
}

/** A new index of SHARDS shards with 1 replica, every copy in sync on the leader; the shard whose primary `node` holds. */
async function indexLedBy(index: string, leader: string, node: string): Promise<number> {
  expect((await call({ url: cluster.urlOf(leader) }, 'PUT', index, { _settings: { number_of_shards: SHARDS, number_of_replicas: 1 } })).status).toBe(200);
  await inSync(index, leader);
  const meta = Object.values((await cluster.storedState()).indexes).find((m) => m.path === index)!;
  const shard = meta.allocation.findIndex((copies) => copies[0] === node) + 1;
  expect(shard).toBeGreaterThan(0);
  return shard;
}

/** The node's entry in `GET /.nodes` of `via`. */
async function listed(via: string, node: string): Promise<Record<string, unknown>> {
  const list = (await call({ url: cluster.urlOf(via) }, 'GET', '/.nodes')).json as Array<Record<string, unknown>>;
  return list.find((n) => n.name === node)!;
}

/** Until `leader` shows both copies of every shard of `index` in sync. */
async function inSync(index: string, leader: string): Promise<void> {
  await until(`every copy of ${index} in sync`, async () => {
    const list = (await call({ url: cluster.urlOf(leader) }, 'GET', '/.nodes')).json as Array<{ active: boolean; shards?: Array<{ index: string; in_sync: boolean }> }>;
    const copies = list.filter((n) => n.active).flatMap((n) => (n.shards ?? []).filter((c) => c.index === index));
    return copies.length === SHARDS * 2 && copies.every((c) => c.in_sync) ? true : undefined;
  });
}

/** Kill -9 the elected coordinator and `node` at once; when the survivor was elected and promoted a copy of `shard`, ms after the kill. */
async function killBoth(index: string, shard: number, leader: string, survivor: string, node: string): Promise<{ electedMs: number; promotedMs: number; logs: ClusterProcess['logs'] }> {
  const logs = cluster.coordinators.get(survivor)!.logs;
  const killedAt = Date.now();
  await Promise.all([cluster.nodes.get(node)!.kill(), cluster.coordinators.get(leader)!.kill()]);
  const promoted = await until(`${survivor} promoting a copy of ${index} shard ${shard}`, async () =>
    logs.find((l) => l.msg === 'shard primary promoted' && l.lost === node && l.index === index && l.shard === shard && (l.time as number) >= killedAt),
  REJOIN_TIMEOUT_MS + 20_000);
  const elected = logs.find((l) => l.msg === 'coordinator elected' && (l.time as number) >= killedAt)!;
  return { electedMs: (elected.time as number) - killedAt, promotedMs: (promoted.time as number) - killedAt, logs };
}

/** Writes to `shard` through `via` succeed. */
async function writesTo(index: string, shard: number, via: string): Promise<void> {
  const ids = Array.from({ length: 100 }, (_, k) => `doc${k}`).filter((id) => shardOf(id) === shard).slice(0, 5);
  for (const id of ids) expect((await call({ url: cluster.urlOf(via) }, 'PUT', `${index}${id}`, { n: id })).status).toBeLessThan(300);
}

it('a node with an etcd lease that joined only the elected coordinator, killed with it: the survivor fails its shards over without the rejoin timeout', async () => {
  const { leader, survivor } = await roles();
  await cluster.startNode('node1', { join: [leader], etcd: true });
  await cluster.startNode('node2', { etcd: true });
  const index = '/leased/';
  const shard = await indexLedBy(index, leader, 'node1');
  await until('node1 recorded as keeping an etcd lease', async () => ((await cluster.storedState()).nodes?.node1?.etcdLease === true ? true : undefined));
  expect((await listed(leader, 'node1')).etcd_lease).toBe(true);

  const { electedMs, promotedMs, logs } = await killBoth(index, shard, leader, survivor, 'node1');
  process.stdout.write(`kill -9 of ${leader} and node1 (lease, joined ${leader} only): ${survivor} elected ${electedMs} ms after, shard ${shard} promoted ${promotedMs} ms after (leases ${LEASE_MS} ms, rejoin timeout ${REJOIN_TIMEOUT_MS} ms)\n`);
  expect(promotedMs).toBeLessThan(REJOIN_TIMEOUT_MS);
  expect(logs.some((l) => l.msg === 'node seen lost before this coordinator began deciding; it is lost' && l.node === 'node1')).toBe(true);
  await writesTo(index, shard, survivor);
}, 120_000);

it('a node without --etcd that joined only the elected coordinator, killed with it: the survivor waits the rejoin timeout for it, as before', async () => {
  // The coordinator killed above comes back; the survivor decides.
  const dead = [...cluster.coordinators.keys()].find((name) => cluster.coordinators.get(name)!.process.exitCode !== null || cluster.coordinators.get(name)!.process.signalCode !== null)!;
  await cluster.startCoordinator(dead);
  const { leader, survivor } = await roles();
  await cluster.startNode('node3', { join: [leader], etcd: false });
  const index = '/plain/';
  const shard = await indexLedBy(index, leader, 'node3');
  expect((await cluster.storedState()).nodes?.node3?.etcdLease).toBeUndefined();
  expect((await listed(leader, 'node3')).etcd_lease).toBeUndefined();

  const { electedMs, promotedMs, logs } = await killBoth(index, shard, leader, survivor, 'node3');
  process.stdout.write(`kill -9 of ${leader} and node3 (no lease, joined ${leader} only): ${survivor} elected ${electedMs} ms after, shard ${shard} promoted ${promotedMs} ms after\n`);
  // The rejoin timeout counts from the election; a second of slack for the clocks of the log lines.
  expect(promotedMs - electedMs).toBeGreaterThanOrEqual(REJOIN_TIMEOUT_MS - 1_000);
  expect(logs.some((l) => l.msg === 'node did not rejoin the restarted coordinator; it is lost' && l.node === 'node3')).toBe(true);
  await writesTo(index, shard, survivor);
}, 120_000);

it('a connected node whose etcd lease ends is lost, its primaries failed over, and it comes back as a replica under a new lease', async () => {
  const { leader } = await roles();
  // A second live node for the replicas (those killed above stay down).
  await cluster.startNode('node4', { etcd: true });
  const index = '/revoked/';
  const shard = await indexLedBy(index, leader, 'node2');
  const key = `${cluster.etcd!.prefix}/leased/nodes/node2`;
  const client = new Etcd3({ hosts: cluster.etcd!.endpoint });
  try {
    const before = (await client.get(key).exec()).kvs[0]!;
    const revokedAt = Date.now();
    // etcd cut off from the node, as the coordinator sees it: its lease gone while its connection lives.
    await client.leaseClient.leaseRevoke({ ID: before.lease });
    const logs = cluster.coordinators.get(leader)!.logs;
    await until('the elected coordinator counting node2 lost', async () =>
      logs.find((l) => l.msg === 'node\'s etcd lease ended while connected: it is lost, and its connection closed' && l.node === 'node2' && (l.time as number) >= revokedAt));
    await until(`${leader} promoting a copy of ${index} shard ${shard}`, async () =>
      logs.find((l) => l.msg === 'shard primary promoted' && l.lost === 'node2' && l.index === index && l.shard === shard && (l.time as number) >= revokedAt));
    // The node registers again under a new lease and rejoins; the shard it led takes writes.
    const after = await until('node2 registered again', async () => (await client.get(key).exec()).kvs[0]);
    expect(after.lease).not.toBe(before.lease);
    await cluster.waitForNodes(['node2']);
    await writesTo(index, shard, leader);
    await inSync(index, leader);
    const meta = Object.values((await cluster.storedState()).indexes).find((m) => m.path === index)!;
    expect(meta.allocation[shard - 1]![0]).not.toBe('node2');
  } finally {
    client.close();
  }
}, 120_000);
