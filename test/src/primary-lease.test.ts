/**
 * The primary lease of a real `tessera node` (packages/node/src/primary-lease.ts,
 * wired in packages/cli/src/node.ts): it runs out while the coordinator is
 * silent (SIGSTOP), and is renewed once the coordinator answers again.
 */
import { call, removeDir } from './harness.js';
import { startCluster, type Cluster } from './cluster-harness.js';

let cluster: Cluster | undefined;

afterEach(async () => {
  if (cluster === undefined) return;
  cluster.coordinator.process.kill('SIGCONT');
  expect(await cluster.stop()).toBe(0);
  removeDir(cluster.dataDir);
});

it('a node’s primary lease runs out while the coordinator is silent (SIGSTOP), and is renewed once it is heard: writes go on', async () => {
  cluster = await startCluster({ nodes: 1, env: { TESSERA_PRIMARY_LEASE_MS: '400' } });
  expect((await call(cluster, 'PUT', '/leased/a', { v: 1 })).status).toBeLessThan(300);
  const node = cluster.nodes.get('node1')!;
  cluster.coordinator.process.kill('SIGSTOP');
  const expired = await node.waitForLog((l) => l.msg === 'primary lease expired: no writes as primary until the coordinator is heard again', 4_000);
  expect(expired.silentMs).toBeGreaterThan(400);
  expect(node.logs.some((l) => l.msg === 'lost the coordinator; redialing')).toBe(false);
  cluster.coordinator.process.kill('SIGCONT');
  await node.waitForLog((l) => l.msg === 'coordinator heard again: primary lease renewed', 4_000);
  const put = await call(cluster, 'PUT', '/leased/b', { v: 2 });
  expect(put.status).toBeLessThan(300);
  expect((await call(cluster, 'GET', '/leased/b')).json).toMatchObject({ v: 2 });
}, 30_000);
