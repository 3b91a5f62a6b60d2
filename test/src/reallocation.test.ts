/**
 * Re-allocation of a lost node's shard copies after `nodeLeftDelayMs`, and
 * failover when a primary's node never rejoins a restarted coordinator
 * (packages/coordinator/src/replication/reallocation.ts), with the shard
 * nodes in one process (in-process-cluster.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EMPTY_CLUSTER_STATE, readLocalState, type ClusterState } from '@tessera/coordinator';
import { shardDirectory } from '@tessera/node';
import { InProcessCluster } from './in-process-cluster.js';

let cluster: InProcessCluster;

afterEach(async () => {
  await cluster?.stop();
});

const INDEX = '/reallocated/';

async function writeMany(count: number, from = 0): Promise<void> {
  for (let i = from; i < from + count; i++) await cluster.write(INDEX, { op: 'index', id: `d${i}`, body: { n: i } });
}

function state(): ClusterState {
  return readLocalState<ClusterState>(cluster.stateFile, EMPTY_CLUSTER_STATE);
}

function copyDir(node: string): string {
  return shardDirectory(join(cluster.dir, node), INDEX, 1);
}

describe('re-allocation of a lost node’s copies', () => {
  it('re-creates a lost primary’s copy elsewhere after the delay, in sync with identical documents; the node’s stale copy is dropped when it returns', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3'], { replication: { nodeLeftDelayMs: 300 } });
    await cluster.createIndex(INDEX);
    expect(cluster.placement(INDEX)).toMatchObject({ copies: ['n1', 'n2'], inSync: ['n1', 'n2'] });
    await writeMany(30);
    await cluster.kill('n1');
    // The failover comes first and at once: n2 is primary under term 2, with one copy.
    await cluster.until('n2 promoted', () => cluster.placement(INDEX).term === 2);
    expect(cluster.placement(INDEX)).toMatchObject({ copies: ['n2', 'n1'], inSync: ['n2'] });
    await cluster.write(INDEX, { op: 'delete', id: 'd3' });
    await writeMany(10, 30);
    const lostAt = state().nodes?.n1?.lostAt;
    expect(typeof lostAt).toBe('string');

    await cluster.until('n1’s copy on n3, in sync', () => {
      const placement = cluster.placement(INDEX);
      return placement.copies.join() === 'n2,n3' && placement.inSync.includes('n3');
    });
    expect(cluster.placement(INDEX)).toMatchObject({ primary: 'n2', term: 2, inSync: ['n2', 'n3'] });
    const line = cluster.logs.find((l) => l.msg === 'shard copy re-allocated off a lost node');
    expect(line).toMatchObject({ index: INDEX, shard: 1, lost: 'n1', node: 'n3', term: 2 });
    expect(line?.lostForMs).toBeGreaterThanOrEqual(300);
    const primary = await cluster.versions('n2', INDEX);
    expect(primary).toHaveLength(39);
    expect(await cluster.versions('n3', INDEX)).toEqual(primary);
    // In sync: it gets every write before the write is answered.
    const after = await cluster.write(INDEX, { op: 'index', id: 'after', body: {} });
    expect(await cluster.direct('n3').call('doc.get', { index: INDEX, shard: 1, id: 'after' })).toMatchObject({ version: after.version });
    // Persisted in one step: the new allocation and n1’s old copy as a pending drop.
    const persisted = state();
    expect(persisted.indexes[INDEX]?.allocation).toEqual([['n2', 'n3']]);
    expect(persisted.nodes?.n1?.pendingDrops).toEqual([{ index: INDEX, shard: 1 }]);

    // n1 comes back: its stale copy is deleted, it gets no copy back, and its loss is forgotten.
    expect(existsSync(copyDir('n1'))).toBe(true);
    cluster.startNode('n1');
    await cluster.until('n1’s stale copy dropped', () => state().nodes?.n1?.pendingDrops === undefined);
    expect(existsSync(copyDir('n1'))).toBe(false);
    await cluster.until('n1’s loss forgotten', () => state().nodes?.n1?.lostAt === undefined);
    expect(cluster.placement(INDEX).copies).toEqual(['n2', 'n3']);
  });

  it('leaves a node back within the delay its copies: it catches up instead', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3'], { replication: { nodeLeftDelayMs: 60_000 } });
    await cluster.createIndex(INDEX);
    await writeMany(5);
    await cluster.kill('n2');
    await cluster.until('n2 out of sync', () => !cluster.placement(INDEX).inSync.includes('n2'));
    await writeMany(5, 5);
    cluster.startNode('n2');
    await cluster.until('n2 in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    expect(cluster.placement(INDEX).copies).toEqual(['n1', 'n2']);
    expect(cluster.logs.some((l) => l.msg === 'shard copy re-allocated off a lost node')).toBe(false);
    await cluster.until('n2’s loss forgotten', () => state().nodes?.n2?.lostAt === undefined);
  });

  it('waits, and says so, while no active node is free of a copy; a node joining takes the copy', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { replication: { nodeLeftDelayMs: 100 } });
    await cluster.createIndex(INDEX);
    await writeMany(20);
    await cluster.kill('n2');
    await cluster.until('the copy waits', () => cluster.logs.some((l) => l.msg === 'shard copies of a lost node wait to be re-allocated'));
    expect(cluster.logs.find((l) => l.msg === 'shard copies of a lost node wait to be re-allocated')).toMatchObject({
      node: 'n2', copies: [{ index: INDEX, shard: 1, why: 'no active node without a copy of the shard' }],
    });
    expect(cluster.placement(INDEX).copies).toEqual(['n1', 'n2']);
    await writeMany(5, 20);
    // A new node: the waiting copy goes there and recovers.
    cluster.startNode('n3');
    await cluster.until('the copy on n3, in sync', () => cluster.placement(INDEX).inSync.includes('n3'));
    expect(cluster.placement(INDEX).copies).toEqual(['n1', 'n3']);
    expect(await cluster.versions('n3', INDEX)).toEqual(await cluster.versions('n1', INDEX));
    expect(await cluster.versions('n1', INDEX)).toHaveLength(25);
  });

  it('counts the delay from the loss recorded in the cluster state across a coordinator restart', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3'], { replication: { nodeLeftDelayMs: 600_000 } });
    await cluster.createIndex(INDEX);
    await writeMany(10);
    await cluster.kill('n2');
    await cluster.until('the loss recorded', () => state().nodes?.n2?.lostAt !== undefined);
    // The coordinator restarts as if it had been down for an hour since the loss: the delay has run out.
    const recorded = state();
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await cluster.restartCoordinator({ replication: { nodeLeftDelayMs: 600_000, rejoinTimeoutMs: 100 } });
    expect(cluster.registry.lostSince('n2')).toBe(Date.parse(recorded.nodes?.n2?.lostAt as string));
    await cluster.registry.recordNodeLoss('n2', Date.parse(anHourAgo));
    await cluster.restartCoordinator({ replication: { nodeLeftDelayMs: 600_000, rejoinTimeoutMs: 100 } });
    await cluster.until('n2’s copy on n3, in sync', () => cluster.placement(INDEX).inSync.includes('n3'));
    expect(cluster.placement(INDEX).copies).toEqual(['n1', 'n3']);
    expect(await cluster.versions('n3', INDEX)).toEqual(await cluster.versions('n1', INDEX));
  });
});

describe('a restarted coordinator without a node', () => {
  it('fails over a primary whose node does not rejoin within the rejoin timeout; a write made meanwhile waits and lands; the copy is then re-allocated', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3'], { replication: { nodeLeftDelayMs: 300 } });
    await cluster.createIndex(INDEX);
    await writeMany(25);
    await cluster.restartCoordinator({ absent: ['n1'], replication: { nodeLeftDelayMs: 300, rejoinTimeoutMs: 300 } });
    // Before the timeout nothing is decided: n1 may still come back.
    expect(cluster.placement(INDEX)).toMatchObject({ primary: 'n1', term: 1, inSync: ['n1', 'n2'] });
    const started = Date.now();
    const write = await cluster.write(INDEX, { op: 'index', id: 'during', body: {} });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(cluster.placement(INDEX)).toMatchObject({ primary: 'n2', term: 2 });
    expect(cluster.logs.find((l) => l.msg === 'node did not rejoin the restarted coordinator; it is lost')).toMatchObject({ node: 'n1' });
    expect(cluster.logs.find((l) => l.msg === 'shard primary promoted')).toMatchObject({ lost: 'n1', promoted: 'n2', term: 2 });
    expect(await cluster.direct('n2').call('doc.get', { index: INDEX, shard: 1, id: 'during' })).toMatchObject({ version: write.version });

    await cluster.until('n1’s copy on n3, in sync', () => cluster.placement(INDEX).inSync.includes('n3'));
    expect(cluster.placement(INDEX).copies).toEqual(['n2', 'n3']);
    const primary = await cluster.versions('n2', INDEX);
    expect(primary).toHaveLength(26);
    expect(await cluster.versions('n3', INDEX)).toEqual(primary);
  });

  it('keeps every copy of the nodes that rejoin in time, and fails nothing over', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { replication: { nodeLeftDelayMs: 100 } });
    await cluster.createIndex(INDEX);
    await writeMany(5);
    await cluster.restartCoordinator({ replication: { nodeLeftDelayMs: 100, rejoinTimeoutMs: 100 } });
    await writeMany(5, 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cluster.placement(INDEX)).toMatchObject({ copies: ['n1', 'n2'], term: 1, inSync: ['n1', 'n2'] });
    expect(cluster.logs.some((l) => l.msg === 'node did not rejoin the restarted coordinator; it is lost')).toBe(false);
    expect(await cluster.versions('n2', INDEX)).toEqual(await cluster.versions('n1', INDEX));
  });
});

