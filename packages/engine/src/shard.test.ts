import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TesseraError } from '@tessera/errors';
import { parseHighlight, parseQuery } from '@tessera/search-model';
import { Shard, type ShardOptions } from './shard.js';
import type { ShardDatabase } from './store/oplog.js';
import type { StoredDocument, WriteRequest } from './documents/types.js';

let dir: string;
const open: Shard[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-shard-'));
});

afterEach(async () => {
  for (const shard of open.splice(0)) await shard.close();
  await rm(dir, { recursive: true, force: true });
});

async function openShard(options: Partial<ShardOptions> = {}): Promise<Shard> {
  const shard = await Shard.open({ path: join(dir, 'shard'), ...options });
  open.push(shard);
  return shard;
}

/** The shard's LevelDB handle, to break it from under the store. */
/** A document's fields as a plain object (the cache's form keeps its body as JSON text: StoredDocument.bodyJson). */
function fieldsOf(doc: StoredDocument | undefined): object | undefined {
  return doc === undefined ? undefined : { id: doc.id, docid: doc.docid, version: doc.version, seq: doc.seq, body: doc.body };
}

function databaseOf(shard: Shard): ShardDatabase {
  return (shard as unknown as { state: { db: ShardDatabase } }).state.db;
}

/** Resolves once the shard copy's ID filter holds every stored ID (it reads them in the background at open). */
async function idsFilled(shard: Shard): Promise<void> {
  const { state } = shard as unknown as { state: { idsFilled: Promise<void>; ids: { ready: boolean } } };
  await state.idsFilled;
  expect(state.ids.ready).toBe(true);
}

async function expectError(promise: Promise<unknown>, code: string, status: number): Promise<TesseraError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    expect((err as TesseraError).code).toBe(code);
    expect((err as TesseraError).status).toBe(status);
    return err as TesseraError;
  }
  throw new Error(`expected a ${code} error`);
}

describe('Shard: versions and write semantics', () => {
  it('assigns versions, keeps the docid across updates, and a new one after delete + re-create', async () => {
    const shard = await openShard();
    const a1 = await shard.write({ op: 'index', id: 'a', body: { n: 1 } });
    const b1 = await shard.write({ op: 'index', id: 'b', body: { n: 1 } });
    expect(a1).toMatchObject({ id: 'a', docid: 1, version: 1, seq: 1, deleted: false, body: { n: 1 } });
    expect(b1).toMatchObject({ docid: 2, version: 1, seq: 2 });
    const a2 = await shard.write({ op: 'update', id: 'a', body: { m: 2 } });
    const a3 = await shard.write({ op: 'patch', id: 'a', patch: [{ op: 'incr', path: '/n', value: 1 }] });
    expect([a2.docid, a2.version, a3.docid, a3.version]).toEqual([1, 2, 1, 3]);
    expect(a3.body).toEqual({ n: 2, m: 2 });
    const deleted = await shard.write({ op: 'delete', id: 'a' });
    expect(deleted).toMatchObject({ id: 'a', docid: 1, version: 4, deleted: true });
    expect(deleted.body).toBeUndefined();
    expect(await shard.get('a')).toBeUndefined();
    expect(await shard.getByDocid(1)).toBeUndefined();
    const again = await shard.write({ op: 'index', id: 'a', body: { fresh: true } });
    expect(again).toMatchObject({ docid: 3, version: 1 });
    expect(shard.stats()).toEqual({ documents: 2, lastDocid: 3, seq: 6, maxNumericId: 0 });
  });

  it('index replaces the whole document; update merges recursively', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 1, body: { a: 1, o: { x: 1, y: 1 }, list: [1, 2] } });
    await shard.write({ op: 'update', id: 1, body: { o: { y: 2, z: 3 }, list: [3] } });
    expect((await shard.get(1))?.body).toEqual({ a: 1, o: { x: 1, y: 2, z: 3 }, list: [3] });
    await shard.write({ op: 'index', id: 1, body: { only: true } });
    expect((await shard.get(1))?.body).toEqual({ only: true });
  });

  it('update, patch and delete of a missing document are 404 unless upsert', async () => {
    const shard = await openShard();
    await expectError(shard.write({ op: 'update', id: 'x', body: { a: 1 } }), 'document_not_found', 404);
    await expectError(shard.write({ op: 'patch', id: 'x', patch: [] }), 'document_not_found', 404);
    await expectError(shard.write({ op: 'delete', id: 'x' }), 'document_not_found', 404);
    expect(shard.stats().seq).toBe(0);
    const up = await shard.write({ op: 'update', id: 'x', body: { a: 1 }, upsert: true });
    expect(up).toMatchObject({ version: 1, body: { a: 1 } });
    const patched = await shard.write({ op: 'patch', id: 'y', upsert: true, patch: [{ op: 'add', path: '/n', value: 0 }, { op: 'incr', path: '/n', value: 2 }] });
    expect(patched).toMatchObject({ version: 1, body: { n: 2 } });
    await expectError(shard.write({ op: 'patch', id: 'z', upsert: true, patch: [{ op: 'incr', path: '/n', value: 1 }] }), 'patch_failed', 400);
    expect(await shard.get('z')).toBeUndefined();
  });

  it('checks expected versions: each must match, 0 = must not exist, 409 before 404', async () => {
    const shard = await openShard();
    await expectError(shard.write({ op: 'update', id: 'a', body: {}, expectedVersions: [1] }), 'version_conflict', 409);
    await expectError(shard.write({ op: 'delete', id: 'a', expectedVersions: [3] }), 'version_conflict', 409);
    const created = await shard.write({ op: 'index', id: 'a', body: { v: 1 }, expectedVersions: [0] });
    expect(created.version).toBe(1);
    const e = await expectError(shard.write({ op: 'index', id: 'a', body: {}, expectedVersions: [0] }), 'version_conflict', 409);
    expect(e.message).toBe('Version mismatch!');
    await expectError(shard.write({ op: 'index', id: 'a', body: {}, expectedVersions: [1, 2] }), 'version_conflict', 409);
    const second = await shard.write({ op: 'index', id: 'a', body: { v: 2 }, expectedVersions: [1, 1] });
    expect(second.version).toBe(2);
    await expectError(shard.write({ op: 'delete', id: 'a', expectedVersions: [1] }), 'version_conflict', 409);
    await shard.write({ op: 'delete', id: 'a', expectedVersions: [2] });
    expect(await shard.get('a')).toBeUndefined();
    await expectError(shard.write({ op: 'index', id: 'a', body: {}, expectedVersions: [-1] }), 'invalid_write', 400);
  });

  it('two concurrent writes with the same expected version: exactly one wins, nothing else changes', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'doc', body: { n: 0 } });
    const before = shard.stats();
    const attempts: WriteRequest[] = [
      { op: 'update', id: 'doc', body: { by: 'first' }, expectedVersions: [1] },
      { op: 'update', id: 'doc', body: { by: 'second' }, expectedVersions: [1] },
    ];
    const outcomes = await Promise.allSettled(attempts.map((req) => shard.write(req)));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((lost[0].reason as TesseraError).code).toBe('version_conflict');
    const doc = await shard.get('doc');
    expect(doc).toMatchObject({ version: 2, body: { n: 0, by: 'first' } });
    expect(shard.stats()).toEqual({ ...before, seq: before.seq + 1 });
  });

  it('mutate: a throwing decide writes nothing; concurrent mutations of one document are serialised', async () => {
    const shard = await openShard();
    await expectError(shard.mutate('m', () => {
      throw new TesseraError('script_failed', 400, 'nope');
    }), 'script_failed', 400);
    expect(shard.stats().seq).toBe(0);
    await expectError(shard.mutate('m', () => ({ kind: 'delete' })), 'document_not_found', 404);
    // 100 concurrent read-modify-writes of one counter: none is lost.
    const increments = Array.from({ length: 100 }, () => shard.mutate('m', (current) => ({
      kind: 'put', body: { n: ((current?.body.n as number | undefined) ?? 0) + 1 },
    })));
    const results = await Promise.all(increments);
    expect(results.map((r) => r.version)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect((await shard.get('m'))?.body).toEqual({ n: 100 });
  });

  it('a failing patch leaves the document unchanged', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'p', body: { likes: 99, tags: ['a'] } });
    const cachedBefore = await shard.get('p');
    const e = await expectError(shard.write({
      op: 'patch', id: 'p', patch: [{ op: 'add', path: '/tags/-', value: 'b' }, { op: 'incr', path: '/likes', value: 1, limit: 100 }],
    }), 'patch_failed', 400);
    expect(e.message).toContain('Patch operation 1 (incr)');
    const after = await shard.get('p');
    expect(fieldsOf(after)).toEqual({ id: 'p', docid: 1, version: 1, seq: 1, body: { likes: 99, tags: ['a'] } });
    expect(cachedBefore?.body).toEqual({ likes: 99, tags: ['a'] });
    await expectError(shard.write({ op: 'patch', id: 'p', patch: [{ op: 'replace', path: '', value: [1] }] }), 'patch_failed', 400);
    expect(shard.stats().seq).toBe(1);
  });

  it('numeric and string IDs are different documents; numeric IDs raise maxNumericId', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 1, body: { kind: 'number' } });
    await shard.write({ op: 'index', id: '1', body: { kind: 'string' } });
    await shard.write({ op: 'index', id: 42.5, body: {} });
    await shard.write({ op: 'index', id: 7, body: {} });
    expect((await shard.get(1))?.body).toEqual({ kind: 'number' });
    expect((await shard.get('1'))?.body).toEqual({ kind: 'string' });
    expect(shard.stats()).toMatchObject({ documents: 4, maxNumericId: 42.5 });
    await expectError(shard.write({ op: 'index', id: Number.NaN, body: {} }), 'invalid_document_id', 400);
    await expectError(shard.get({} as unknown as string), 'invalid_document_id', 400);
  });

  it('refuses bodies that are not objects or cannot be stored', async () => {
    const shard = await openShard();
    await expectError(shard.write({ op: 'index', id: 'a', body: [] as unknown as Record<string, unknown> }), 'invalid_document', 400);
    await expectError(shard.mutate('a', () => ({ kind: 'put', body: { f: () => 1 } })), 'invalid_document', 400);
    await expectError(shard.write({ op: 'frob' as 'index', id: 'a' }), 'invalid_write', 400);
    expect(shard.stats().seq).toBe(0);
  });
});

describe('Shard: reads and the document cache', () => {
  it('serves hot documents from the cache and by docid', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'hot', body: { a: 1 } });
    const before = shard.metrics();
    for (let i = 0; i < 10; i++) expect((await shard.get('hot'))?.version).toBe(1);
    expect((await shard.getByDocid(1))?.id).toBe('hot');
    const after = shard.metrics();
    expect(after.documentCacheHits - before.documentCacheHits).toBe(11);
    expect(after.documentCacheMisses).toBe(before.documentCacheMisses);
  });

  it('a bulk write is not cached, and drops an older cached copy; the next read caches it', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'b', body: { a: 1 } });
    expect(shard.cached('b')?.version).toBe(1);
    await shard.write({ op: 'index', id: 'b', body: { a: 2 }, bulk: true });
    await shard.write({ op: 'index', id: 'new', body: { a: 3 }, bulk: true });
    expect(shard.cached('b')).toBeUndefined();
    expect(shard.cached('new')).toBeUndefined();
    expect((await shard.get('b'))?.body).toEqual({ a: 2 });
    expect(shard.cached('b')?.version).toBe(2);
    expect((await shard.search({ k: 10 })).hits.map((h) => h.id).sort()).toEqual(['b', 'new']);
  });

  it('an ID never stored is not looked up in LevelDB (a number above every one written, or an ID the ID filter never saw); others are, and versions stay right', async () => {
    let shard = await openShard({ documentCacheBytesMax: 0 });
    const countGets = (s: Shard): { n: number } => {
      const db = databaseOf(s);
      const get = db.get.bind(db);
      const getMany = db.getMany.bind(db);
      const count = { n: 0 };
      db.get = ((...args: Parameters<typeof get>) => {
        count.n++;
        return get(...args);
      }) as typeof db.get;
      db.getMany = ((...args: Parameters<typeof getMany>) => {
        count.n++;
        return getMany(...args);
      }) as typeof db.getMany;
      return count;
    };
    let gets = countGets(shard);
    for (const id of [1, 2, 5]) expect((await shard.write({ op: 'index', id, body: {} })).version).toBe(1);
    expect(gets.n).toBe(0);
    expect((await shard.write({ op: 'index', id: 3, body: {} })).version).toBe(1);
    expect((await shard.write({ op: 'index', id: '9', body: {} })).version).toBe(1);
    expect(gets.n).toBe(0);
    expect((await shard.write({ op: 'index', id: 5, body: {} })).version).toBe(2);
    expect((await shard.write({ op: 'index', id: '9', body: {} })).version).toBe(2);
    await shard.write({ op: 'delete', id: 3 });
    expect(gets.n).toBe(3);
    // A deleted ID stays in the filter: its write reads, and finds nothing.
    expect((await shard.write({ op: 'index', id: 3, body: {} })).version).toBe(1);
    expect(gets.n).toBe(4);
    await shard.close();
    shard = await openShard({ documentCacheBytesMax: 0 });
    gets = countGets(shard);
    // Written before the stored IDs are read into the filter (or after): versions go on from what is stored.
    expect((await shard.write({ op: 'index', id: '9', body: {} })).version).toBe(3);
    await idsFilled(shard);
    expect((await shard.write({ op: 'index', id: 5, body: {} })).version).toBe(3);
    expect((await shard.write({ op: 'index', id: 6, body: {} })).version).toBe(1);
    const before = gets.n;
    for (let i = 0; i < 50; i++) expect((await shard.write({ op: 'index', id: `new${i}`, body: {} })).version).toBe(1);
    expect(gets.n - before).toBeLessThanOrEqual(5); // false "maybe"s of the filter, rare
    expect((await shard.write({ op: 'index', id: 'new7', body: {} })).version).toBe(2);
  });

  it('the stored IDs are read into the filter at open: a bulk write of an existing ID gets the next version', async () => {
    let shard = await openShard({ documentCacheBytesMax: 0 });
    const reqs: WriteRequest[] = [];
    for (let i = 0; i < 3000; i++) reqs.push({ op: 'index', id: `d${i}`, body: { i }, bulk: true });
    await shard.writeMany(reqs);
    await shard.close();
    shard = await openShard({ documentCacheBytesMax: 0 });
    await idsFilled(shard);
    const outcomes = await shard.writeMany([{ op: 'index', id: 'd2999', body: {} }, { op: 'index', id: 'd3000', body: {} }, { op: 'index', id: 'd0', body: {} }]);
    expect(outcomes.map((o) => (o.ok ? o.value.version : o.error))).toEqual([2, 1, 2]);
    expect((await shard.get('d2999'))?.version).toBe(2);
  });

  it('writeMany answers each write in place as the same writes one by one would, documents written twice included', async () => {
    const setup: WriteRequest[] = [
      { op: 'index', id: 'hot', body: { n: 0 } }, // cached
      { op: 'index', id: 'cold', body: { n: 0 }, bulk: true }, // on disk only
      { op: 'index', id: 7, body: { n: 0 }, bulk: true },
    ];
    const writes: WriteRequest[] = [
      { op: 'index', id: 1, body: { n: 1 } },
      { op: 'index', id: 'hot', body: { n: 2 } },
      { op: 'update', id: 'hot', body: { m: 1 } },
      { op: 'index', id: 'x', body: {}, expectedVersions: [3] },
      { op: 'index', id: 'x', body: { ok: 1 } },
      { op: 'bogus' as WriteRequest['op'], id: 'y', body: {} },
      { op: 'delete', id: 1 },
      { op: 'update', id: 'cold', body: { m: 2 } },
      { op: 'index', id: 'cold', body: { n: 3 }, expectedVersions: [2] },
      { op: 'index', id: 7, body: { n: 4 } },
      { op: 'update', id: 'absent', body: { a: 1 } },
      { op: 'index', id: 1, body: { again: true } },
    ];
    const one = await openShard();
    const many = await Shard.open({ path: join(dir, 'many') });
    open.push(many);
    for (const shard of [one, many]) for (const req of setup) await shard.write(req);
    const expected: Array<[boolean, unknown]> = [];
    for (const req of writes) {
      expected.push(await one.write({ ...req, bulk: true }).then((r) => [true, [r.id, r.version, r.deleted]], (err: TesseraError) => [false, err.code]));
    }
    const outcomes = await many.writeMany(writes);
    expect(outcomes.map((o) => (o.ok ? [true, [o.value.id, o.value.version, o.value.deleted]] : [false, (o.error as TesseraError).code]))).toEqual(expected);
    expect(expected.filter(([ok]) => !ok)).toHaveLength(3);
    for (const id of ['hot', 'cold', 'x', 1, 7, 'absent']) expect((await many.get(id))?.body).toEqual((await one.get(id))?.body);
    expect((await many.get('hot'))?.body).toEqual({ n: 2, m: 1 });
    expect((await many.search({ k: 10 })).total).toBe((await one.search({ k: 10 })).total);
  });

  it('bulk writes (text analysed on the analysis thread) index what single writes index', async () => {
    const schema = { _dynamic: false, title: { _type: 'text', _language: 'en' }, tag: { _type: 'keyword' } };
    const bodies = Array.from({ length: 60 }, (_, i) => ({ title: `running dogs ${i % 7} and the cats of house ${i % 5}`, tag: `t${i % 3}` }));
    const single = await openShard();
    const bulk = await Shard.open({ path: join(dir, 'bulk') });
    open.push(bulk);
    for (const [i, body] of bodies.entries()) await single.write({ op: 'index', id: i, body, schema });
    await Promise.all(bodies.map((body, i) => bulk.write({ op: 'index', id: i, body, schema, bulk: true })));
    for (const value of [{ title: 'run' }, { title: '"dogs 3"' }, { title: 'cats', tag: 't1' }, { title: 'house 4' }]) {
      const query = parseQuery(value);
      const [a, b] = await Promise.all([single.search({ query, k: 100, schema }), bulk.search({ query, k: 100, schema })]);
      expect(a.total).toBeGreaterThan(0);
      // Equal scores may come in another docid order: compare by ID.
      const byId = (r: typeof a): Array<[unknown, number]> => r.hits.map((h): [unknown, number] => [h.id, h.score]).sort((x, y) => Number(x[0]) - Number(y[0]));
      expect(b.total).toBe(a.total);
      expect(byId(b)).toEqual(byId(a));
    }
  });

  it('answers cached() from the cache alone: a hit counted, a miss left to get(), nothing while closing', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'hot', body: { a: 1 } });
    const before = shard.metrics();
    expect(shard.cached('hot')).toBe(await shard.get('hot'));
    expect(shard.cached('cold')).toBeUndefined();
    expect(shard.cached(7)).toBeUndefined();
    const after = shard.metrics();
    expect(after.documentCacheHits - before.documentCacheHits).toBe(2);
    expect(after.documentCacheMisses).toBe(before.documentCacheMisses);
    expect(() => shard.cached({} as unknown as string)).toThrow(expect.objectContaining({ code: 'invalid_document_id' }));
    const closing = shard.close();
    expect(shard.cached('hot')).toBeUndefined();
    await closing;
  });

  it('reads from LevelDB when the cache is off, and coalesces concurrent reads', async () => {
    const shard = await openShard({ documentCacheBytesMax: 0 });
    for (let i = 0; i < 20; i++) await shard.write({ op: 'index', id: i, body: { i } });
    const docs = await Promise.all(Array.from({ length: 20 }, (_, i) => shard.get(i)));
    expect(docs.map((d) => d?.body.i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect((await shard.getByDocid(5))?.id).toBe(4);
    expect(await shard.getByDocid(999)).toBeUndefined();
    expect(shard.metrics().documentCacheEntries).toBe(0);
  });

  it('never returns a write before its batch is written', async () => {
    // A 200 ms window holds the batch while GETs run against the acknowledged state.
    const shard = await openShard({ groupCommitWindowMs: 200 });
    await shard.write({ op: 'index', id: 'c', body: { v: 1 } });
    let acknowledged = false;
    const pending = Promise.all([
      shard.write({ op: 'index', id: 'c', body: { v: 2 } }),
      shard.write({ op: 'index', id: 'new', body: {} }),
    ]).then(() => {
      acknowledged = true;
    });
    while (shard.metrics().changesQueued < 2) await new Promise((resolve) => setImmediate(resolve));
    expect((await shard.get('c'))?.body).toEqual({ v: 1 });
    expect(await shard.get('new')).toBeUndefined();
    expect(shard.stats().seq).toBe(1);
    expect(acknowledged).toBe(false);
    await pending;
    expect((await shard.get('c'))?.body).toEqual({ v: 2 });
    expect(await shard.get('new')).toBeDefined();
  });

  it('iterates every live document in ID order', async () => {
    const shard = await openShard();
    for (const id of ['b', 2, 'a', -1, 10]) await shard.write({ op: 'index', id, body: { id } });
    await shard.write({ op: 'delete', id: 'b' });
    const ids: unknown[] = [];
    for await (const doc of shard.documents()) ids.push(doc.id);
    expect(ids).toEqual([-1, 2, 10, 'a']);
  });
});

describe('Shard: group commit', () => {
  it('200 concurrent committed writes share a few sync batches', async () => {
    const shard = await openShard();
    const before = shard.metrics();
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      shard.write({ op: 'index', id: `doc-${i}`, body: { i }, commit: true })));
    const after = shard.metrics();
    expect(new Set(results.map((r) => r.seq)).size).toBe(200);
    expect(new Set(results.map((r) => r.docid)).size).toBe(200);
    const synced = after.batchesSynced - before.batchesSynced;
    expect(synced).toBeGreaterThanOrEqual(1);
    expect(synced).toBeLessThanOrEqual(10);
    expect(after.changesWritten - before.changesWritten).toBe(200);
    expect(shard.stats()).toMatchObject({ documents: 200, seq: 200, lastDocid: 200 });
  });

  it('bounds a batch to batchEntriesMax changes', async () => {
    const shard = await openShard({ batchEntriesMax: 10, oplogEntriesMax: 1000 });
    await Promise.all(Array.from({ length: 100 }, (_, i) => shard.write({ op: 'index', id: i, body: {} })));
    expect(shard.metrics().batchesWritten).toBeGreaterThanOrEqual(10);
    expect(shard.stats().documents).toBe(100);
  });

  it('uncommitted writes are not synced; commit() syncs once for everything acknowledged', async () => {
    const shard = await openShard();
    await Promise.all(Array.from({ length: 50 }, (_, i) => shard.write({ op: 'index', id: i, body: {} })));
    expect(shard.metrics().batchesSynced).toBe(0);
    await shard.commit();
    expect(shard.metrics().batchesSynced).toBe(1);
    expect(shard.stats().seq).toBe(50);
  });
});

/** The keys the shard's LevelDB reads from now on (its point reads all go through getMany). */
function countKeysRead(shard: Shard): () => number {
  const db = databaseOf(shard);
  const getMany = db.getMany.bind(db);
  let keysRead = 0;
  db.getMany = ((keys: unknown[], ...rest: unknown[]) => {
    keysRead += keys.length;
    return (getMany as (...args: unknown[]) => unknown)(keys, ...rest);
  }) as typeof db.getMany;
  return () => keysRead;
}

describe('Shard: persistence', () => {
  it('fetches the hits of a search on a cold cache with one read each: the ID comes from the _id column', async () => {
    let shard = await openShard();
    const ids: Array<string | number> = [1, 'two', 3.5, 'four', -7];
    for (const id of ids) await shard.write({ op: 'index', id, body: { tag: 'x', id: String(id) } });
    await shard.write({ op: 'index', id: 'two', body: { tag: 'x', id: 'two', again: true } });
    await shard.close();

    shard = await openShard();
    const keysRead = countKeysRead(shard);
    const result = await shard.search({ k: 10 });
    expect(result.hits.map((h) => h.id).sort()).toEqual([...ids].sort());
    // Read from LevelDB, a hit comes as the cached form's JSON text.
    const bodies = new Map(result.hits.map((h) => [h.id, JSON.parse(h.bodyJson!) as Record<string, unknown>]));
    for (const [id, body] of bodies) expect(body.id).toBe(String(id));
    expect(bodies.get('two')?.again).toBe(true);
    expect(keysRead()).toBe(ids.length);
  });

  it('a search without documents reads nothing: IDs and versions come from the value columns', async () => {
    let shard = await openShard();
    const ids: Array<string | number> = [1, 'two', 3.5, 'four', -7];
    for (const id of ids) await shard.write({ op: 'index', id, body: { tag: 'x' } });
    await shard.write({ op: 'index', id: 'two', body: { tag: 'x', again: true } });
    await shard.write({ op: 'delete', id: 'four' });
    await shard.close();

    shard = await openShard();
    const keysRead = countKeysRead(shard);
    const bodiless = await shard.search({ k: 10, documents: false });
    expect(keysRead()).toBe(0);
    expect(bodiless.hits.every((h) => h.body === undefined && h.bodyJson === undefined)).toBe(true);
    const full = await shard.search({ k: 10 });
    expect(keysRead()).toBe(4);
    const own = (hits: typeof full.hits) => hits.map((h) => ({ id: h.id, docid: h.docid, version: h.version, score: h.score }));
    expect(own(bodiless.hits)).toEqual(own(full.hits));
    expect(bodiless.total).toBe(4);
    expect(bodiless.hits.find((h) => h.id === 'two')?.version).toBe(2);
    // A highlight needs the bodies: asked with one, the hits are fetched.
    const highlighted = await shard.search({ query: { kind: 'all' }, k: 10, documents: false, highlight: parseHighlight({ _fields: ['tag'] }) });
    expect(highlighted.hits.every((h) => h.body !== undefined || h.bodyJson !== undefined)).toBe(true);
  });

  it('keeps every document, the counters and the operation log across close and reopen', async () => {
    let shard = await openShard();
    await shard.write({ op: 'index', id: 1, body: { a: 1 } });
    await shard.write({ op: 'index', id: 'two', body: { b: [1, 2] } });
    await shard.write({ op: 'update', id: 1, body: { c: { d: true } } });
    await shard.write({ op: 'index', id: 'gone', body: {} });
    await shard.write({ op: 'delete', id: 'gone' });
    const stats = shard.stats();
    const log = await shard.readOplog(0);
    await shard.close();
    await expectError(shard.get(1), 'shard_closed', 503);
    await expectError(shard.write({ op: 'index', id: 1, body: {} }), 'shard_closed', 503);

    shard = await openShard();
    expect(shard.stats()).toEqual(stats);
    expect(stats).toEqual({ documents: 2, lastDocid: 3, seq: 5, maxNumericId: 1 });
    expect(fieldsOf(await shard.get(1))).toEqual({ id: 1, docid: 1, version: 2, seq: 3, body: { a: 1, c: { d: true } } });
    expect(fieldsOf(await shard.get('two'))).toEqual({ id: 'two', docid: 2, version: 1, seq: 2, body: { b: [1, 2] } });
    expect(await shard.get('gone')).toBeUndefined();
    expect(await shard.readOplog(0)).toEqual(log);
    expect(log.map((e) => [e.seq, e.id, e.docid, e.version, e.op])).toEqual([
      [1, 1, 1, 1, 'put'], [2, 'two', 2, 1, 'put'], [3, 1, 1, 2, 'put'], [4, 'gone', 3, 1, 'put'], [5, 'gone', 3, 2, 'delete'],
    ]);
    expect(log[2].body).toEqual({ a: 1, c: { d: true } });
    // Counters continue where they were.
    expect(await shard.write({ op: 'index', id: 'next', body: {} })).toMatchObject({ docid: 4, seq: 6, version: 1 });
  });

  it('trims the operation log to its bound in the background, never past what the index has persisted', async () => {
    const options = { oplogEntriesMax: 10, batchEntriesMax: 10, index: { writeBufferOpsMax: 5 } };
    let shard = await openShard(options);
    for (let i = 1; i <= 50; i++) await shard.write({ op: 'index', id: i % 7, body: { i } });
    await shard.close();
    shard = await openShard(options);
    const first = shard.metrics().oplogFirstSeq;
    expect(first).toBeGreaterThan(1);
    expect(first).toBeLessThanOrEqual(41);
    const tail = await shard.readOplog(first - 1);
    expect(tail.map((e) => e.seq)).toEqual(Array.from({ length: 51 - first }, (_, i) => first + i));
    expect((await shard.readOplog(45, 2)).map((e) => e.seq)).toEqual([46, 47]);
    await expectError(shard.readOplog(first - 2), 'oplog_trimmed', 410);
    expect(await shard.readOplog(50)).toEqual([]);
    await expectError(shard.readOplog(-1), 'invalid_oplog_read', 400);
    await expectError(shard.readOplog(40, 0), 'invalid_oplog_read', 400);
  });

  it('keeps the entries an unflushed index needs, and replays them at open', async () => {
    const schema = { n: { _type: 'integer' } };
    let shard = await openShard({ oplogEntriesMax: 10, batchEntriesMax: 10 });
    for (let i = 1; i <= 30; i++) await shard.write({ op: 'index', id: i, body: { n: i }, schema });
    await shard.write({ op: 'delete', id: 3, schema });
    await shard.close();
    shard = await openShard({ oplogEntriesMax: 10, batchEntriesMax: 10 });
    expect(shard.metrics().oplogFirstSeq).toBe(1);
    const all = await shard.search({ query: parseQuery({ n: { _in: { _range: { _from: 1, _to: 30 } } } }), k: 100 });
    expect(all.total).toBe(29);
    expect(all.hits.map((h) => h.id).sort((a, b) => Number(a) - Number(b))).not.toContain(3);
    await shard.close();
  });

  it('destroy() removes the directory', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'a', body: {} });
    await shard.destroy();
    const reopened = await openShard();
    expect(reopened.stats().documents).toBe(0);
  });

  it('close() finishes the writes already accepted', async () => {
    const shard = await openShard({ groupCommitWindowMs: 20 });
    const writes = Array.from({ length: 20 }, (_, i) => shard.write({ op: 'index', id: i, body: {} }));
    await shard.close();
    expect((await Promise.all(writes)).map((r) => r.version)).toEqual(Array(20).fill(1));
    const reopened = await openShard();
    expect(reopened.stats().documents).toBe(20);
  });

  it('refuses invalid options', async () => {
    await expectError(Shard.open({ path: join(dir, 'x'), batchEntriesMax: 0 }), 'invalid_option', 500);
    await expectError(Shard.open({ path: join(dir, 'x'), oplogEntriesMax: 10 }), 'invalid_option', 500);
    await expectError(Shard.open({ path: join(dir, 'x'), groupCommitWindowMs: -1 }), 'invalid_option', 500);
    await expectError(Shard.open({ path: join(dir, 'x'), documentCacheBytesMax: 1.5 }), 'invalid_option', 500);
    // Outside the range LevelDB would silently clamp it to.
    await expectError(Shard.open({ path: join(dir, 'x'), storeWriteBufferBytes: 1024 }), 'invalid_option', 500);
    await expectError(Shard.open({ path: join(dir, 'x'), storeWriteBufferBytes: 2 ** 31 }), 'invalid_option', 500);
  });

  it('a second open of the same directory is storage_unavailable (LevelDB lock)', async () => {
    await openShard();
    await expectError(Shard.open({ path: join(dir, 'shard') }), 'storage_unavailable', 503);
  });
});

describe('Shard: failed batches', () => {
  it('a batch failing on a full disk rejects its writes with 507 storage_full, changes nothing, and the shard recovers', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'keep', body: { v: 1 } });
    const stats = shard.stats();
    const db = databaseOf(shard);
    const fail = (): void => {
      throw new Error('No space left on device (injected)');
    };
    db.hooks.prewrite.add(fail);
    const outcomes = await Promise.allSettled([
      shard.write({ op: 'index', id: 'keep', body: { v: 2 } }),
      shard.write({ op: 'index', id: 'new', body: {} }),
      shard.write({ op: 'delete', id: 'keep' }),
    ]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      const err = (outcome as PromiseRejectedResult).reason as TesseraError;
      expect(err.code).toBe('storage_full');
      expect(err.status).toBe(507);
      expect(err.message).toContain('No space left on device (injected)');
    }
    expect(shard.stats()).toEqual(stats);
    // Each batch failed, the retries after a reopen too (the fault is still there).
    expect(shard.metrics().batchesFailed).toBeGreaterThanOrEqual(1);
    expect(await shard.get('keep')).toMatchObject({ version: 1, body: { v: 1 } });
    expect(await shard.get('new')).toBeUndefined();

    db.hooks.prewrite.delete(fail);
    expect(await shard.write({ op: 'index', id: 'new', body: {} })).toMatchObject({ docid: 2, seq: 2, version: 1 });
    expect(await shard.write({ op: 'update', id: 'keep', body: { v: 3 } })).toMatchObject({ version: 2, seq: 3 });
    expect(shard.metrics().recoveries).toBeGreaterThanOrEqual(1);
    expect((await shard.readOplog(0)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('survives the database being closed under it', async () => {
    const shard = await openShard();
    await shard.write({ op: 'index', id: 'a', body: { v: 1 } });
    await databaseOf(shard).close();
    await expectError(shard.write({ op: 'index', id: 'a', body: { v: 2 } }), 'storage_unavailable', 503);
    expect((await shard.get('a'))?.version).toBe(1); // read after the reopen
    expect(await shard.write({ op: 'index', id: 'a', body: { v: 3 } })).toMatchObject({ version: 2, seq: 2 });
    expect((await shard.get('a'))?.body).toEqual({ v: 3 });
  });

  it('a read on a database closed under it reopens it', async () => {
    const shard = await openShard({ documentCacheBytesMax: 0 });
    await shard.write({ op: 'index', id: 'a', body: {} });
    await databaseOf(shard).close();
    await expectError(shard.get('a'), 'storage_unavailable', 503);
    await shard.commit();
    expect((await shard.get('a'))?.version).toBe(1);
  });
});
