import type { RpcClient } from '@tessera/rpc';
import { allocateShards, NodeDirectory, type NodeEntry } from './nodes.js';

describe('allocateShards', () => {
  it('never puts two copies of a shard on one node', () => {
    const allocation = allocateShards(['n1', 'n2', 'n3'], 5, 2);
    expect(allocation).toHaveLength(5);
    for (const copies of allocation) {
      expect(copies).toHaveLength(3);
      expect(new Set(copies).size).toBe(3);
    }
    const primaries = allocation.map((c) => c[0]);
    expect(new Set(primaries).size).toBe(3);
  });

  it('leaves replicas unassigned when there are too few nodes', () => {
    expect(allocateShards(['node1'], 3, 1)).toEqual([['node1'], ['node1'], ['node1']]);
  });
});

/** A client that only knows whether it was closed. */
function fakeClient(): RpcClient & { closeCalls: number } {
  const client = {
    closed: false,
    inFlight: 0,
    closeCalls: 0,
    call: () => Promise.reject(new Error('not connected')),
    close: async () => { client.closed = true; client.closeCalls++; },
  };
  return client;
}

function entry(name: string, extra: Partial<NodeEntry> = {}): NodeEntry {
  return { name, client: fakeClient(), host: 'h', role: 'shard', local: false, ...extra };
}

describe('NodeDirectory', () => {
  function recorded(directory: NodeDirectory): string[] {
    const events: string[] = [];
    directory.on('nodeJoined', (e) => events.push(`joined ${e.name}`));
    directory.on('nodeLost', (e, reason) => events.push(`lost ${e.name}: ${reason}`));
    return events;
  }

  it('a joined node is active until its connection is lost; the last-known entry stays', () => {
    const directory = new NodeDirectory();
    const events = recorded(directory);
    const a = entry('a', { instance: 'i1', dataDir: '/d/a' });
    expect(directory.join(a)).toEqual({ joined: true });
    expect(directory.activeNames()).toEqual(['a']);
    directory.leave('a', a.client, 'heartbeat timeout');
    expect(directory.isActive('a')).toBe(false);
    expect(directory.get('a')).toBe(a);
    expect(directory.all()).toEqual([expect.objectContaining({ name: 'a', active: false, entry: a, reason: 'heartbeat timeout' })]);
    expect(events).toEqual(['joined a', 'lost a: heartbeat timeout']);
    // Lost twice is still one loss.
    directory.leave('a', a.client, 'closed');
    expect(events).toHaveLength(2);
  });

  it('a rejoin replaces the entry; the old connection going away later changes nothing', () => {
    const directory = new NodeDirectory();
    const events = recorded(directory);
    const first = entry('a', { instance: 'i1' });
    directory.join(first);
    directory.leave('a', first.client, 'closed');
    const second = entry('a', { instance: 'i2' });
    expect(directory.join(second)).toEqual({ joined: true });
    directory.leave('a', first.client, 'late close of the old socket');
    expect(directory.isActive('a')).toBe(true);
    expect(directory.get('a')).toBe(second);
    expect(events).toEqual(['joined a', 'lost a: closed', 'joined a']);
  });

  it('the same instance joining while still active is a restart: the old connection is closed and counts as lost', () => {
    const directory = new NodeDirectory();
    const events = recorded(directory);
    const old = entry('a', { instance: 'same' });
    directory.join(old);
    const restarted = entry('a', { instance: 'same' });
    expect(directory.join(restarted)).toEqual({ joined: true });
    expect((old.client as ReturnType<typeof fakeClient>).closeCalls).toBe(1);
    expect(directory.get('a')).toBe(restarted);
    expect(events).toEqual(['joined a', 'lost a: restarted: replaced by its new connection', 'joined a']);
  });

  it('another instance claiming an active name is refused and changes nothing', () => {
    const directory = new NodeDirectory();
    const events = recorded(directory);
    const owner = entry('a', { instance: 'i1', dataDir: '/data/a' });
    directory.join(owner);
    const outcome = directory.join(entry('a', { instance: 'i2' }));
    expect(outcome).toEqual({ joined: false, reason: "node name 'a' is taken by an active node (data directory /data/a)" });
    expect(directory.get('a')).toBe(owner);
    expect((owner.client as ReturnType<typeof fakeClient>).closeCalls).toBe(0);
    expect(events).toEqual(['joined a']);
    // add() (the embedded node) refuses loudly.
    expect(() => directory.add(entry('a'))).toThrow(/taken/);
  });

  it('expected nodes are known and inactive until they join; names and activeNames are sorted', () => {
    const directory = new NodeDirectory();
    directory.join(entry('c'));
    directory.expect(['b', 'c', 'a']);
    expect(directory.names()).toEqual(['a', 'b', 'c']);
    expect(directory.activeNames()).toEqual(['c']);
    expect(directory.get('a')).toBeUndefined();
    expect(directory.all().find((s) => s.name === 'a')).toMatchObject({ active: false, entry: undefined, reason: 'not joined since the coordinator started' });
    directory.join(entry('a'));
    expect(directory.activeNames()).toEqual(['a', 'c']);
  });
});
