import { connectPeer, RpcServer, type RpcLogger, type RpcPeer } from '@tessera/rpc';
import { admitPeer, NODE_REFUSED_METHOD, SHARD_NODE_HELLO_ROLE, SHARD_NODE_ROLE } from './membership.js';
import { NodeDirectory } from './nodes.js';

const quiet: RpcLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('admitPeer over a real WebSocket', () => {
  let server: RpcServer;
  let directory: NodeDirectory;
  const warnings: Array<Record<string, unknown>> = [];
  const dialled: RpcPeer[] = [];

  beforeEach(async () => {
    directory = new NodeDirectory();
    warnings.length = 0;
    server = await RpcServer.listen({
      identity: { name: 'boss', role: 'coordinator' },
      logger: quiet,
      heartbeatIntervalMs: 50,
      heartbeatTimeoutMs: 300,
      onPeer: (peer, hello) => admitPeer(peer, hello, { directory, coordinatorName: 'boss', log: { warn: (b) => { warnings.push(b); } } }),
    });
  });

  afterEach(async () => {
    await Promise.all(dialled.splice(0).map((p) => p.close()));
    await server.close();
  });

  /** A node dialling in; `refusals` collects the reasons the coordinator gives. */
  function dial(name: string, role: string, info: Record<string, unknown>) {
    const refusals: string[] = [];
    const peer = connectPeer(server.url, {
      identity: { name, role, info },
      logger: quiet,
      reconnectInitialMs: 60_000,
      handler: async (method, params) => {
        if (method === NODE_REFUSED_METHOD) refusals.push((params as { reason: string }).reason);
        return null;
      },
    });
    dialled.push(peer);
    return { peer, refusals };
  }

  const until = async (condition: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not met');
      await new Promise((res) => setTimeout(res, 10));
    }
  };

  it('a node joins with what its hello announces, and its client reaches it', async () => {
    const { peer } = dial('n1', SHARD_NODE_HELLO_ROLE, { dataDir: '/data/n1', pid: 4242, instance: 'i-1', host: 'box', version: '0.1.0' });
    peer.serve(async (method) => (method === 'node.info' ? { name: 'n1', shards: [] } : null));
    await until(() => directory.isActive('n1'));
    const entry = directory.get('n1')!;
    expect(entry).toMatchObject({ name: 'n1', host: 'box', role: SHARD_NODE_ROLE, local: false, dataDir: '/data/n1', pid: 4242, instance: 'i-1' });
    expect(await entry.client.call('node.info', {})).toEqual({ name: 'n1', shards: [] });
    expect(Date.now() - entry.lastHeardAt!()!).toBeLessThan(1000);
  });

  it('hello info of the wrong types is ignored, not trusted', async () => {
    dial('n2', SHARD_NODE_HELLO_ROLE, { dataDir: 7, pid: -1, instance: 'x'.repeat(5000), host: ['no'] });
    await until(() => directory.isActive('n2'));
    const entry = directory.get('n2')!;
    expect(entry.host).toBe('unknown');
    expect(entry.dataDir).toBeUndefined();
    expect(entry.pid).toBeUndefined();
    expect(entry.instance).toBeUndefined();
  });

  it('a node whose connection goes away becomes inactive', async () => {
    const { peer } = dial('n3', SHARD_NODE_HELLO_ROLE, { instance: 'i-3' });
    await until(() => directory.isActive('n3'));
    const lost: string[] = [];
    directory.on('nodeLost', (e, reason) => lost.push(`${e.name}: ${reason}`));
    await peer.close();
    await until(() => !directory.isActive('n3'));
    expect(lost).toEqual([expect.stringMatching(/^n3: .*connection closed/)]);
  });

  it('refuses, and tells why: another role, the coordinator\'s name, a name taken by another active node', async () => {
    dial('owner', SHARD_NODE_HELLO_ROLE, { instance: 'mine' });
    await until(() => directory.isActive('owner'));
    const cases = [
      dial('c2', 'coordinator', {}),
      dial('boss', SHARD_NODE_HELLO_ROLE, {}),
      dial('owner', SHARD_NODE_HELLO_ROLE, { instance: 'theirs' }),
    ];
    await until(() => cases.every((c) => c.refusals.length === 1));
    expect(cases.map((c) => c.refusals[0])).toEqual([
      "only shard nodes (role 'node') join a coordinator, not role 'coordinator'",
      "node name 'boss' is the coordinator's own name",
      "node name 'owner' is taken by an active node",
    ]);
    expect(warnings.map((w) => w.node).sort()).toEqual(['boss', 'c2', 'owner']);
    expect(directory.names()).toEqual(['owner']);
    expect(directory.get('owner')!.instance).toBe('mine');
  });
});
