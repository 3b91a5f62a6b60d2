/**
 * The cluster with real processes on loopback: a `tessera coordinator` and
 * `tessera node` processes joining it — membership, placement, the document
 * and search API through the coordinator, a node killed and restarted, the
 * coordinator restarted. Replica contents are replication's (not checked here).
 *
 * The suite runs twice: against one coordinator (the cluster state in its
 * data directory), and against two coordinators sharing a real etcd, each
 * request going to the next coordinator (writes through the one not elected
 * are forwarded; reads and searches it serves itself).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnTessera, startCluster, until, type Cluster, type ClusterOptions } from './cluster-harness.js';
import { call, removeDir } from './harness.js';

type NodeView = { name: string; active: boolean; role?: string; pid?: number; data?: string; reason?: string; shards?: CopyView[]; [k: string]: unknown };
type CopyView = { index: string; shard: number; primary: boolean; seq: number; in_sync: boolean; documents?: number };

const nodesOf = async (cluster: Cluster) => (await call(cluster, 'GET', '/.nodes')).json as NodeView[];
const byName = (list: NodeView[], name: string) => list.find((n) => n.name === name) as NodeView;

/** Shard copies of an index by shard number (index i = shard i+1), as GET /idx/ shows them: primary first. */
async function allocationOf(cluster: Cluster, index: string): Promise<string[][]> {
  return (await call(cluster, 'GET', index)).json._settings.shards as string[][];
}

const VARIANTS: Array<{ title: string; options: ClusterOptions }> = [
  { title: 'a coordinator and three nodes', options: { nodes: 3 } },
  { title: 'two coordinators on etcd and three nodes, requests spread over both', options: { nodes: 3, coordinators: 2, etcd: true } },
];

describe.each(VARIANTS)('$title', ({ options }) => {
  let cluster: Cluster;
  let coordinatorNames: string[];

  beforeAll(async () => {
    cluster = await startCluster(options);
    coordinatorNames = [...cluster.coordinators.keys()];
  }, 60_000);

  afterAll(async () => {
    expect(await cluster.stop()).toBe(0);
    removeDir(cluster.dataDir);
  });

  it('every node joins: /.nodes lists the coordinators, then the nodes with their process facts', async () => {
    const list = await nodesOf(cluster);
    expect(list.map((n) => n.name)).toEqual([...coordinatorNames, 'node1', 'node2', 'node3']);
    if (coordinatorNames.length === 1) {
      expect(list[0]).toEqual({ name: 'coordinator', active: true, leader: true, local: true, host: '127.0.0.1', http_port: cluster.port, role: 'coordinator', shards: [] });
    } else {
      // Each coordinator lists both, the same one elected, itself local.
      const [leader] = await cluster.leaders();
      for (const name of coordinatorNames) {
        const seen = (await call({ url: cluster.urlOf(name) }, 'GET', '/.nodes')).json as NodeView[];
        expect(seen.filter((n) => n.role === 'coordinator').map((n) => ({ name: n.name, leader: n.leader, local: n.local, http_port: n.http_port })))
          .toEqual(coordinatorNames.map((c) => ({ name: c, leader: c === leader, local: c === name, http_port: Number(new URL(cluster.urlOf(c)).port) })));
      }
    }
    for (const name of cluster.nodeNames) {
      const node = byName(list, name);
      expect(node).toMatchObject({ active: true, leader: false, local: false, role: 'shard', pid: cluster.nodes.get(name)!.process.pid, data: join(cluster.dataDir, name) });
      expect(node.http_port).toBeUndefined();
      expect(node.heartbeat_age_ms).toBeGreaterThanOrEqual(0);
      expect(node.heartbeat_age_ms).toBeLessThan(5000);
    }
    const root = (await call(cluster, 'GET', '/')).json;
    expect(root).toMatchObject({ state: 'READY' });
    expect(coordinatorNames).toContain(root.name);
    expect(root.nodes).toHaveLength(coordinatorNames.length + 3);
    expect((await call(cluster, 'GET', '/readyz')).status).toBe(200);
    // The cluster state remembers who joined, for a coordinator's next start.
    expect(Object.keys((await cluster.storedState()).nodes ?? {}).sort()).toEqual(['node1', 'node2', 'node3']);
  });

  it('3 shards with 1 replica: two copies of each shard on distinct nodes, primaries spread; /.nodes shows each copy', async () => {
    expect((await call(cluster, 'PUT', '/placed/', { _settings: { number_of_shards: 3, number_of_replicas: 1 } })).status).toBe(200);
    const allocation = await allocationOf(cluster, '/placed/');
    expect(allocation).toHaveLength(3);
    for (const copies of allocation) {
      expect(copies).toHaveLength(2);
      expect(new Set(copies).size).toBe(2);
    }
    expect(new Set(allocation.map((c) => c[0])).size).toBe(3);
    const list = await nodesOf(cluster);
    allocation.forEach((copies, i) => copies.forEach((node, position) => {
      expect(byName(list, node).shards).toContainEqual(expect.objectContaining({ index: '/placed/', shard: i + 1, primary: position === 0, in_sync: true }));
    }));
    // Six copies in all, each listed once.
    expect(list.flatMap((n) => (n.shards ?? []).filter((c) => c.index === '/placed/'))).toHaveLength(6);
  });

  it('more copies than nodes: the missing replicas stay unassigned, and GET / says so', async () => {
    await call(cluster, 'PUT', '/crowded/', { _settings: { number_of_shards: 2, number_of_replicas: 3 } });
    for (const copies of await allocationOf(cluster, '/crowded/')) expect(new Set(copies).size).toBe(3);
    const root = (await call(cluster, 'GET', '/')).json;
    expect(root.shards.unassigned).toEqual(expect.arrayContaining([
      { index: '/crowded/', shard: 1, missing: 1 },
      { index: '/crowded/', shard: 2, missing: 1 },
    ]));
    expect(root.shards.unassigned_count).toBeGreaterThanOrEqual(2);
  });

  it('documents and search through the coordinator: PUT, GET, UPDATE, DELETE, SEARCH, COUNT, RESTORE reach the primaries', async () => {
    await call(cluster, 'PUT', '/api/', { _settings: { number_of_shards: 3, number_of_replicas: 1 }, _schema: { tag: { _type: 'keyword' } } });
    for (let i = 1; i <= 30; i++) {
      const r = await call(cluster, 'PUT', `/api/${i}`, { n: i, tag: i % 3 === 0 ? 'fizz' : 'plain' });
      expect(r.status).toBe(200);
      expect(r.json._version).toBe(1);
    }
    expect((await call(cluster, 'GET', '/api/7')).json).toMatchObject({ n: 7, _version: 1 });
    expect((await call(cluster, 'UPDATE', '/api/7', { extra: true })).json).toMatchObject({ n: 7, extra: true, _version: 2 });
    expect((await call(cluster, 'GET', '/api/7')).json).toMatchObject({ extra: true, _version: 2 });
    expect((await call(cluster, 'DELETE', '/api/8')).status).toBe(204);
    expect((await call(cluster, 'GET', '/api/8')).status).toBe(404);
    const restored = await call(cluster, 'RESTORE', '/api/',
      Array.from({ length: 20 }, (_, k) => JSON.stringify({ _id: 100 + k, n: 100 + k, tag: 'bulk' })).join('\n'),
      { 'content-type': 'application/x-ndjson' });
    expect(restored.json).toMatchObject({ indexed: 20 });
    expect((await call(cluster, 'COUNT', '/api/')).json.total).toBe(29 + 20);
    const fizz = await call(cluster, 'SEARCH', '/api/', { _query: { tag: 'fizz' }, _sort: 'n', _limit: 3 });
    expect(fizz.json.total).toBe(10);
    expect(fizz.json.hits.map((h: { _id: number }) => h._id)).toEqual([3, 6, 9]);
    expect((await call(cluster, 'COUNT', '/api/', { _query: { tag: 'bulk' } })).json.total).toBe(20);
    // The documents are on the primaries: their counts add up to the index, every shard has some.
    const allocation = await allocationOf(cluster, '/api/');
    const list = await nodesOf(cluster);
    const onPrimaries = allocation.map((copies, i) =>
      byName(list, copies[0]!).shards!.find((c) => c.index === '/api/' && c.shard === i + 1)!.documents!);
    expect(onPrimaries.reduce((a, b) => a + b, 0)).toBe(49);
    for (const n of onPrimaries) expect(n).toBeGreaterThan(0);
  });

  it('a node killed with SIGKILL is shown inactive; its shards answer 503; restarted (same name and data) it rejoins with its documents', async () => {
    await call(cluster, 'PUT', '/survive/', { _settings: { number_of_shards: 3, number_of_replicas: 0 } });
    for (let i = 1; i <= 30; i++) await call(cluster, 'PUT', `/survive/${i}`, { i });
    const allocation = await allocationOf(cluster, '/survive/');
    const victim = 'node2';
    const victimShard = allocation.findIndex((copies) => copies[0] === victim) + 1;
    expect(victimShard).toBeGreaterThan(0);
    const oldPid = cluster.nodes.get(victim)!.process.pid;

    await cluster.nodes.get(victim)!.kill();
    const list = await cluster.waitForNodes([victim], false) as NodeView[];
    const down = byName(list, victim);
    // The last-known facts stay, with why and since when it is inactive.
    expect(down).toMatchObject({ active: false, role: 'shard', pid: oldPid, data: join(cluster.dataDir, victim) });
    expect(down.reason).toMatch(/connection/);
    expect(down.inactive_age_ms).toBeGreaterThanOrEqual(0);
    expect(down.shards).toContainEqual(expect.objectContaining({ index: '/survive/', shard: victimShard, primary: true }));
    expect((await call(cluster, 'GET', '/')).json.state).toBe('WAITING');
    expect((await call(cluster, 'GET', '/readyz')).status).toBe(200);
    // A read routed to the dead primary is a clear 503; the other shards still answer.
    const ids = Array.from({ length: 30 }, (_, k) => k + 1);
    const replies = await Promise.all(ids.map((i) => call(cluster, 'GET', `/survive/${i}`)));
    const unavailable = replies.filter((r) => r.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(unavailable[0]!.json.message).toContain(`on node '${victim}', which is not active`);
    expect(replies.filter((r) => r.status === 200).length).toBe(30 - unavailable.length);

    const restarted = await cluster.startNode(victim);
    expect(restarted.process.pid).not.toBe(oldPid);
    expect(byName(await nodesOf(cluster), victim)).toMatchObject({ active: true, pid: restarted.process.pid });
    for (const i of ids) expect((await call(cluster, 'GET', `/survive/${i}`)).json).toMatchObject({ i, _version: 1 });
    // Its search index was rebuilt from the operation log: searches see every document again.
    expect((await call(cluster, 'COUNT', '/survive/')).json.total).toBe(30);
    expect((await call(cluster, 'COUNT', '/survive/', { _query: { i: { _in: { _range: { _from: 1, _to: 10 } } } } })).json.total).toBe(10);
    expect((await call(cluster, 'GET', '/')).json.state).toBe('READY');
  });

  it('another process claiming an active node\'s name is refused, and told why', async () => {
    const before = byName(await nodesOf(cluster), 'node1');
    // Its own data directory: another process, not node1 restarted.
    const impostor = await spawnTessera('impostor', ['node', '--join', cluster.rpcUrl, '--name', 'node1', '--data', join(cluster.dataDir, 'impostor')], {}, 'joining');
    try {
      await impostor.waitForLog((l) => l.msg === 'the coordinator refused this node' && /taken by an active node/.test(String(l.reason)), 10_000);
      await cluster.waitForLog((l) => l.msg === 'node refused' && l.node === 'node1');
      expect(byName(await nodesOf(cluster), 'node1')).toMatchObject({ active: true, pid: before.pid });
    } finally {
      expect(await impostor.stop()).toBe(0);
    }
  });

  it('an index dropped while a node is down loses its copies there when the node rejoins: a new index of that name starts empty', async () => {
    await call(cluster, 'PUT', '/gone/', { _settings: { number_of_shards: 3, number_of_replicas: 0 } });
    for (let i = 1; i <= 12; i++) await call(cluster, 'PUT', `/gone/${i}`, { i });
    const victim = (await allocationOf(cluster, '/gone/'))[0]![0]!;
    await cluster.nodes.get(victim)!.kill();
    await cluster.waitForNodes([victim], false);
    expect((await call(cluster, 'DELETE', '/gone/')).status).toBe(204);
    const pending = async () => (await cluster.storedState()).nodes?.[victim]?.pendingDrops;
    expect((await pending())?.length).toBeGreaterThan(0);
    const indexDir = join(cluster.dataDir, victim, 'nodes', victim, 'gone');
    const shardDirs = () => (existsSync(indexDir) ? readdirSync(indexDir).filter((f) => f.startsWith('#')) : []);
    expect(shardDirs().length).toBeGreaterThan(0);
    await cluster.startNode(victim);
    await until('the pending drops done', async () => ((await pending()) === undefined ? true : undefined), 10_000);
    expect(shardDirs()).toEqual([]);
    await call(cluster, 'PUT', '/gone/', { _settings: { number_of_shards: 3, number_of_replicas: 0 } });
    expect((await call(cluster, 'COUNT', '/gone/')).json.total).toBe(0);
    for (let i = 1; i <= 12; i++) expect((await call(cluster, 'GET', `/gone/${i}`)).status).toBe(404);
  });

  it('a restarted coordinator keeps the allocations and the nodes rejoin it', async () => {
    await call(cluster, 'PUT', '/kept/', { _settings: { number_of_shards: 4, number_of_replicas: 1 } });
    for (let i = 1; i <= 20; i++) await call(cluster, 'PUT', `/kept/${i}`, { i });
    const before = await allocationOf(cluster, '/kept/');
    await cluster.restartCoordinator();
    expect(await allocationOf(cluster, '/kept/')).toEqual(before);
    const list = await nodesOf(cluster);
    for (const name of cluster.nodeNames) expect({ name, view: byName(list, name) }).toMatchObject({ name, view: { active: true } });
    for (let i = 1; i <= 20; i++) expect((await call(cluster, 'GET', `/kept/${i}`)).json).toMatchObject({ i, _version: 1 });
    expect((await call(cluster, 'UPDATE', '/kept/1', { more: 1 })).json._version).toBe(2);
    // The schema and the numeric ID counter (learnt again from the shards) survived too.
    expect((await call(cluster, 'GET', '/kept/')).json._schema.i._type).toBe('integer');
    expect((await call(cluster, 'POST', '/kept/', { i: 21 })).json._id).toBe(21);
    expect((await call(cluster, 'SEARCH', '/kept/', { _query: { i: { _in: { _range: { _from: 5, _to: 8 } } } }, _sort: 'i' })).json.hits.map((h: { _id: number }) => h._id))
      .toEqual([5, 6, 7, 8]);
  });
});

describe('a coordinator that no node has joined', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 0 });
  });

  afterAll(async () => {
    expect(await cluster.stop()).toBe(0);
    removeDir(cluster.dataDir);
  });

  it('is not ready and refuses to create an index with 503, until a node joins', async () => {
    expect((await call(cluster, 'GET', '/readyz')).status).toBe(503);
    expect((await call(cluster, 'GET', '/')).json.state).toBe('WAITING');
    const refused = await call(cluster, 'PUT', '/early/1', { a: 1 });
    expect(refused.status).toBe(503);
    expect(refused.json.message).toMatch(/No shard node is active/);
    expect((await call(cluster, 'GET', '/early/')).status).toBe(404);
    await cluster.startNode('solo');
    expect((await call(cluster, 'GET', '/readyz')).status).toBe(200);
    expect((await call(cluster, 'PUT', '/early/1', { a: 1 })).status).toBe(200);
    // One node: each shard has its primary, every replica is unassigned.
    for (const copies of await allocationOf(cluster, '/early/')) expect(copies).toEqual(['solo']);
  });

  it('after a restart, it lists the nodes it knows as inactive until they rejoin', async () => {
    await cluster.nodes.get('solo')!.stop();
    await cluster.restartCoordinator();
    const solo = byName(await nodesOf(cluster), 'solo');
    expect(solo).toMatchObject({ active: false, reason: 'not joined since the coordinator started' });
    expect(solo.shards!.length).toBeGreaterThan(0);
    expect((await call(cluster, 'GET', '/readyz')).status).toBe(503);
    await cluster.startNode('solo');
    expect((await call(cluster, 'GET', '/early/1')).json).toMatchObject({ a: 1 });
  });
});
