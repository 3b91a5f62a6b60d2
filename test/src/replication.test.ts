/**
 * Replication, catch-up and failover with several shard nodes in one
 * process (in-process-cluster.ts): the write path, a replica leaving and
 * rejoining (catch-up from the operation log or by a full copy), and a lost
 * or paused primary replaced under a new term.
 */
import { bodyOf, type WriteReply } from '@tessera/rpc';
import { InProcessCluster } from './in-process-cluster.js';

let cluster: InProcessCluster;

afterEach(async () => {
  await cluster?.stop();
});

const INDEX = '/replicated/';

async function writeMany(count: number, from = 0, prefix = 'd'): Promise<WriteReply[]> {
  const out: WriteReply[] = [];
  for (let i = from; i < from + count; i++) out.push(await cluster.write(INDEX, { op: 'index', id: `${prefix}${i}`, body: { n: i } }));
  return out;
}

function expectError(promise: Promise<unknown>, code: string): Promise<void> {
  return expect(promise).rejects.toMatchObject({ code });
}

describe('replicated writes', () => {
  it('acknowledges a write once every in-sync replica applied it, with the same version', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3']);
    await cluster.createIndex(INDEX, { number_of_replicas: 2 });
    const placement = cluster.placement(INDEX);
    expect(placement).toMatchObject({ term: 1, copies: ['n1', 'n2', 'n3'], inSync: ['n1', 'n2', 'n3'] });
    const first = await cluster.write(INDEX, { op: 'index', id: 'a', body: { v: 1 } });
    const second = await cluster.write(INDEX, { op: 'update', id: 'a', body: { w: 2 } });
    expect([first.version, second.version]).toEqual([1, 2]);
    // Read straight after the acknowledgement, from each replica: the write is there.
    for (const node of ['n2', 'n3']) {
      expect(await cluster.direct(node).call('doc.get', { index: INDEX, shard: 1, id: 'a' })).toMatchObject({ version: 2, body: { v: 1, w: 2 } });
    }
    await cluster.write(INDEX, { op: 'delete', id: 'a' });
    for (const node of ['n1', 'n2', 'n3']) expect(await cluster.versions(node, INDEX)).toEqual([]);
    // The replicas' checkpoints follow the primary's seq.
    for (const node of ['n2', 'n3']) expect((await cluster.stats(node, INDEX)).replication).toMatchObject({ term: 1, checkpointTerm: 1, checkpoint: 3 });
  });

  it('waits for a paused in-sync replica; when the relay times out, the replica leaves the in-sync set before the write is answered', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { replication: { relayTimeoutMs: 300 } });
    await cluster.createIndex(INDEX);
    await writeMany(3);
    cluster.pause('n2');
    let answered = false;
    const pending = cluster.write(INDEX, { op: 'index', id: 'slow', body: {} }).then((reply) => {
      answered = true;
      return reply;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(answered).toBe(false);
    await pending;
    expect(cluster.placement(INDEX).inSync).toEqual(['n1']);
    // Writes go on without it.
    await writeMany(5, 10);
    cluster.resume('n2');
    // Back, it recovers and rejoins the in-sync set with every document.
    await cluster.until('n2 back in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    expect(await cluster.versions('n2', INDEX)).toEqual(await cluster.versions('n1', INDEX));
  });

  it('refuses a write or a relay under an older term on every copy', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2']);
    await cluster.createIndex(INDEX);
    await cluster.write(INDEX, { op: 'index', id: 'a', body: {} });
    await cluster.direct('n2').call('shard.follow', { index: INDEX, shard: 1, term: 5, checkpoint: 0 });
    await expectError(cluster.direct('n2').call('doc.replicate', {
      index: INDEX, shard: 1, term: 4, changes: [{ seq: 9, id: 'x', version: 1, deleted: false, body: {}, originTerm: 4, originSeq: 9 }],
    }), 'stale_primary_term');
    await cluster.direct('n1').call('doc.write', { index: INDEX, shard: 1, op: 'index', id: 'b', body: {}, term: 7 });
    await expectError(cluster.direct('n1').call('doc.write', { index: INDEX, shard: 1, op: 'index', id: 'c', body: {}, term: 6 }), 'stale_primary_term');
  });
});

describe('catch-up', () => {
  it('a killed replica leaves the in-sync set, writes go on, and on restart it replays the primary’s log and is in sync', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2']);
    await cluster.createIndex(INDEX);
    await writeMany(20);
    await cluster.kill('n2');
    await cluster.until('n2 out of sync', () => !cluster.placement(INDEX).inSync.includes('n2'));
    await writeMany(30, 20);
    await cluster.write(INDEX, { op: 'delete', id: 'd3' });
    await cluster.write(INDEX, { op: 'update', id: 'd4', body: { again: true } });
    cluster.startNode('n2');
    await cluster.until('n2 in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    const line = cluster.logs.find((l) => l.msg === 'shard copy in sync' && l.node === 'n2');
    expect(line).toMatchObject({ mode: 'log', term: 1 });
    expect(await cluster.versions('n2', INDEX)).toEqual(await cluster.versions('n1', INDEX));
    expect((await cluster.versions('n1', INDEX)).length).toBe(49);
    // In sync again: it gets every write before the write is answered.
    await cluster.write(INDEX, { op: 'index', id: 'after', body: {} });
    expect(await cluster.direct('n2').call('doc.get', { index: INDEX, shard: 1, id: 'after' })).toMatchObject({ version: 1 });
  });

  it('recovers by a full copy when the log was trimmed past the replica’s checkpoint, deletions included', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { node: { oplogEntriesMax: 1_000, index: { writeBufferOpsMax: 50 } } });
    await cluster.createIndex(INDEX);
    await writeMany(10, 0, 'old');
    await cluster.kill('n2');
    await cluster.write(INDEX, { op: 'delete', id: 'old1' });
    const meta = cluster.meta(INDEX);
    for (let batch = 0; batch < 3; batch++) {
      const writes = Array.from({ length: 500 }, (_, i) => ({ op: 'index' as const, id: `bulk${batch * 500 + i}`, body: { i } }));
      await cluster.replication.writeMany(meta, 1, { index: INDEX, shard: 1, schema: meta.schema, writes });
    }
    await cluster.until('the primary’s log trimmed', async () => ((await cluster.stats('n1', INDEX)).replication?.oplogFirstSeq ?? 0) > 12);
    cluster.startNode('n2');
    await cluster.until('n2 in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    expect(cluster.logs.find((l) => l.msg === 'shard copy in sync' && l.node === 'n2')).toMatchObject({ mode: 'copy' });
    const primary = await cluster.versions('n1', INDEX);
    expect(primary.length).toBe(1509);
    expect(await cluster.versions('n2', INDEX)).toEqual(primary);
    expect((await cluster.stats('n2', INDEX)).replication).toMatchObject({ checkpointTerm: 1 });
  });

  it('catches up while writes keep coming, and ends with identical copies', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { replication: { catchUpPageChanges: 7 } });
    await cluster.createIndex(INDEX);
    await writeMany(50);
    await cluster.kill('n2');
    await writeMany(200, 50);
    let writing = true;
    const load = (async () => {
      for (let i = 0; writing; i++) {
        await cluster.write(INDEX, { op: 'update', id: `d${i % 250}`, body: { round: i }, upsert: true });
        if (i % 5 === 0) await cluster.write(INDEX, { op: 'delete', id: `d${(i * 7) % 250}` }).catch(() => undefined);
      }
    })();
    cluster.startNode('n2');
    await cluster.until('n2 in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    await writeMany(10, 1000);
    writing = false;
    await load;
    expect(await cluster.versions('n2', INDEX)).toEqual(await cluster.versions('n1', INDEX));
    // No gap left behind: the replica's checkpoint is the primary's seq.
    expect((await cluster.stats('n2', INDEX)).replication?.checkpoint).toBe((await cluster.stats('n1', INDEX)).seq);
  });
});

describe('failover', () => {
  it('promotes the in-sync replica when the primary is lost, bumps the term, loses no acknowledged write, and refuses the old term', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3']);
    await cluster.createIndex(INDEX, { number_of_replicas: 2 });
    const acknowledged = new Map<string, number>();
    for (const reply of await writeMany(40)) acknowledged.set(String(reply.id), reply.version);
    await cluster.kill('n1');
    await cluster.until('a new primary', () => cluster.placement(INDEX).term === 2);
    const placement = cluster.placement(INDEX);
    expect(placement.primary).not.toBe('n1');
    expect(placement.inSync.sort()).toEqual(['n2', 'n3']);
    // Logged once the copies were told the new term, which comes after the placement is persisted.
    await cluster.until('the promotion logged', () => cluster.logs.some((l) => l.msg === 'shard primary promoted'));
    expect(cluster.logs.find((l) => l.msg === 'shard primary promoted')).toMatchObject({ lost: 'n1', term: 2 });
    for (const reply of await writeMany(10, 40)) acknowledged.set(String(reply.id), reply.version);
    // The follower, checked by this coordinator before the loss, stays in sync: no resync takes it out.
    expect(cluster.placement(INDEX).inSync.sort()).toEqual(['n2', 'n3']);
    expect(cluster.logs.filter((l) => l.msg.startsWith('in-sync replicas not at their primary'))).toEqual([]);
    const newPrimary = placement.primary as string;
    const held = new Map((await cluster.versions(newPrimary, INDEX)).map(([id, v]) => [String(id), v]));
    for (const [id, version] of acknowledged) expect(held.get(id)).toBe(version);
    // A call from the old term is refused by the copies of the new one.
    await expectError(cluster.direct(newPrimary).call('doc.write', { index: INDEX, shard: 1, op: 'index', id: 'x', body: {}, term: 1 }), 'stale_primary_term');
    // The old primary comes back as a replica: a full copy under the new term, then in sync.
    cluster.startNode('n1');
    await cluster.until('n1 in sync', () => cluster.placement(INDEX).inSync.includes('n1'));
    expect(cluster.logs.find((l) => l.msg === 'shard copy in sync' && l.node === 'n1')).toMatchObject({ mode: 'copy', term: 2 });
    for (const node of ['n1', 'n2', 'n3']) expect(await cluster.versions(node, INDEX)).toEqual(await cluster.versions(newPrimary, INDEX));
    await expectError(cluster.direct('n1').call('doc.write', { index: INDEX, shard: 1, op: 'index', id: 'x', body: {}, term: 1 }), 'stale_primary_term');
  });

  it('a paused primary is replaced; what it does when it wakes is never acknowledged, and its copy converges', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { replication: { failoverWaitMs: 5_000 } });
    await cluster.createIndex(INDEX);
    await writeMany(10);
    cluster.pause('n1');
    // A write reaches the paused primary and waits there.
    const stuck = cluster.write(INDEX, { op: 'index', id: 'during', body: { from: 'stuck' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await cluster.declareLost('n1');
    await cluster.until('n2 promoted', () => cluster.placement(INDEX).primary === 'n2');
    // SIGCONT: the old primary runs the write it held, under term 1, after the promotion.
    cluster.resume('n1');
    const reply = await stuck;
    expect(reply.version).toBe(1);
    expect(await cluster.direct('n2').call('doc.get', { index: INDEX, shard: 1, id: 'during' })).toMatchObject({ version: 1, body: { from: 'stuck' } });
    // The old primary's own copy of it is from term 1; it rejoins and is overwritten by the new primary's history.
    await cluster.direct('n1').call('doc.write', { index: INDEX, shard: 1, op: 'index', id: 'divergent', body: {}, term: 1 });
    await cluster.kill('n1');
    cluster.startNode('n1');
    await cluster.until('n1 in sync', () => cluster.placement(INDEX).inSync.includes('n1'));
    const versions = await cluster.versions('n2', INDEX);
    expect(versions.map(([id]) => id)).not.toContain('divergent');
    expect(await cluster.versions('n1', INDEX)).toEqual(versions);
  });

  it('answers 503 node_unavailable at once when the primary is lost with no copy in sync to take over; once it returns, writes go on', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2'], { replication: { failoverWaitMs: 300 } });
    await cluster.createIndex(INDEX);
    await writeMany(3);
    await cluster.kill('n2');
    await cluster.until('n2 out of sync', () => cluster.placement(INDEX).inSync.length === 1);
    await cluster.kill('n1');
    await expectError(cluster.write(INDEX, { op: 'index', id: 'x', body: {} }), 'node_unavailable');
    await cluster.until('the failover given up', () => cluster.logs.some((l) => l.msg.startsWith('shard primary lost with no copy in sync')));
    expect(cluster.placement(INDEX)).toMatchObject({ primary: 'n1', term: 1 });
    // The primary returns: writes go on, and the replica recovers from it.
    cluster.startNode('n1');
    cluster.startNode('n2');
    await cluster.write(INDEX, { op: 'index', id: 'x', body: {} });
    await cluster.until('n2 in sync', () => cluster.placement(INDEX).inSync.includes('n2'));
    expect(await cluster.versions('n2', INDEX)).toEqual(await cluster.versions('n1', INDEX));
  });

  it('read-modify-write with _version from 8 clients on 10 keys through a failover: no lost update, losers get 409, never a 5xx', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3']);
    await cluster.createIndex(INDEX, { number_of_replicas: 2 });
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    for (const id of keys) await cluster.write(INDEX, { op: 'index', id, body: { count: 0 } });
    const wins = new Map(keys.map((k) => [k, 0]));
    const failures: unknown[] = [];
    let conflicts = 0;
    let running = true;
    const client = async (c: number) => {
      for (let i = 0; running; i++) {
        // A conflict is decided from cached documents without I/O: let timers run between rounds.
        await new Promise((resolve) => setImmediate(resolve));
        const id = keys[(c * 3 + i) % keys.length] as string;
        const primary = cluster.placement(INDEX).primary as string;
        const doc = await cluster.direct(primary).call('doc.get', { index: INDEX, shard: 1, id })
          .catch(() => null);
        if (doc === null) continue;
        try {
          await cluster.write(INDEX, { op: 'index', id, body: { count: (bodyOf(doc).count as number) + 1 }, expectedVersions: [doc.version] });
          wins.set(id, (wins.get(id) ?? 0) + 1);
        } catch (err) {
          if ((err as { status?: number }).status === 409) conflicts++;
          else failures.push(err);
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, c) => client(c));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cluster.kill(cluster.placement(INDEX).primary as string);
    await cluster.until('a new primary', () => cluster.placement(INDEX).term === 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    running = false;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(conflicts).toBeGreaterThan(0);
    const primary = cluster.placement(INDEX).primary as string;
    for (const id of keys) {
      const doc = await cluster.direct(primary).call('doc.get', { index: INDEX, shard: 1, id });
      expect(bodyOf(doc!).count).toBe(wins.get(id));
    }
  });
});

describe('a coordinator taking over a shard (resync)', () => {
  // What the coordinator before this one left undone: the primary ran a write, which was never relayed nor acknowledged.
  async function writeOnlyOnPrimary(id: string): Promise<string> {
    const { primary, term } = cluster.placement(INDEX);
    await cluster.direct(primary as string).call('doc.write', { index: INDEX, shard: 1, op: 'index', id, body: { unrelayed: true }, term });
    return primary as string;
  }

  /** Every replica in the in-sync set holds what the primary holds. */
  async function inSyncCopiesMatch(primary: string): Promise<boolean> {
    const held = await cluster.versions(primary, INDEX);
    for (const node of cluster.placement(INDEX).inSync) {
      if (JSON.stringify(await cluster.versions(node, INDEX)) !== JSON.stringify(held)) return false;
    }
    return true;
  }

  async function expectResynced(primary: string): Promise<void> {
    // The first write after the takeover waits for the check: no in-sync copy lacks the unrelayed write when it is answered.
    await cluster.write(INDEX, { op: 'index', id: 'after', body: {} });
    expect(await inSyncCopiesMatch(primary)).toBe(true);
    expect(cluster.logs.find((l) => l.msg.startsWith('in-sync replicas not at their primary'))).toMatchObject({ nodes: expect.arrayContaining(['n2', 'n3']) });
    // Taken out, they recover from the primary's log and are in sync again, with identical copies.
    await cluster.until('the replicas in sync again', () => cluster.placement(INDEX).inSync.length === 3);
    expect(await inSyncCopiesMatch(primary)).toBe(true);
    expect((await cluster.versions('n2', INDEX)).map(([id]) => id)).toContain('unrelayed');
  }

  it('a restarted coordinator takes in-sync replicas behind their primary out of the in-sync set before its first write', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3']);
    await cluster.createIndex(INDEX, { number_of_replicas: 2 });
    await writeMany(10);
    const primary = await writeOnlyOnPrimary('unrelayed');
    expect(primary).toBe('n1');
    await cluster.restartCoordinator();
    await expectResynced(primary);
  });

  it('a primary lost before the check is replaced, and a replica not checked does not follow the promoted one: relays left half done differ', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3']);
    await cluster.createIndex(INDEX, { number_of_replicas: 2 });
    await writeMany(10);
    const { term } = cluster.placement(INDEX);
    // The coordinator before ran three writes on the primary and died with none relayed of the first, the second relayed to one
    // replica, the third to the other: both replicas' checkpoints stay below the first, with different changes applied above it.
    const relayed = async (id: string, to: string[]) => {
      const reply = await cluster.direct('n1').call('doc.write', { index: INDEX, shard: 1, op: 'index', id, body: { id }, term });
      for (const node of to) {
        await cluster.direct(node).call('doc.replicate', { index: INDEX, shard: 1, term, changes: [
          { seq: reply.seq, id: reply.id, version: reply.version, deleted: false, body: reply.body, originTerm: term, originSeq: reply.seq }] });
      }
    };
    await relayed('to-none', []);
    await relayed('to-n2', ['n2']);
    await relayed('to-n3', ['n3']);
    expect((await cluster.stats('n2', INDEX)).replication?.checkpoint).toBe((await cluster.stats('n3', INDEX)).replication?.checkpoint);
    await cluster.restartCoordinator({ absent: ['n1'], replication: { nodeLeftDelayMs: 600_000, rejoinTimeoutMs: 100 } });
    await cluster.until('a new primary', () => cluster.placement(INDEX).term === term + 1);
    const primary = cluster.placement(INDEX).primary as string;
    expect(await inSyncCopiesMatch(primary)).toBe(true);
    // The other replica recovers from the new primary and is in sync again, with its copy.
    await cluster.until('both replicas in sync', () => cluster.placement(INDEX).inSync.length === 2);
    expect(await inSyncCopiesMatch(primary)).toBe(true);
  });

  it('so does a coordinator elected to decide (takeOver), whose replicator had checked the replicas before', async () => {
    cluster = await InProcessCluster.start(['n1', 'n2', 'n3']);
    await cluster.createIndex(INDEX, { number_of_replicas: 2 });
    await writeMany(10);
    const primary = await writeOnlyOnPrimary('unrelayed');
    cluster.replication.takeOver();
    await expectResynced(primary);
  });
});
