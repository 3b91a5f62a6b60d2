import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RpcClient } from '@tessera/rpc';
import { LocalStateStore } from '../state/local-store.js';
import { NodeLeases, nodeRegistrationKey } from './node-leases.js';
import { NodeDirectory } from './nodes.js';

const quiet = { warn: () => undefined };

/** The names of the nodes whose connection the coordinator closed. */
let closed: string[];
const clientOf = (name: string): RpcClient => ({ closed: false, inFlight: 0, call: () => Promise.reject(new Error('not connected')), close: async () => { closed.push(name); } });

describe('shard nodes\' etcd leases, as the elected coordinator follows them', () => {
  let dir: string;
  let store: LocalStateStore<unknown>;
  let nodes: NodeDirectory;
  let gone: string[];
  /** Nodes the cluster state records as keeping a lease. */
  let recorded: Set<string>;
  let leases: NodeLeases;
  let decides: boolean;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-node-leases-'));
    store = await LocalStateStore.open<unknown>(join(dir, 'state.json'), {});
    nodes = new NodeDirectory();
    gone = [];
    closed = [];
    recorded = new Set();
    decides = true;
    leases = new NodeLeases({ store, nodes, decides: () => decides, recordedLeased: (name) => recorded.has(name), gone: (name) => gone.push(name), log: quiet });
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const register = async (name: string) => {
    const lease = await store.grantLease(60_000);
    await store.putLeased(nodeRegistrationKey(name), { instance: `${name}-i`, host: 'h', pid: 1 }, lease);
    return lease;
  };

  it('a connected node that announced a lease is lost, and its connection closed, when the lease ends', async () => {
    nodes.join({ name: 'n1', client: clientOf('n1'), host: 'h', role: 'shard', local: false, etcdLease: true, instance: 'n1-i' });
    const lease = await register('n1');
    expect(leases.registered('n1')).toBe(true);
    await store.revokeLease(lease);
    expect(nodes.isActive('n1')).toBe(false);
    expect(nodes.all()[0]!.reason).toBe('its etcd lease ended (revoked)');
    expect(closed).toEqual(['n1']);
  });

  it('the end of a registration another process made under the connected node\'s name leaves the node be', async () => {
    nodes.join({ name: 'n1', client: clientOf('n1'), host: 'h', role: 'shard', local: false, etcdLease: true, instance: 'n1-other' });
    await store.revokeLease(await register('n1'));
    expect(nodes.isActive('n1')).toBe(true);
    expect(closed).toEqual([]);
  });

  it('a connected node that announced no lease keeps connection-only liveness', async () => {
    nodes.join({ name: 'n1', client: clientOf('n1'), host: 'h', role: 'shard', local: false });
    await store.revokeLease(await register('n1'));
    expect(nodes.isActive('n1')).toBe(true);
    expect(closed).toEqual([]);
  });

  it('a node not connected here is gone when its lease ends, if the cluster state says it keeps one', async () => {
    recorded.add('n1');
    await store.revokeLease(await register('n1'));
    await store.revokeLease(await register('n2'));
    expect(gone).toEqual(['n1']);
  });

  it('a coordinator that does not decide leaves every node be', async () => {
    decides = false;
    recorded.add('n1');
    nodes.join({ name: 'n2', client: clientOf('n2'), host: 'h', role: 'shard', local: false, etcdLease: true });
    await store.revokeLease(await register('n1'));
    await store.revokeLease(await register('n2'));
    expect(gone).toEqual([]);
    expect(nodes.isActive('n2')).toBe(true);
  });

  it('on taking over: the nodes recorded as leased, not connected and not registered, are lost now', async () => {
    recorded.add('n1').add('n2').add('n3');
    await register('n2');
    nodes.join({ name: 'n3', client: clientOf('n3'), host: 'h', role: 'shard', local: false, etcdLease: true });
    expect([...leases.goneNodes(['n1', 'n2', 'n3', 'n4']).keys()]).toEqual(['n1']);
  });
});
