import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TesseraError } from '@tessera/errors';
import { parseQuery } from '@tessera/search-model';
import { Shard } from './shard.js';
import type { ReplicatedChange } from './replication/index.js';
import { ReplicaPosition } from './replication/position.js';
import { Tombstones } from './replication/tombstones.js';

let dir: string;
const open: Shard[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-replica-'));
});

afterEach(async () => {
  for (const shard of open.splice(0)) await shard.close();
  await rm(dir, { recursive: true, force: true });
});

async function openShard(name: string): Promise<Shard> {
  const shard = await Shard.open({ path: join(dir, name) });
  open.push(shard);
  return shard;
}

async function reopen(shard: Shard, name: string): Promise<Shard> {
  await shard.close();
  open.splice(open.indexOf(shard), 1);
  return openShard(name);
}

function put(id: string | number, version: number, originSeq: number, body: Record<string, unknown>, originTerm = 1): ReplicatedChange {
  return { seq: originSeq, id, version, deleted: false, body, originTerm, originSeq };
}

function del(id: string | number, version: number, originSeq: number, originTerm = 1): ReplicatedChange {
  return { seq: originSeq, id, version, deleted: true, originTerm, originSeq };
}

async function contents(shard: Shard): Promise<Array<[string | number, number, unknown]>> {
  const out: Array<[string | number, number, unknown]> = [];
  for await (const doc of shard.documents()) out.push([doc.id, doc.version, doc.body]);
  return out;
}

async function expectError(promise: Promise<unknown>, code: string, status: number): Promise<void> {
  await expect(promise).rejects.toBeInstanceOf(TesseraError);
  await expect(promise).rejects.toMatchObject({ code, status });
}

describe('Shard.applyReplicated', () => {
  it('mirrors a primary: the same documents and versions, searchable, with the primary’s origins kept', async () => {
    const primary = await openShard('primary');
    const replica = await openShard('replica');
    const results = [
      await primary.write({ op: 'index', id: 'a', body: { n: 1, t: 'red fox' } }),
      await primary.write({ op: 'index', id: 'b', body: { n: 2 } }),
      await primary.write({ op: 'update', id: 'a', body: { m: 3 } }),
      await primary.write({ op: 'delete', id: 'b' }),
    ];
    const changes: ReplicatedChange[] = results.map((r) => ({
      seq: r.seq, id: r.id, version: r.version, deleted: r.deleted, ...(r.body === undefined ? {} : { body: r.body }), originTerm: 1, originSeq: r.seq,
    }));
    const schema = { n: { _type: 'integer' } };
    expect(await replica.applyReplicated(1, changes, { schema })).toEqual({ applied: 4, discarded: 0 });
    expect(await contents(replica)).toEqual(await contents(primary));
    const a = await replica.get('a');
    expect(a).toMatchObject({ version: 2, body: { n: 1, t: 'red fox', m: 3 } });
    expect(a?.originSeq ?? a?.seq).toBe(3);
    expect(replica.replicationState()).toMatchObject({ term: 1, checkpointTerm: 1, checkpoint: 4 });
    const found = await replica.search({ query: parseQuery({ n: { _in: { _range: { _from: 0, _to: 5 } } } }), k: 10, schema });
    expect(found.hits.map((h) => h.id)).toEqual(['a']);
  });

  it('discards a change older than the version held, and re-applying a change changes nothing', async () => {
    const replica = await openShard('replica');
    await replica.applyReplicated(1, [put('x', 2, 5, { v: 'new' })]);
    const before = replica.stats();
    expect(await replica.applyReplicated(1, [put('x', 1, 3, { v: 'old' })])).toEqual({ applied: 0, discarded: 1 });
    expect(await replica.applyReplicated(1, [put('x', 2, 5, { v: 'new' })])).toEqual({ applied: 0, discarded: 1 });
    expect(replica.stats()).toEqual(before);
    expect(await replica.get('x')).toMatchObject({ version: 2, body: { v: 'new' } });
  });

  it('orders by origin, not by _version: a document re-created after its deletion (version 1 again) replaces the deletion', async () => {
    const replica = await openShard('replica');
    await replica.applyReplicated(1, [put('x', 1, 1, { gen: 1 }), put('x', 2, 2, { gen: 1 }), del('x', 3, 3)]);
    expect(await replica.get('x')).toBeUndefined();
    expect(await replica.applyReplicated(1, [put('x', 1, 4, { gen: 2 })])).toEqual({ applied: 1, discarded: 0 });
    expect(await replica.get('x')).toMatchObject({ version: 1, body: { gen: 2 } });
    // A newer term wins over any seq of an older one.
    await replica.applyReplicated(2, [put('x', 2, 1, { gen: 3 }, 2)]);
    expect(await replica.applyReplicated(2, [put('x', 9, 99, { gen: 'stale' }, 1)])).toEqual({ applied: 0, discarded: 1 });
    expect(await replica.get('x')).toMatchObject({ version: 2, body: { gen: 3 }, term: 2 });
  });

  it('keeps a tombstone: a put older than a deletion that arrives after it does not bring the document back', async () => {
    const replica = await openShard('replica');
    await replica.applyReplicated(1, [put('x', 1, 1, { v: 1 }), del('x', 3, 7)]);
    expect(await replica.applyReplicated(1, [put('x', 2, 6, { v: 2 })])).toEqual({ applied: 0, discarded: 1 });
    expect(await replica.get('x')).toBeUndefined();
    // A deletion of a document the copy never had is remembered too.
    expect(await replica.applyReplicated(1, [del('y', 4, 9)])).toEqual({ applied: 1, discarded: 0 });
    expect(await replica.applyReplicated(1, [put('y', 3, 8, { late: true })])).toEqual({ applied: 0, discarded: 1 });
    expect(await replica.get('y')).toBeUndefined();
    expect(replica.stats().documents).toBe(0);
  });

  it('applies the changes of one document in the order given within a call', async () => {
    const replica = await openShard('replica');
    await replica.applyReplicated(1, [put('x', 1, 1, { v: 1 }), put('x', 2, 2, { v: 2 }), del('x', 3, 3), put('x', 1, 4, { v: 4 })]);
    expect(await replica.get('x')).toMatchObject({ version: 1, body: { v: 4 } });
    expect(replica.replicationState().checkpoint).toBe(4);
  });

  it('moves the checkpoint only over contiguous seqs, and keeps it across a reopen', async () => {
    let replica = await openShard('replica');
    await replica.applyReplicated(1, [put('a', 1, 1, {}), put('c', 1, 3, {}), put('d', 1, 4, {})]);
    expect(replica.replicationState()).toMatchObject({ checkpointTerm: 1, checkpoint: 1 });
    await replica.applyReplicated(1, [put('b', 1, 2, {})]);
    expect(replica.replicationState()).toMatchObject({ checkpoint: 4 });
    // A change older than what is held still counts: the copy holds something newer.
    await replica.applyReplicated(1, [put('e', 2, 6, {}), put('e', 1, 5, {})]);
    expect(replica.replicationState()).toMatchObject({ checkpoint: 6 });
    replica = await reopen(replica, 'replica');
    expect(replica.replicationState()).toMatchObject({ term: 1, checkpointTerm: 1, checkpoint: 6 });
  });

  it('refuses a write or a replicated change under an older term, and remembers the newest term across a reopen', async () => {
    let shard = await openShard('copy');
    await shard.write({ op: 'index', id: 'a', body: {}, term: 3 });
    await expectError(shard.write({ op: 'index', id: 'a', body: { old: true }, term: 2 }), 'stale_primary_term', 503);
    await expectError(shard.applyReplicated(2, [put('b', 1, 1, {}, 2)]), 'stale_primary_term', 503);
    await expectError(shard.follow(2, 10), 'stale_primary_term', 503);
    shard = await reopen(shard, 'copy');
    await expectError(shard.write({ op: 'index', id: 'a', body: { old: true }, term: 2 }), 'stale_primary_term', 503);
    expect(await shard.get('a')).toMatchObject({ version: 1, body: {}, term: 3 });
    expect(await shard.get('b')).toBeUndefined();
    const written = await shard.write({ op: 'index', id: 'a', body: { v: 2 }, term: 4 });
    expect(written.version).toBe(2);
    expect(shard.replicationState().term).toBe(4);
  });

  it('records the term of a primary’s own writes in its documents and operation log', async () => {
    const shard = await openShard('primary');
    await shard.write({ op: 'index', id: 'a', body: {} });
    await shard.write({ op: 'index', id: 'b', body: {}, term: 2 });
    const page = await shard.scan(undefined, 10);
    expect(page.documents.map((d) => [d.id, d.term, d.originSeq])).toEqual([['a', undefined, undefined], ['b', 2, undefined]]);
    const log = await shard.readOplog(0, 10);
    expect(log.map((e) => [e.seq, e.term])).toEqual([[1, undefined], [2, 2]]);
  });

  it('follow: a new term starts a new numbering from the checkpoint the coordinator gives', async () => {
    const replica = await openShard('replica');
    await replica.applyReplicated(1, [put('a', 1, 1, {}), put('c', 1, 3, {})]);
    expect(replica.replicationState()).toMatchObject({ checkpoint: 1 });
    // A change of term 2 before the copy is told where it stands: the old position no longer holds.
    await replica.applyReplicated(2, [put('d', 1, 12, {}, 2)]);
    expect(replica.replicationState()).toMatchObject({ term: 2, checkpointTerm: 1, checkpoint: 1 });
    expect(await replica.follow(2, 11)).toMatchObject({ term: 2, checkpointTerm: 2, checkpoint: 12 });
    await replica.applyReplicated(2, [put('e', 1, 13, {}, 2)]);
    expect(replica.replicationState()).toMatchObject({ checkpoint: 13 });
  });

  it('refuses malformed replicated changes before applying any', async () => {
    const replica = await openShard('replica');
    await expectError(replica.applyReplicated(0, []), 'invalid_write', 400);
    await expectError(replica.applyReplicated(1, [{ ...put('a', 1, 1, {}), version: 0 }]), 'invalid_write', 400);
    await expectError(replica.applyReplicated(1, [{ ...put('a', 1, 1, {}), originSeq: -1 }]), 'invalid_write', 400);
    await expectError(replica.applyReplicated(1, [put('ok', 1, 1, {}), { seq: 2, id: 'b', version: 1, deleted: false, originTerm: 1, originSeq: 2 }]), 'invalid_document', 400);
    expect(await replica.get('ok')).toBeUndefined();
  });
});

describe('ReplicaPosition', () => {
  it('forgets its position rather than hold unbounded seqs behind a gap', () => {
    const position = new ReplicaPosition({ term: 1, checkpointTerm: 1, checkpoint: 0 }, 3);
    for (const seq of [2, 3, 4]) position.observe(1, seq);
    expect(position.snapshot()).toEqual({ term: 1, checkpointTerm: 1, checkpoint: 0 });
    position.observe(1, 5);
    expect(position.snapshot()).toEqual({ term: 1, checkpointTerm: 0, checkpoint: 0 });
    expect(position.ahead).toBe(0);
  });

  it('ignores an observation of an older term (the term moved while the change was applied)', () => {
    const position = new ReplicaPosition({ term: 1, checkpointTerm: 1, checkpoint: 0 });
    position.raiseTerm(2);
    position.observe(1, 1);
    expect(position.snapshot()).toEqual({ term: 2, checkpointTerm: 1, checkpoint: 0 });
  });
});

describe('Tombstones', () => {
  it('forget a deletion after their time to live', () => {
    const tombstones = new Tombstones(100);
    tombstones.set('a', { term: 1, seq: 1 }, 0);
    tombstones.set('b', { term: 1, seq: 2 }, 50);
    expect(tombstones.get('a', 99)).toEqual({ term: 1, seq: 1 });
    expect(tombstones.get('a', 100)).toBeUndefined();
    tombstones.set('c', { term: 1, seq: 3 }, 120);
    expect(tombstones.size).toBe(2);
  });
});
