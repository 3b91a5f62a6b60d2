import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeStatsReply } from '@tessera/rpc';
import { directoryBytes, DirectorySizes } from './directory-bytes.js';
import { ShardNode } from './shard-node.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-dir-bytes-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('sums the files under a directory, nested ones too; a missing directory is 0', async () => {
  await writeFile(join(dir, 'a'), Buffer.alloc(100));
  await mkdir(join(dir, 'sub', 'deeper'), { recursive: true });
  await writeFile(join(dir, 'sub', 'b'), Buffer.alloc(20));
  await writeFile(join(dir, 'sub', 'deeper', 'c'), Buffer.alloc(3));
  expect(await directoryBytes(dir)).toBe(123);
  expect(await directoryBytes(join(dir, 'nope'))).toBe(0);
});

it('remembers a size for the TTL, then measures again; forget() drops it', async () => {
  const sizes = new DirectorySizes(60_000);
  await writeFile(join(dir, 'a'), Buffer.alloc(10));
  expect(await sizes.bytes(dir)).toBe(10);
  await writeFile(join(dir, 'b'), Buffer.alloc(5));
  expect(await sizes.bytes(dir)).toBe(10);
  sizes.forget(dir);
  expect(await sizes.bytes(dir)).toBe(15);
  const fresh = new DirectorySizes(0);
  expect(await fresh.bytes(dir)).toBe(15);
  await writeFile(join(dir, 'c'), Buffer.alloc(1));
  expect(await fresh.bytes(dir)).toBe(16);
});

it('node.stats reports each open shard copy: documents, bytes on disk, commit timings', async () => {
  const node = new ShardNode({ name: 'n1', dataDir: join(dir, 'node') });
  try {
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: { v: 1 } });
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'y', body: { v: 2 }, commit: true });
    await node.handle('shard.open', { index: '/b/', shard: 2 });
    const stats = await node.handle('node.stats', {}) as NodeStatsReply;
    expect(stats.name).toBe('n1');
    const byCopy = new Map(stats.shards.map((s) => [`${s.shard}${s.index}`, s]));
    expect([...byCopy.keys()].sort()).toEqual(['1/a/', '2/b/']);
    const a = byCopy.get('1/a/')!;
    expect(a.documents).toBe(2);
    expect(a.seq).toBe(2);
    expect(a.bytes).toBeGreaterThan(0);
    expect(a.commitSeconds.buffered.count + a.commitSeconds.synced.count).toBeGreaterThanOrEqual(2);
    expect(a.commitSeconds.synced.count).toBeGreaterThanOrEqual(1);
    expect(byCopy.get('2/b/')!.documents).toBe(0);
  } finally {
    await node.close();
  }
});
