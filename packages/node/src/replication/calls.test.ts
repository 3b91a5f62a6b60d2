import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bodyOf, type ChangesReply, type DocumentReply, type ReplicateReply, type ReplicationPositionReply, type ScanReply, type ShardStatsReply } from '@tessera/rpc';
import { ShardNode } from '../shard-node.js';

let dataDir: string;
const nodes: ShardNode[] = [];

function startNode(name: string, options: { oplogEntriesMax?: number; writeBufferOpsMax?: number } = {}): ShardNode {
  const node = new ShardNode({
    name, dataDir: join(dataDir, name), oplogEntriesMax: options.oplogEntriesMax,
    index: options.writeBufferOpsMax === undefined ? undefined : { writeBufferOpsMax: options.writeBufferOpsMax },
  });
  nodes.push(node);
  return node;
}

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-node-replication-'));
});

afterEach(async () => {
  for (const node of nodes.splice(0)) await node.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ref = { index: '/r/', shard: 1 };

describe('replication calls of a shard node', () => {
  it('copies a primary to a replica: shard.changes → doc.replicate, with positions in shard.stats', async () => {
    const primary = startNode('p');
    const replica = startNode('r');
    await primary.handle('doc.write', { ...ref, op: 'index', id: 'a', body: { v: 1 }, term: 1 });
    await primary.handle('doc.write', { ...ref, op: 'index', id: 'b', body: { v: 1 }, term: 1 });
    await primary.handle('doc.write', { ...ref, op: 'delete', id: 'a', term: 1 });
    const page = await primary.handle('shard.changes', { ...ref, afterSeq: 0, limit: 10 }) as ChangesReply;
    expect(page.seq).toBe(3);
    expect(page.changes).toEqual([
      { seq: 1, id: 'a', version: 1, deleted: false, body: { v: 1 }, originTerm: 1, originSeq: 1 },
      { seq: 2, id: 'b', version: 1, deleted: false, body: { v: 1 }, originTerm: 1, originSeq: 2 },
      { seq: 3, id: 'a', version: 2, deleted: true, originTerm: 1, originSeq: 3 },
    ]);
    const reply = await replica.handle('doc.replicate', { ...ref, term: 1, changes: page.changes }) as ReplicateReply;
    expect(reply).toEqual({ applied: 3, discarded: 0, position: { term: 1, checkpointTerm: 1, checkpoint: 3, seq: 3, oplogFirstSeq: 1 } });
    const again = await replica.handle('doc.replicate', { ...ref, term: 1, changes: page.changes }) as ReplicateReply;
    expect(again).toMatchObject({ applied: 0, discarded: 3 });
    const stats = await replica.handle('shard.stats', ref) as ShardStatsReply;
    expect(stats).toMatchObject({ documents: 1, replication: { checkpoint: 3 } });
    const got = await replica.handle('doc.get', { ...ref, id: 'b' }) as DocumentReply;
    expect(got.version).toBe(1);
    expect(bodyOf(got)).toEqual({ v: 1 });
  });

  it('gives each document’s origin in a scan when asked (a full copy), and not otherwise', async () => {
    const node = startNode('p');
    await node.handle('doc.write', { ...ref, op: 'index', id: 'x', body: {}, term: 3 });
    const plain = await node.handle('shard.scan', { ...ref, limit: 10 }) as ScanReply;
    expect(plain.documents).toEqual([{ id: 'x', version: 1, body: {} }]);
    const withOrigins = await node.handle('shard.scan', { ...ref, limit: 10, origins: true }) as ScanReply;
    expect(withOrigins.documents).toEqual([{ id: 'x', version: 1, body: {}, originTerm: 3, originSeq: 1 }]);
  });

  it('answers 410 oplog_trimmed once the log no longer reaches back, and refuses a bad page size', async () => {
    const node = startNode('p', { oplogEntriesMax: 1_000, writeBufferOpsMax: 50 });
    const writes = Array.from({ length: 1_200 }, (_, i) => ({ op: 'index', id: i, body: {} }));
    await node.handle('doc.writeMany', { ...ref, writes });
    await node.handle('doc.writeMany', { ...ref, writes });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const position = (await node.handle('shard.stats', ref) as ShardStatsReply).replication as ReplicationPositionReply;
      if (position.oplogFirstSeq > 1) break;
      if (Date.now() > deadline) throw new Error('the log was never trimmed');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await expect(node.handle('shard.changes', { ...ref, afterSeq: 0, limit: 10 })).rejects.toMatchObject({ code: 'oplog_trimmed', status: 410 });
    await expect(node.handle('shard.changes', { ...ref, afterSeq: 0, limit: 0 })).rejects.toMatchObject({ code: 'rpc_bad_params' });
  });

  it('shard.follow sets the checkpoint in a new term, and the term then refuses older calls', async () => {
    const node = startNode('r');
    const position = await node.handle('shard.follow', { ...ref, term: 2, checkpoint: 40 }) as ReplicationPositionReply;
    expect(position).toMatchObject({ term: 2, checkpointTerm: 2, checkpoint: 40 });
    await expect(node.handle('doc.replicate', { ...ref, term: 1, changes: [] })).rejects.toMatchObject({ code: 'stale_primary_term', status: 503 });
    await expect(node.handle('doc.writeMany', { ...ref, term: 1, writes: [{ op: 'index', id: 'a', body: {} }] }))
      .resolves.toEqual([{ error: expect.objectContaining({ code: 'stale_primary_term' }) }]);
    await expect(node.handle('doc.replicate', { ...ref, term: 2, changes: [{ id: 'a' }] })).rejects.toMatchObject({ code: 'invalid_write', status: 400 });
  });

  it('a copy dropped while calls arrive is re-created empty after the drop, never mixed with the old one', async () => {
    const node = startNode('r');
    for (let i = 0; i < 20; i++) await node.handle('doc.write', { ...ref, op: 'index', id: i, body: {} });
    const dropping = node.handle('shard.drop', ref);
    const arriving = node.handle('doc.replicate', { ...ref, term: 1, changes: [{ seq: 1, id: 'new', version: 1, deleted: false, body: {}, originTerm: 1, originSeq: 1 }] });
    await Promise.all([dropping, arriving]);
    const stats = await node.handle('shard.stats', ref) as ShardStatsReply;
    expect(stats.documents).toBe(1);
    expect(await node.handle('doc.get', { ...ref, id: 'new' })).toMatchObject({ version: 1 });
  });
});
