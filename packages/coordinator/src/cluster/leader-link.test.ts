import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import { connectPeer, RpcServer, type RpcLogger, type RpcPeer, type WriteCall, type WriteReply } from '@tessera/rpc';
import { toTesseraError } from '@tessera/errors';
import type { IndexMeta } from '../state/cluster-state.js';
import type { CoordinatorGroup } from './coordinator-group.js';
import { COORDINATOR_HELLO_ROLE, LEADER_RELAY_FAILED_METHOD, LEADER_REVISION_METHOD, LEADER_WRITE_METHOD, LeaderLink, leaderCallHandler, type LeaderCalls } from './leader-link.js';
import { FollowerLeases } from './follower-leases.js';
import { admitPeer } from './membership.js';
import { NodeDirectory } from './nodes.js';

const quiet: RpcLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const META = {
  path: '/books/', uuid: 'u-1', createdAt: '', settings: { number_of_shards: 2, number_of_replicas: 0 },
  schema: { _schema: 'current' }, allocation: [['n1'], ['n1']],
} as unknown as IndexMeta;

describe('leader.write served to another coordinator through admitPeer', () => {
  let server: RpcServer;
  let peer: RpcPeer<LeaderCalls>;
  let decides = true;
  let revision = 7;
  let readsOfEtcd = 0;
  const written: Array<{ shard: number; call: WriteCall }> = [];
  const failures: Array<{ shard: number; term: number; nodes: string[] }> = [];
  const leases = new FollowerLeases(300);
  const directory = new NodeDirectory();

  beforeAll(async () => {
    const handlerFor = leaderCallHandler({
      decides: () => decides,
      stateRevision: () => revision,
      readSinceElected: async () => { readsOfEtcd++; },
      get: (path) => (path === META.path ? META : undefined),
      write: async (_meta, shard, call) => {
        written.push({ shard, call });
        return { id: call.id, version: 1, seq: 1, deleted: false } as unknown as WriteReply;
      },
      relayFailed: async (_meta, shard, term, nodes) => {
        failures.push({ shard, term, nodes });
      },
      leases,
    });
    server = await RpcServer.listen({
      identity: { name: 'elected', role: 'coordinator' },
      logger: quiet,
      onPeer: (p, hello) => admitPeer(p, hello, { directory, coordinatorName: 'elected', log: { warn: () => undefined }, coordinatorCalls: handlerFor }),
    });
    peer = connectPeer<LeaderCalls>(server.url, { identity: { name: 'other', role: COORDINATOR_HELLO_ROLE }, logger: quiet });
    await peer.whenConnected();
  });

  afterAll(async () => {
    await peer.close();
    await server.close();
  });

  const write = (uuid: string, call: Partial<WriteCall>, stateRevision = 7) =>
    peer.call(LEADER_WRITE_METHOD, { uuid, stateRevision, call: { index: '/books/', shard: 2, id: 'a', op: 'index', body: {}, commit: false, ...call } as WriteCall });
  const codeOf = (promise: Promise<unknown>) => promise.then(() => 'ok', (err: unknown) => toTesseraError(err).code);

  it('runs the routed write under the elected coordinator\'s own schema; the peer is no node', async () => {
    expect(await write('u-1', { schema: { _schema: 'stale' } })).toMatchObject({ id: 'a', version: 1 });
    expect(written.at(-1)).toMatchObject({ shard: 2, call: { index: '/books/', id: 'a', schema: { _schema: 'current' } } });
    expect(directory.isActive('other')).toBe(false);
  });

  it('refuses, with nothing run, a write routed from another state, in an index since created again, or reaching a coordinator no longer elected', async () => {
    const before = written.length;
    expect(await codeOf(write('u-1', {}, 6))).toBe('leader_required');
    revision = 8;
    expect(await codeOf(write('u-1', {}, 7))).toBe('leader_required');
    revision = 7;
    expect(await codeOf(write('u-0', {}))).toBe('leader_required');
    expect(await codeOf(write('u-1', { index: '/gone/' }))).toBe('leader_required');
    decides = false;
    expect(await codeOf(write('u-1', {}))).toBe('leader_required');
    decides = true;
    expect(await codeOf(write('u-1', { shard: 3 }))).toBe('rpc_bad_params');
    expect(await codeOf(peer.call(LEADER_WRITE_METHOD, { call: {} } as never))).toBe('rpc_bad_params');
    expect(written.length).toBe(before);
  });

  it('takes a direct write\'s failed relays to the host, for the index it names by path and uuid; malformed or misdirected ones are refused', async () => {
    expect(await peer.call(LEADER_RELAY_FAILED_METHOD, { index: '/books/', uuid: 'u-1', shard: 2, term: 3, nodes: ['n2'] })).toBeNull();
    expect(failures.at(-1)).toEqual({ shard: 2, term: 3, nodes: ['n2'] });
    expect(await codeOf(peer.call(LEADER_RELAY_FAILED_METHOD, { index: '/books/', uuid: 'u-0', shard: 2, term: 3, nodes: ['n2'] }))).toBe('index_not_found');
    expect(await codeOf(peer.call(LEADER_RELAY_FAILED_METHOD, { index: '/books/', uuid: 'u-1', shard: 2, term: 3, nodes: 'n2' } as never))).toBe('rpc_bad_params');
    decides = false;
    expect(await codeOf(peer.call(LEADER_RELAY_FAILED_METHOD, { index: '/books/', uuid: 'u-1', shard: 2, term: 3, nodes: [] }))).toBe('leader_required');
    decides = true;
    expect(failures).toHaveLength(1);
  });

  it('answers leader.revision with the revision it decides at, once it read etcd since its election; refused once not elected', async () => {
    const before = readsOfEtcd;
    expect(await peer.call(LEADER_REVISION_METHOD, {})).toEqual({ revision: 7 });
    expect(readsOfEtcd).toBe(before + 1);
    decides = false;
    expect(await codeOf(peer.call(LEADER_REVISION_METHOD, {}))).toBe('leader_required');
    decides = true;
  });

  it('gives a read the elected coordinator\'s revision over an open connection only, one ask shared by the reads arriving meanwhile', async () => {
    const group = groupOf({ name: 'elected', rpc: server.url });
    const link = new LeaderLink(group, { name: 'other', clusterSecret: '', callTimeoutMs: 5_000, connectTimeoutMs: 5_000 });
    try {
      // No connection yet: undefined (the read goes to etcd), and one is dialled for the next.
      expect(await link.electedRevision()).toBeUndefined();
      const dialled = (link as unknown as { link: { peer: RpcPeer<LeaderCalls> } }).link.peer;
      await dialled.whenConnected();
      revision = 41;
      const before = readsOfEtcd;
      const answers = await Promise.all(Array.from({ length: 20 }, () => link.electedRevision()));
      expect(new Set(answers)).toEqual(new Set([41]));
      // One ask in flight, the rest sharing the next: two at most, not twenty.
      expect(readsOfEtcd - before).toBeLessThanOrEqual(2);
      // Another coordinator elected, not connected here: undefined again.
      group.elected = { name: 'gone', rpc: 'ws://127.0.0.1:1' };
      expect(await link.electedRevision()).toBeUndefined();
    } finally {
      revision = 7;
      await link.close();
    }
  });

  it('gives a follower a lease: reads are served at the revision it holds, each change fenced through it first, none once it lapsed', async () => {
    const group = groupOf({ name: 'elected', rpc: server.url });
    let reachable = true;
    const link = new LeaderLink(group, {
      name: 'other', clusterSecret: '', callTimeoutMs: 5_000, connectTimeoutMs: 5_000, leaseMs: 300, reachRevision: async () => reachable,
    });
    try {
      expect(link.leasedRevision()).toBeUndefined();
      // The first read dials; the lease follows within a renewal.
      await link.electedRevision();
      const dialled = (link as unknown as { link: { peer: RpcPeer<LeaderCalls> } }).link.peer;
      await dialled.whenConnected();
      await new Promise((r) => setTimeout(r, 250));
      expect(link.leasedRevision()).toBe(7);
      // A change at revision 9 is acknowledged only once the follower took it.
      await leases.fence(9);
      expect(link.leasedRevision()).toBe(9);
      // A follower whose state cannot reach a revision drops its lease rather than hold it.
      reachable = false;
      await leases.fence(10);
      expect(link.leasedRevision()).toBeUndefined();
      reachable = true;
      // Another coordinator elected: the lease is gone at once.
      await new Promise((r) => setTimeout(r, 250));
      expect(link.leasedRevision()).toBe(7);
      group.emit('leaderChanged');
      expect(link.leasedRevision()).toBeUndefined();
    } finally {
      await link.close();
    }
  });

  it('sends the writes that arrive before its connection is up once it is, with one wait among them', async () => {
    const group = groupOf({ name: 'elected', rpc: server.url });
    const link = new LeaderLink(group, { name: 'other', clusterSecret: '', callTimeoutMs: 5_000, connectTimeoutMs: 5_000 });
    try {
      const calls = Array.from({ length: 30 }, (_, i) => ({ index: '/books/', shard: 1, id: `w${i}`, op: 'index', body: {}, commit: false }) as unknown as WriteCall);
      const pending = calls.map((call) => link.write(META, call, 7));
      // Before the connection is up: one wait on the peer, not one per write (30 would pass EventEmitter's bound of 10).
      await new Promise((resolve) => setImmediate(resolve));
      const dialled = (link as unknown as { link: { peer: RpcPeer<LeaderCalls> } }).link.peer;
      expect(dialled.listenerCount('connected')).toBeLessThanOrEqual(1);
      const replies = await Promise.all(pending);
      expect(replies.map((r) => r.id)).toEqual(calls.map((c) => c.id));
    } finally {
      await link.close();
    }
  });

  it('ends a write\'s wait for an elected coordinator that does not answer as soon as another is elected', async () => {
    const silent = await silentAddress();
    const group = groupOf({ name: 'gone', rpc: silent.url });
    // Connect timeouts far past the test's own: only the change of leader can end the waits.
    const link = new LeaderLink(group, { name: 'other', clusterSecret: '', callTimeoutMs: 60_000, connectTimeoutMs: 60_000 });
    try {
      const call = (id: string) => ({ index: '/books/', shard: 1, id, op: 'index', body: {}, commit: false }) as unknown as WriteCall;
      const waiting = link.write(META, call('a'), 7);
      await new Promise((r) => setTimeout(r, 100));
      // Another coordinator is elected: the waiting write goes to it.
      group.elected = { name: 'elected', rpc: server.url };
      group.emit('leaderChanged');
      expect(await waiting).toMatchObject({ id: 'a' });
      // The elected one cannot be reached again, and this coordinator is elected meanwhile: refused with nothing sent, to run here.
      group.elected = { name: 'gone', rpc: silent.url };
      const refused = codeOf(link.write(META, call('b'), 7));
      await new Promise((r) => setTimeout(r, 100));
      group.isLeader = true;
      group.emit('leaderChanged');
      expect(await refused).toBe('leader_required');
      expect(written.some((w) => w.call.id === 'b')).toBe(false);
      // One listener on the group while writes wait, whatever their number.
      group.isLeader = false;
      const many = Array.from({ length: 30 }, (_, i) => codeOf(link.write(META, call(`m${i}`), 7)));
      await new Promise((r) => setTimeout(r, 50));
      expect(group.listenerCount('leaderChanged')).toBe(1);
      group.elected = undefined;
      group.isLeader = true;
      group.emit('leaderChanged');
      expect(new Set(await Promise.all(many))).toEqual(new Set(['leader_required']));
    } finally {
      await link.close();
      silent.close();
    }
  });
});

/** A coordinator group as a LeaderLink sees it: the elected coordinator's record and whether this one is it. */
function groupOf(elected: { name: string; rpc: string } | undefined) {
  const group = Object.assign(new EventEmitter(), {
    name: 'other', elected, isLeader: false, health: () => undefined,
    leader: () => group.elected,
  });
  return group as typeof group & CoordinatorGroup;
}

/** An address that takes TCP connections and never answers the WebSocket handshake. */
async function silentAddress(): Promise<{ url: string; close(): void }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => { sockets.add(socket); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}`, close: () => { for (const s of sockets) s.destroy(); server.close(); } };
}
