/**
 * Stored content carried by replication (API.md §6, DESIGN.md "Writes,
 * versions, replication"): a replica receives a stored blob with the change
 * that links it and keeps its own copy in its own volumes; a replica that
 * missed changes gets the blobs with the primary's log entries or with the
 * documents of a full copy; unchanged entries are relinked, not re-sent.
 */
import type { RpcClient } from '@tessera/rpc';
import { InProcessCluster } from './in-process-cluster.js';

let cluster: InProcessCluster;
afterEach(async () => {
  await cluster?.stop();
});

const INDEX = '/files/';
const blob = (seed: number, size: number): Buffer => Buffer.from(Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff));

/** The blob a copy links under `type`, read and checked from that copy's own volumes. */
async function blobOn(client: RpcClient, id: string, type: string): Promise<Buffer | undefined> {
  const doc = await client.call('doc.get', { index: INDEX, shard: 1, id });
  const entry = doc?.content?.find((e) => e.type === type);
  if (entry === undefined) return undefined;
  const bytes = await client.call('doc.content', { index: INDEX, shard: 1, ...entry, from: 0, length: entry.size, verify: true });
  return Buffer.from(bytes);
}

function storeContent(id: string, type: string, bytes: Buffer | Buffer[], op: 'index' | 'update' = 'update') {
  return cluster.write(INDEX, { op, id, upsert: true, content: { type, bytes } });
}

describe('stored content replication', () => {
  it('relays a stored blob to the in-sync replica, which links its own copy; relinked entries need no bytes', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2']);
    await cluster.createIndex(INDEX);
    const png = blob(1, 70_000);
    const pdf = blob(2, 3_000);
    await storeContent('a', 'image/png', png, 'index');
    await storeContent('a', 'application/pdf', pdf);
    await cluster.write(INDEX, { op: 'update', id: 'a', body: { title: 't' } });
    for (const node of ['n1', 'n2']) {
      expect((await blobOn(cluster.direct(node), 'a', 'image/png'))?.equals(png)).toBe(true);
      expect((await blobOn(cluster.direct(node), 'a', 'application/pdf'))?.equals(pdf)).toBe(true);
      expect(await cluster.direct(node).call('doc.get', { index: INDEX, shard: 1, id: 'a' })).toMatchObject({ version: 3, body: { title: 't' } });
    }
    // An unlink travels as a change without bytes.
    await cluster.write(INDEX, { op: 'update', id: 'a', content: { type: 'image/png', bytes: Buffer.alloc(0) } });
    expect(await blobOn(cluster.direct('n2'), 'a', 'image/png')).toBeUndefined();
    expect((await blobOn(cluster.direct('n2'), 'a', 'application/pdf'))?.equals(pdf)).toBe(true);
    expect(cluster.placement(INDEX).inSync).toEqual(['n1', 'n2']);
  });

  it('a blob written as pieces (a large request body, never joined) reaches both copies whole, the same bytes and checksum', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2']);
    await cluster.createIndex(INDEX);
    const whole = blob(4, 1_500_000);
    const pieces = [whole.subarray(0, 65_536), whole.subarray(65_536, 65_600), whole.subarray(65_600)];
    await storeContent('p', 'application/octet-stream', pieces, 'index');
    const links = await Promise.all(['n1', 'n2'].map((node) => cluster.direct(node).call('doc.get', { index: INDEX, shard: 1, id: 'p' })));
    for (const node of ['n1', 'n2']) expect((await blobOn(cluster.direct(node), 'p', 'application/octet-stream'))?.equals(whole)).toBe(true);
    expect(links[1]?.content?.[0]).toMatchObject({ size: whole.length, crc: links[0]?.content?.[0]?.crc });
    expect(cluster.placement(INDEX).inSync).toEqual(['n1', 'n2']);
  });

  it('a replica that missed content writes gets the blobs from the primary’s log, then serves them after a failover', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2']);
    await cluster.createIndex(INDEX);
    await storeContent('b', 'text/plain', Buffer.from('first'), 'index');
    await cluster.kill('n2');
    await cluster.until('n2 out of sync', () => !cluster.placement(INDEX).inSync.includes('n2'));
    const later = blob(3, 200_000);
    await storeContent('b', 'application/octet-stream', later);
    await storeContent('c', 'image/png', blob(4, 1_000), 'index');
    cluster.startNode('n2');
    await cluster.until('n2 in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    expect((await blobOn(cluster.direct('n2'), 'b', 'application/octet-stream'))?.equals(later)).toBe(true);
    expect((await blobOn(cluster.direct('n2'), 'b', 'text/plain'))?.toString()).toBe('first');
    expect((await blobOn(cluster.direct('n2'), 'c', 'image/png'))?.equals(blob(4, 1_000))).toBe(true);

    await cluster.kill('n1');
    await cluster.declareLost('n1');
    await cluster.until('n2 promoted', () => cluster.placement(INDEX).primary === 'n2');
    const reply = await storeContent('b', 'text/plain', Buffer.from('after failover'));
    expect(reply.version).toBe(3);
    expect((await blobOn(cluster.direct('n2'), 'b', 'text/plain'))?.toString()).toBe('after failover');
  });

  it('a full copy (log trimmed) carries every document’s blobs', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { node: { oplogEntriesMax: 1_000, index: { writeBufferOpsMax: 50 } } });
    await cluster.createIndex(INDEX);
    await cluster.kill('n2');
    for (let i = 0; i < 20; i++) await storeContent(`f${i}`, 'application/pdf', blob(i, 5_000 + i), 'index');
    const meta = cluster.meta(INDEX);
    for (let batch = 0; batch < 3; batch++) {
      const writes = Array.from({ length: 500 }, (_, i) => ({ op: 'index' as const, id: `bulk${batch * 500 + i}`, body: { i } }));
      await cluster.replication.writeMany(meta, 1, { index: INDEX, shard: 1, schema: meta.schema, writes });
    }
    await cluster.until('the primary’s log trimmed', async () => ((await cluster.stats('n1', INDEX)).replication?.oplogFirstSeq ?? 0) > 21);
    cluster.startNode('n2');
    await cluster.until('n2 in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    expect(cluster.logs.find((l) => l.msg === 'shard copy in sync' && l.node === 'n2')).toMatchObject({ mode: 'copy' });
    for (let i = 0; i < 20; i++) expect((await blobOn(cluster.direct('n2'), `f${i}`, 'application/pdf'))?.equals(blob(i, 5_000 + i))).toBe(true);
  });
});
