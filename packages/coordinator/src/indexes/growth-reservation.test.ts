import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSchema, foldDocument } from '@tessera/schema';
import { NodeDirectory } from '../cluster/nodes.js';
import { EMPTY_CLUSTER_STATE, type ClusterState, type IndexMeta } from '../state/cluster-state.js';
import { LocalStateStore } from '../state/local-store.js';
import { IndexRegistry } from './registry.js';

const meta = (path: string, uuid: string, schema = createSchema()): IndexMeta => ({
  path, uuid, createdAt: '2026-11-27T00:00:00Z', settings: { number_of_shards: 1, number_of_replicas: 0 }, schema, idType: 'integer', allocation: [['n1']],
});

describe('schema growth reserved before a write is sent', () => {
  let dir: string;
  const file = () => join(dir, 'cluster-state.json');
  const open = async () => {
    const store = await LocalStateStore.open<ClusterState>(file(), EMPTY_CLUSTER_STATE);
    return { store, registry: new IndexRegistry(store, new NodeDirectory(), { number_of_shards: 1, number_of_replicas: 0 }) };
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-growth-'));
    const { store } = await open();
    await store.compareAndSet(store.get(), { ...store.get(), indexes: { '/a/': meta('/a/', 'u1'), '/b/': meta('/b/', 'u2') } });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a restarted registry folds what a stopped one left reserved, and drops what no longer fits', async () => {
    const before = await open();
    const a = before.registry.get('/a/')!;
    await before.registry.reserveGrowth(a, foldDocument(a.schema, { fresh: 'hello' }).schema);
    const b = before.registry.get('/b/')!;
    await before.registry.reserveGrowth(b, foldDocument(b.schema, { n: 1 }).schema);
    // Meanwhile `/b/` grew `n` as text: the left growth of `n: integer` cannot be folded.
    await before.registry.updateSchema('/b/', (s) => {
      const folded = foldDocument(s, { n: 'text' });
      return { schema: folded.schema, changed: folded.changed, result: undefined };
    });
    // A reservation of its own (a write in flight) is never folded as left behind.
    await before.registry.reserveGrowth(a, foldDocument(a.schema, { mine: 1 }).schema);
    await before.registry.foldLeftReservations(() => { throw new Error('nothing of its own is left'); });
    expect(Object.keys(before.store.get().growthReserved ?? {})).toHaveLength(3);

    const after = await open();
    const dropped: string[] = [];
    await after.registry.foldLeftReservations((reservation) => dropped.push(reservation.index));
    expect(Object.keys(after.registry.get('/a/')!.schema)).toEqual(expect.arrayContaining(['fresh', 'mine']));
    expect((after.registry.get('/b/')!.schema.n as { _type: string })._type).toBe('text');
    expect(dropped).toEqual(['/b/']);
    expect(after.store.get().growthReserved).toBeUndefined();
  });

  it('a settled reservation leaves nothing behind: folded once accepted, dropped once refused', async () => {
    const { store, registry } = await open();
    const a = registry.get('/a/')!;
    const grown = foldDocument(a.schema, { kept: 1 });
    const accepted = await registry.reserveGrowth(a, grown.schema);
    await registry.updateSchema('/a/', () => ({ schema: grown.schema, changed: true, result: undefined }), accepted);
    const refused = await registry.reserveGrowth(registry.get('/a/')!, foldDocument(registry.get('/a/')!.schema, { leaked: 1 }).schema);
    await registry.releaseGrowth(refused);
    expect(Object.keys(registry.get('/a/')!.schema)).toContain('kept');
    expect(Object.keys(registry.get('/a/')!.schema)).not.toContain('leaked');
    expect(store.get().growthReserved).toBeUndefined();
  });
});
