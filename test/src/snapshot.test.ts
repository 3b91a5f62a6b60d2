/**
 * `tessera snapshot` and `tessera snapshot restore` (docs/snapshots.md) on a
 * real embedded server: a snapshot taken while a writer and an updater keep
 * writing, restored into an empty directory and served again. What must
 * hold: every write acknowledged before the snapshot began is there with its
 * version; each shard is one point in time (a sequential writer's documents
 * of a shard are a prefix of what it wrote there: no hole, no half
 * document); search agrees with GET; schema, settings and content bytes are
 * the same; a damaged file or a non-empty target is refused.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { accessOf } from '@tessera/coordinator';
import { runCli } from './cli-process.js';
import { startCluster, type ClusterOptions } from './cluster-harness.js';
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';

const INDEX = '/snap/';
const PRELOADED = 2000;
const UPDATED = 20;

let source: Server;
let restored: Server | undefined;
let dir: string;

beforeAll(async () => {
  source = await startServer();
  dir = tempDataDir('tessera-snapshot-');
});

afterAll(async () => {
  await source.stop();
  await restored?.stop();
  removeDir(source.dataDir);
  removeDir(dir);
});

/** What the writers had acknowledged, and when (ms, performance.now()). */
interface Ack {
  id: string;
  version: number;
  at: number;
}

it('admin only: POST /.snapshots/ needs the admin action', () => {
  expect(accessOf('POST', '/.snapshots/')).toEqual({ kind: 'action', action: 'admin', indexes: [] });
});

it('a snapshot taken under writes restores into an empty directory with every acknowledged write, one point in time per shard', async () => {
  const schema = {
    title: { _type: 'text' }, tag: { _type: 'keyword' }, n: { _type: 'integer' }, price: { _type: 'floating' },
    when: { _type: 'date' }, flag: { _type: 'boolean' }, tags: { _type: 'array/keyword' },
  };
  expect((await call(source, 'PUT', INDEX, { _schema: schema })).status).toBeLessThan(300);
  const lines = Array.from({ length: PRELOADED }, (_, i) => JSON.stringify({
    _id: `p${i}`, title: `preloaded document ${i}`, tag: `t${i % 7}`, n: i, price: i / 4, when: `2026-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00`,
    flag: i % 2 === 0, tags: [`a${i % 3}`, `b${i % 5}`],
  }));
  expect((await call(source, 'RESTORE', INDEX, lines.join('\n'), { 'content-type': 'application/x-ndjson' })).json.indexed).toBe(PRELOADED);
  const blobs = new Map<string, Buffer>();
  for (let i = 0; i < 8; i++) {
    const bytes = randomBytes(1000 + i * 40_000);
    blobs.set(`bin${i}`, bytes);
    expect((await call(source, 'PUT', `${INDEX}bin${i}`, bytes, { 'content-type': 'application/octet-stream' })).status).toBe(200);
  }
  for (let u = 0; u < UPDATED; u++) expect((await call(source, 'PUT', `${INDEX}u${u}`, { title: 'updated', n: 0 })).status).toBe(200);

  // A sequential writer of new documents and a sequential updater of the u* documents, running through the snapshot.
  const written: Ack[] = [];
  const updates: Ack[] = [];
  let writing = true;
  const writer = (async () => {
    for (let k = 0; writing; k++) {
      const r = await call(source, 'PUT', `${INDEX}w${k}`, { title: `written ${k}`, n: k, tag: 'w', price: k + 0.5 });
      if (r.status !== 200) throw new Error(`write w${k}: ${r.status} ${r.text}`);
      written.push({ id: `w${k}`, version: r.json._version as number, at: performance.now() });
    }
  })();
  const updater = (async () => {
    for (let k = 1; writing; k++) {
      const id = `u${k % UPDATED}`;
      const r = await call(source, 'PUT', `${INDEX}${id}`, { title: 'updated', n: k });
      if (r.status !== 200) throw new Error(`update ${id}: ${r.status} ${r.text}`);
      updates.push({ id, version: r.json._version as number, at: performance.now() });
    }
  })();
  while (written.length < 50) await new Promise((resolve) => setTimeout(resolve, 10));

  const snapshotDir = join(dir, 'snap');
  const startedAt = performance.now();
  const taken = await runCli(['snapshot', '--out', snapshotDir, '--url', source.url]);
  writing = false;
  await Promise.all([writer, updater]);
  expect(taken.stderr).toMatch(/snapshot of 5 shards, \d+ documents/);
  expect(taken.code).toBe(0);
  expect(written.some((ack) => ack.at > startedAt)).toBe(true);
  expect(readdirSync(snapshotDir).sort()).toEqual(['SHA256SUMS', 'manifest.json', 'shards', 'state.json']);
  const manifest = JSON.parse(readFileSync(join(snapshotDir, 'manifest.json'), 'utf8')) as { shards: Array<{ shard: number; documents: number; file: string }> };
  expect(manifest.shards.map((s) => s.shard)).toEqual([1, 2, 3, 4, 5]);
  const inSnapshot = manifest.shards.reduce((sum, s) => sum + s.documents, 0);

  // A damaged byte anywhere in a shard file: refused, naming the file, nothing written.
  const damaged = join(dir, 'damaged');
  cpSync(snapshotDir, damaged, { recursive: true });
  const victim = join(damaged, 'shards', '0002.msgpack');
  const bytes = readFileSync(victim);
  bytes[Math.floor(bytes.length / 2)] ^= 0x01;
  writeFileSync(victim, bytes);
  const refusedTarget = join(dir, 'refused');
  const corrupt = await runCli(['snapshot', 'restore', damaged, '--data', refusedTarget]);
  expect(corrupt.code).toBe(1);
  expect(corrupt.stderr).toMatch(/snapshot file shards\/0002\.msgpack is corrupted.*refusing to restore/);
  expect(() => readdirSync(refusedTarget)).toThrow(/ENOENT/);

  // A data directory with something in it: refused, left as it was.
  const occupied = join(dir, 'occupied');
  mkdirSync(occupied);
  writeFileSync(join(occupied, 'keep.txt'), 'mine');
  const notEmpty = await runCli(['snapshot', 'restore', snapshotDir, '--data', occupied]);
  expect(notEmpty.code).toBe(1);
  expect(notEmpty.stderr).toMatch(/data directory \(--data\) .*occupied is not empty/);
  expect(readdirSync(occupied)).toEqual(['keep.txt']);

  // A snapshot without SHA256SUMS (its command failed or was cut: it is written last) is not restored.
  const incomplete = join(dir, 'incomplete');
  cpSync(snapshotDir, incomplete, { recursive: true });
  rmSync(join(incomplete, 'SHA256SUMS'));
  const unfinished = await runCli(['snapshot', 'restore', incomplete, '--data', refusedTarget]);
  expect(unfinished.code).toBe(1);
  expect(unfinished.stderr).toMatch(/is not a complete snapshot: SHA256SUMS cannot be read/);
  // Nor is a snapshot written over another.
  const over = await runCli(['snapshot', '--out', snapshotDir, '--url', source.url, '-q']);
  expect(over.code).toBe(1);
  expect(over.stderr).toMatch(/snapshot directory \(--out\) .* is not empty/);

  const target = join(dir, 'restored');
  const restoring = await runCli(['snapshot', 'restore', snapshotDir, '--data', target]);
  expect(restoring.stderr).toMatch(new RegExp(`restored 5 shards, ${inSnapshot} documents`));
  expect(restoring.code).toBe(0);
  restored = await startServer({ dataDir: target });

  // Settings and schema as they were.
  const [before, after] = await Promise.all([call(source, 'GET', INDEX), call(restored, 'GET', INDEX)]);
  expect(after.json._schema).toEqual(before.json._schema);
  expect(after.json._settings.number_of_shards).toBe(5);

  // Search and GET agree, and count what the snapshot holds.
  const all = await call(restored, 'SEARCH', INDEX, { _query: '*', _limit: inSnapshot + 10, _sort: '_id' });
  expect(all.json.total).toBe(inSnapshot);
  const hits = all.json.hits as Array<Record<string, unknown>>;
  expect(hits).toHaveLength(inSnapshot);
  const found = new Map<string, { version: number; shard: number; body: Record<string, unknown> }>();
  for (const hit of hits) found.set(hit._id as string, { version: hit._version as number, shard: hit['#shard'] as number, body: hit });

  // Every preloaded document, whole, with its version.
  for (const line of lines) {
    const doc = JSON.parse(line) as Record<string, unknown>;
    const hit = found.get(doc._id as string);
    expect(hit?.version).toBe(1);
    expect(hit?.body).toMatchObject(doc);
  }
  // Every write acknowledged before the snapshot began is there; per shard, the writer's documents are a prefix of what it wrote there.
  for (const ack of written.filter((a) => a.at < startedAt)) expect(found.get(ack.id)?.version).toBe(1);
  const lastPresent = new Map<number, number>();
  const shardOf = new Map<string, number>();
  for (const ack of written) {
    const hit = found.get(ack.id);
    if (hit === undefined) continue;
    expect(hit.body).toMatchObject({ title: `written ${ack.id.slice(1)}`, n: Number(ack.id.slice(1)) });
    shardOf.set(ack.id, hit.shard);
    lastPresent.set(hit.shard, Math.max(lastPresent.get(hit.shard) ?? -1, Number(ack.id.slice(1))));
  }
  const missing = await Promise.all(written.filter((ack) => !found.has(ack.id)).map(async (ack) => {
    const r = await call(source, 'GET', `${INDEX}${ack.id}`);
    return { k: Number(ack.id.slice(1)), shard: r.json['#shard'] as number };
  }));
  for (const { k, shard } of missing) expect(k).toBeGreaterThan(lastPresent.get(shard) ?? -1);
  // Updated documents: at least the version acknowledged before the snapshot, at most the last one acknowledged.
  for (let u = 0; u < UPDATED; u++) {
    const id = `u${u}`;
    const mine = updates.filter((a) => a.id === id);
    const floor = Math.max(1, ...mine.filter((a) => a.at < startedAt).map((a) => a.version));
    const ceiling = Math.max(1, ...mine.map((a) => a.version));
    const version = found.get(id)?.version as number;
    expect(version).toBeGreaterThanOrEqual(floor);
    expect(version).toBeLessThanOrEqual(ceiling);
  }
  // GET agrees with search, document by document (a sample across the kinds).
  const sample = [...found.keys()].filter((_, i) => i % 37 === 0);
  for (const id of sample) {
    const r = await call(restored, 'GET', `${INDEX}${encodeURIComponent(id)}`, undefined, { accept: 'application/json' });
    expect(r.status).toBe(200);
    expect(r.json._version).toBe(found.get(id)?.version);
  }
  // Stored content, byte for byte.
  for (const [id, blob] of blobs) {
    const r = await call(restored, 'GET', `${INDEX}${id}`, undefined, { accept: 'application/octet-stream' });
    expect(r.status).toBe(200);
    expect(r.bytes.equals(blob)).toBe(true);
  }
  // The restored server takes writes.
  expect((await call(restored, 'PUT', `${INDEX}after`, { title: 'after the restore' })).status).toBe(200);
  expect((await call(restored, 'PUT', `${INDEX}u0`, { title: 'updated again' })).json._version).toBe((found.get('u0')?.version as number) + 1);
}, 240_000);

const CLUSTERS: Array<{ title: string; options: ClusterOptions; via: string }> = [
  { title: 'a coordinator and two nodes', options: { nodes: 2 }, via: 'coordinator' },
  // Through the coordinator that is not elected: its cluster state comes from etcd's watch, refreshed for the snapshot.
  { title: 'two coordinators on etcd and two nodes, through the one not elected', options: { nodes: 2, coordinators: 2, etcd: true }, via: 'follower' },
];

it.each(CLUSTERS)('a cluster ($title, a replica per shard) snapshots and restores into an embedded server', async ({ options, via }) => {
  const cluster = await startCluster(options);
  let served: Server | undefined;
  try {
    expect((await call(cluster, 'PUT', '/cl/', { _settings: { number_of_shards: 3, number_of_replicas: 1 }, _schema: { n: { _type: 'integer' }, title: { _type: 'text' } } })).status)
      .toBeLessThan(300);
    const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ _id: i + 1, n: i, title: `clustered ${i}` }));
    expect((await call(cluster, 'RESTORE', '/cl/', lines.join('\n'), { 'content-type': 'application/x-ndjson' })).json.indexed).toBe(300);
    for (let i = 1; i <= 10; i++) expect((await call(cluster, 'PUT', `/cl/${i}`, { n: -i, title: 'changed' })).json._version).toBe(2);
    const blob = randomBytes(70_000);
    expect((await call(cluster, 'PUT', '/cl/1000', blob, { 'content-type': 'image/png' })).status).toBe(200);
    expect((await call(cluster, 'PUT', '/.templates/logs', { _patterns: ['/logs/*'], _settings: { number_of_shards: 2 } })).status).toBeLessThan(300);

    const snapshotDir = join(dir, `cluster-snap-${via}`);
    let url = cluster.url;
    if (via === 'follower') {
      const [leader] = await cluster.leaders();
      const follower = [...cluster.coordinators.keys()].find((name) => name !== leader) as string;
      url = cluster.urlOf(follower);
    }
    const taken = await runCli(['snapshot', '--out', snapshotDir, '--url', url]);
    expect(taken.stderr).toMatch(/snapshot of 3 shards, 301 documents/);
    expect(taken.code).toBe(0);
    const target = join(dir, `cluster-restored-${via}`);
    const restoring = await runCli(['snapshot', 'restore', snapshotDir, '--data', target]);
    expect(restoring.code).toBe(0);
    served = await startServer({ dataDir: target });

    const index = await call(served, 'GET', '/cl/');
    expect(index.json._settings).toMatchObject({ number_of_shards: 3, shards: [['node1'], ['node1'], ['node1']] });
    expect(index.json._schema).toEqual((await call(cluster, 'GET', '/cl/')).json._schema);
    expect((await call(served, 'SEARCH', '/cl/', { _query: '*', _limit: 0 })).json.total).toBe(301);
    expect((await call(served, 'SEARCH', '/cl/', { _query: { title: 'changed' }, _limit: 20 })).json.total).toBe(10);
    expect((await call(served, 'GET', '/cl/5')).json).toMatchObject({ _id: 5, _version: 2, n: -5, title: 'changed' });
    expect((await call(served, 'GET', '/cl/250')).json).toMatchObject({ _id: 250, _version: 1, n: 249 });
    expect((await call(served, 'GET', '/cl/1000', undefined, { accept: 'image/png' })).bytes.equals(blob)).toBe(true);
    expect((await call(served, 'GET', '/.templates/logs')).json).toMatchObject({ _patterns: ['/logs/*'] });
    // Numeric IDs go on from the largest restored one.
    expect((await call(served, 'POST', '/cl/', { n: 1 })).json._id).toBe(1001);
  } finally {
    await served?.stop();
    await cluster.stop();
    removeDir(cluster.dataDir);
  }
}, 240_000);
