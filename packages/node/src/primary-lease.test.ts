import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bodyOf, type DocumentReply } from '@tessera/rpc';
import { PrimaryLease } from './primary-lease.js';
import { ShardNode } from './shard-node.js';

/** The coordinator's heartbeat as the lease reads it, on a clock the test moves. */
function heartbeat(): { clock: { now: number }; link: { heardAt: number | undefined }; lease: PrimaryLease; log: string[] } {
  const clock = { now: 10_000 };
  const link: { heardAt: number | undefined } = { heardAt: clock.now };
  const log: string[] = [];
  const lease = new PrimaryLease({
    leaseMs: 3_000,
    lastHeardAt: () => link.heardAt,
    now: () => clock.now,
    onExpired: (silentMs) => log.push(`expired after ${silentMs}`),
    onRenewed: () => log.push('renewed'),
  });
  // Connected: the sampler has read the heartbeat once.
  expect(lease.refresh()).toBe(true);
  return { clock, link, lease, log };
}

const WHERE = { index: '/bank/', shard: 2 };

describe('PrimaryLease', () => {
  it('holds while the coordinator is heard within the lease, and keeps the last word across a disconnection', () => {
    const { clock, link, lease } = heartbeat();
    clock.now += 2_000;
    link.heardAt = clock.now;
    expect(lease.refresh()).toBe(true);
    // Disconnected: the heartbeat has no time any more; the lease counts from the last word heard.
    link.heardAt = undefined;
    clock.now += 3_000;
    expect(() => lease.check(WHERE)).not.toThrow();
    clock.now += 1;
    expect(() => lease.check(WHERE)).toThrow(expect.objectContaining({ code: 'primary_lease_expired', status: 503 }));
  });

  it('refuses with 503 primary_lease_expired past the lease, naming the shard and the silence, then holds again once the coordinator is heard', () => {
    const { clock, link, lease, log } = heartbeat();
    link.heardAt = undefined;
    clock.now += 4_500;
    let refusal: unknown;
    try {
      lease.check(WHERE);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toMatchObject({ code: 'primary_lease_expired', status: 503 });
    expect((refusal as Error).message).toMatch(/Shard 2 of \/bank\/.*4500 ms.*lease 3000 ms/);
    expect(log).toEqual(['expired after 4500']);
    // Still silent: no second report.
    clock.now += 1_000;
    expect(lease.refresh()).toBe(false);
    expect(log).toEqual(['expired after 4500']);
    link.heardAt = clock.now;
    expect(() => lease.check(WHERE)).not.toThrow();
    expect(log).toEqual(['expired after 4500', 'renewed']);
  });

  it('holds no lease before the coordinator was ever heard, without reporting an expiry', () => {
    const lease = new PrimaryLease({ leaseMs: 3_000, lastHeardAt: () => undefined, onExpired: () => { throw new Error('not an expiry'); } });
    expect(() => lease.check(WHERE)).toThrow(/not heard from the coordinator yet/);
  });
});

describe('ShardNode with a primary lease', () => {
  let dataDir: string;
  let node: ShardNode;

  afterEach(async () => {
    await node.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses writes as primary once the lease expired, and applies nothing; replicas, reads and the lease renewed go on', async () => {
    const { clock, link, lease } = heartbeat();
    dataDir = mkdtempSync(join(tmpdir(), 'tessera-lease-'));
    node = new ShardNode({ name: 'n1', dataDir, primaryWriteGate: (where) => lease.check(where) });
    const index = WHERE.index;
    await node.handle('doc.write', { index, shard: 2, op: 'index', id: 'a', body: { v: 1 }, term: 1 });

    link.heardAt = undefined;
    clock.now += 3_001;
    await expect(node.handle('doc.write', { index, shard: 2, op: 'index', id: 'b', body: {}, term: 1 }))
      .rejects.toMatchObject({ code: 'primary_lease_expired', status: 503 });
    await expect(node.handle('doc.writeMany', { index, shard: 2, term: 1, writes: [{ op: 'index', id: 'c', body: {} }] }))
      .rejects.toMatchObject({ code: 'primary_lease_expired', status: 503 });
    await expect(node.handle('doc.write', { index, shard: 2, op: 'update', id: 'a', body: { v: 2 }, term: 1 }))
      .rejects.toMatchObject({ code: 'primary_lease_expired' });
    // Nothing of the refused writes is there; reads still answer.
    expect(await node.handle('doc.get', { index, shard: 2, id: 'b' })).toBeNull();
    expect(await node.handle('doc.get', { index, shard: 2, id: 'c' })).toBeNull();
    const a = await node.handle('doc.get', { index, shard: 2, id: 'a' }) as DocumentReply;
    expect(a.version).toBe(1);
    expect(bodyOf(a)).toEqual({ v: 1 });
    expect(await node.handle('shard.stats', { index, shard: 2 })).toMatchObject({ documents: 1, seq: 1 });

    // The coordinator is back: writes are taken again.
    link.heardAt = clock.now;
    expect(await node.handle('doc.write', { index, shard: 2, op: 'index', id: 'b', body: {}, term: 1 })).toMatchObject({ version: 1, seq: 2 });
  });

  it('lets a replica apply relayed changes whatever its lease says (the primary decided them)', async () => {
    const { clock, link, lease } = heartbeat();
    dataDir = mkdtempSync(join(tmpdir(), 'tessera-lease-'));
    node = new ShardNode({ name: 'n2', dataDir, primaryWriteGate: (where) => lease.check(where) });
    link.heardAt = undefined;
    clock.now += 10_000;
    await node.handle('doc.replicate', {
      index: WHERE.index, shard: 2, term: 1, changes: [{ seq: 1, id: 'r', version: 1, deleted: false, body: { from: 'primary' }, originTerm: 1, originSeq: 1 }],
    });
    const r = await node.handle('doc.get', { index: WHERE.index, shard: 2, id: 'r' }) as DocumentReply;
    expect(r.version).toBe(1);
    expect(bodyOf(r)).toEqual({ from: 'primary' });
  });
});
