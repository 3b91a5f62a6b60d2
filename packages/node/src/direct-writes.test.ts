import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TesseraError } from '@tessera/errors';
import { bodyOf, InProcessClient, type DocumentReply, type RelayTarget, type RpcClient } from '@tessera/rpc';
import { DirectWrites, type RelayPeers } from './direct-writes.js';
import { ShardNode } from './shard-node.js';

const WHERE = { index: '/solo/', shard: 1 };
const KEY = '/solo/#1';
const SOLO = { ...WHERE, direct: true, replicas: [] };

describe('DirectWrites', () => {
  it('admits a direct write only while placed direct in its term', () => {
    const direct = new DirectWrites(undefined);
    expect(() => direct.admit(KEY, WHERE, 1)).toThrow(expect.objectContaining({ code: 'primary_not_placed', status: 503 }));
    void direct.place(KEY, { ...SOLO, term: 1, revision: 10 });
    direct.admit(KEY, WHERE, 1).finished();
    expect(() => direct.admit(KEY, WHERE, 2)).toThrow(TesseraError);
    direct.forget(KEY);
    expect(() => direct.admit(KEY, WHERE, 1)).toThrow(TesseraError);
  });

  it('keeps the word of the highest revision: an older push arriving late changes nothing', async () => {
    const direct = new DirectWrites(undefined);
    await direct.place(KEY, { ...SOLO, term: 1, revision: 20, direct: false });
    expect(await direct.place(KEY, { ...SOLO, term: 1, revision: 19 })).toBe(20);
    expect(() => direct.admit(KEY, WHERE, 1)).toThrow(TesseraError);
    await direct.place(KEY, { ...SOLO, term: 1, revision: 21 });
    expect(direct.admit(KEY, WHERE, 1).replicas).toEqual([]);
  });

  it('answers a push that ends direct once the direct writes running have finished, and admits none after it', async () => {
    const direct = new DirectWrites(undefined);
    await direct.place(KEY, { ...SOLO, term: 1, revision: 1 });
    const first = direct.admit(KEY, WHERE, 1);
    const second = direct.admit(KEY, WHERE, 1);
    let answered = false;
    const push = direct.place(KEY, { ...SOLO, term: 1, revision: 2, direct: false }).then(() => { answered = true; });
    expect(() => direct.admit(KEY, WHERE, 1)).toThrow(TesseraError);
    first.finished();
    first.finished(); // twice counts once
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    second.finished();
    await push;
    expect(answered).toBe(true);
  });

  it('answers a push that adds a replica once the writes admitted before it have run (a copy tracked by its recovery gets every later write), any other at once', async () => {
    const peers = { client: () => { throw new Error('not dialled here'); } };
    const direct = new DirectWrites(peers);
    await direct.place(KEY, { ...SOLO, term: 1, revision: 1 });
    const before = direct.admit(KEY, WHERE, 1);
    expect(before.replicas).toEqual([]);
    let answered = false;
    const push = direct.place(KEY, { ...SOLO, term: 1, revision: 2, replicas: [{ node: 'n2', url: 'ws://n2' }] }).then(() => { answered = true; });
    // Admitted under the new placement: relayed to n2, and not waited for by the push.
    const after = direct.admit(KEY, WHERE, 1);
    expect(after.replicas.map((r) => r.node)).toEqual(['n2']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    // Run (its seq taken), its relays still on their way: that is enough.
    before.ran();
    await push;
    expect(answered).toBe(true);
    // A push that adds no replica does not wait, even for a write not yet run or stuck in a relay to a lost replica.
    expect(await direct.place(KEY, { ...SOLO, term: 1, revision: 3 })).toBe(3);
    after.finished();
    before.finished();
  });

  it('refuses a placement with replicas on a node that relays to none', () => {
    const direct = new DirectWrites(undefined);
    expect(() => direct.place(KEY, { ...WHERE, term: 1, revision: 1, direct: true, replicas: [{ node: 'n2', url: 'ws://x' }] }))
      .toThrow(expect.objectContaining({ code: 'rpc_bad_params' }));
  });
});

describe('a direct doc.write on a ShardNode', () => {
  const dirs: string[] = [];
  const nodes: ShardNode[] = [];
  const start = (name: string, relayPeers?: RelayPeers): ShardNode => {
    const dataDir = mkdtempSync(join(tmpdir(), `tessera-node-direct-${name}-`));
    dirs.push(dataDir);
    const node = new ShardNode({ name, dataDir, ...(relayPeers === undefined ? {} : { relayPeers }) });
    nodes.push(node);
    return node;
  };
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((node) => node.close()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const write = (node: ShardNode, id: string, direct: boolean, term = 1) => node.handle('doc.write', { ...WHERE, op: 'index', id, body: { n: id }, term, direct });

  it('is refused before it runs until the copy is placed direct, then runs; a plain write never asks', async () => {
    const node = start('n1');
    await expect(write(node, 'a', true)).rejects.toMatchObject({ code: 'primary_not_placed' });
    await expect(write(node, 'b', false)).resolves.toMatchObject({ id: 'b', version: 1 });
    await node.handle('shard.placement', { ...SOLO, term: 1, revision: 5 });
    await expect(write(node, 'a', true)).resolves.toMatchObject({ id: 'a', version: 1 });
    await expect(node.handle('shard.placement', { ...SOLO, term: 1, revision: 'x' })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    // Dropped and made again: unplaced.
    await node.handle('shard.drop', WHERE);
    await expect(write(node, 'c', true)).rejects.toMatchObject({ code: 'primary_not_placed' });
    expect(await node.handle('doc.get', { ...WHERE, id: 'a' })).toBeNull();
  });

  it('relays a direct write to its replicas before it answers; a replica that fails is named, and no direct write is taken until placed again', async () => {
    const replica = start('n2');
    let down = false;
    const peers: RelayPeers = {
      client: (target: RelayTarget): RpcClient => {
        if (down) throw new TesseraError('rpc_unavailable', 503, `${target.node} is down`);
        return new InProcessClient(replica.handle);
      },
    };
    const primary = start('n1', peers);
    const placed = { ...WHERE, term: 1, direct: true, replicas: [{ node: 'n2', url: 'ws://n2' }] };
    await primary.handle('shard.placement', { ...placed, revision: 1 });
    expect(await write(primary, 'a', true)).not.toHaveProperty('relayFailed');
    const copied = await replica.handle('doc.get', { ...WHERE, id: 'a' }) as DocumentReply;
    expect(copied).toMatchObject({ id: 'a', version: 1 });
    expect(bodyOf(copied)).toEqual({ n: 'a' });
    down = true;
    expect(await write(primary, 'b', true)).toMatchObject({ id: 'b', relayFailed: ['n2'] });
    await expect(write(primary, 'c', true)).rejects.toMatchObject({ code: 'primary_not_placed' });
    down = false;
    await primary.handle('shard.placement', { ...placed, revision: 2, replicas: [] });
    expect(await write(primary, 'c', true)).not.toHaveProperty('relayFailed');
    expect(await replica.handle('doc.get', { ...WHERE, id: 'c' })).toBeNull();
  });
});
