import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shardDirectory } from './shard-paths.js';
import { ShardNode } from './shard-node.js';

let dataDir: string;
let node: ShardNode;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-node-'));
  node = new ShardNode({ name: 'n1', dataDir });
});

afterEach(async () => {
  await node.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('ShardNode', () => {
  it('answers writes and reads of a shard copy through its RPC handler', async () => {
    await node.handle('shard.open', { index: '/a/b/', shard: 2 });
    const written = await node.handle('doc.write', { index: '/a/b/', shard: 2, op: 'index', id: 'x', body: { v: 1 } }) as { version: number };
    expect(written.version).toBe(1);
    expect(await node.handle('doc.get', { index: '/a/b/', shard: 2, id: 'x' })).toMatchObject({ id: 'x', version: 1, body: { v: 1 } });
    expect(await node.handle('doc.get', { index: '/a/b/', shard: 2, id: 'y' })).toBeNull();
    expect(await node.handle('shard.stats', { index: '/a/b/', shard: 2 })).toMatchObject({ documents: 1, lastDocid: 1 });
    const info = await node.handle('node.info', {}) as { name: string; shards: unknown[] };
    expect(info).toEqual({ name: 'n1', shards: [{ index: '/a/b/', shard: 2, seq: 1, documents: 1 }] });
  });

  it('keeps nested indexes apart on disk and drops only the named one', async () => {
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 1, body: {} });
    await node.handle('doc.write', { index: '/a/b/', shard: 1, op: 'index', id: 1, body: {} });
    expect(existsSync(shardDirectory(dataDir, '/a/', 1))).toBe(true);
    await node.handle('shard.drop', { index: '/a/', shard: 1 });
    expect(existsSync(shardDirectory(dataDir, '/a/', 1))).toBe(false);
    expect(await node.handle('doc.get', { index: '/a/b/', shard: 1, id: 1 })).toMatchObject({ version: 1 });
  });

  it('refuses malformed calls', async () => {
    await expect(node.handle('doc.get', { index: 'a', shard: 1, id: 'x' })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('doc.get', { index: '/a/', shard: 0, id: 'x' })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('doc.get', { index: '/a/', shard: 1, id: {} })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('nope', {})).rejects.toMatchObject({ code: 'rpc_bad_params' });
  });

  it('refuses calls once closing', async () => {
    await node.close();
    await expect(node.handle('node.info', {})).rejects.toMatchObject({ code: 'node_closing', status: 503 });
  });
});
