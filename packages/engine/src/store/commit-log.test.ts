/**
 * The node's commit log: `commit` batches of several copies share its
 * fdatasyncs; a copy whose LevelDB lost its unsynced tail (a power cut)
 * gets its acknowledged `commit` writes back from the log at open; a torn
 * record ends a file; a full file moves to a new one and the old one goes
 * once every copy has synced.
 */
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../shard.js';
import { CommitLog, encodeRecord } from './commit-log.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'tessera-commit-log-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

const token = (n: number): Buffer => Buffer.alloc(16, n);
const record = (n: number, seq: number) => ({
  token: token(n), path: join(dir, `copy${n}`), prevSeq: seq - 1, seq, operations: [{ type: 'put' as const, key: Buffer.from(`k${seq}`), value: Buffer.from(`v${seq}`) }],
});

it('records of several copies appended together share one fdatasync', async () => {
  const log = await CommitLog.open(join(dir, 'log'));
  try {
    // The first starts a round at once; the nine that arrive while it is in flight go out in the next.
    await Promise.all(Array.from({ length: 10 }, (_, i) => log.append(record(i % 5, Math.floor(i / 5) + 1))));
    expect(log.counts).toEqual({ records: 10, syncs: 2 });
  } finally {
    await log.close();
  }
});

it('commit writes on a copy with the log are durable through it, and readable', async () => {
  const log = await CommitLog.open(join(dir, 'log'));
  const shards = await Promise.all([1, 2, 3].map((n) => Shard.open({ path: join(dir, `s${n}`), commitLog: log })));
  try {
    const acked = await Promise.all(Array.from({ length: 60 }, (_, i) => shards[i % 3]!.write({ op: 'index', id: `d${i}`, body: { i }, commit: true })));
    expect(log.counts.records).toBeGreaterThan(0);
    for (let i = 0; i < 60; i++) expect((await shards[i % 3]!.get(`d${i}`))?.version).toBe(acked[i]!.version);
  } finally {
    await Promise.all(shards.map((s) => s.close()));
    await log.close();
  }
});

it('a copy that lost its unsynced LevelDB tail gets its acknowledged commit writes back from the log, once', async () => {
  const log = await CommitLog.open(join(dir, 'log'));
  const shard = await Shard.open({ path: join(dir, 'shard'), commitLog: log });
  await shard.write({ op: 'index', id: 'before', body: { n: 0 }, commit: true });
  // What a power cut leaves of the copy's LevelDB: the state as of its last sync (the open syncs it).
  await shard.close();
  const reopened = await Shard.open({ path: join(dir, 'shard'), commitLog: log });
  await cp(join(dir, 'shard'), join(dir, 'synced'), { recursive: true });
  const acked = await Promise.all(Array.from({ length: 40 }, (_, i) =>
    reopened.write({ op: 'index', id: `d${i}`, body: { n: i, text: `word${i % 4}` }, commit: true })));
  await reopened.write({ op: 'delete', id: 'before', commit: true });
  const seq = reopened.stats().seq;
  // The log as synced when the writes were answered.
  await cp(join(dir, 'log'), join(dir, 'log-after'), { recursive: true });
  await reopened.close();
  await log.close();
  // Without the log, the synced state has none of them: they are the log's to give back.
  await cp(join(dir, 'synced'), join(dir, 'bare'), { recursive: true });
  const bare = await Shard.open({ path: join(dir, 'bare') });
  expect(bare.stats().documents).toBe(1);
  await bare.close();

  for (let round = 0; round < 2; round++) {
    const after = await CommitLog.open(join(dir, 'log-after'));
    const recovered = await Shard.open({ path: join(dir, 'synced'), commitLog: after });
    try {
      expect(recovered.stats()).toMatchObject({ documents: 40, seq });
      for (const { id, version } of acked) expect((await recovered.get(id))?.version).toBe(version);
      expect(await recovered.get('before')).toBeUndefined();
      // The search index caught up with the re-applied batches (op-log replay).
      expect((await recovered.search({ k: 100 })).total).toBe(40);
    } finally {
      await recovered.close();
      await after.close();
    }
  }
});

it('a torn record ends a file: the records before it are read', async () => {
  const path = join(dir, 'log');
  const log = await CommitLog.open(path);
  await Promise.all([1, 2, 3].map((seq) => log.append(record(7, seq))));
  await log.close();
  const [file] = await readdir(path);
  const torn = encodeRecord(record(7, 4));
  await writeFile(join(path, file!), torn.subarray(0, torn.length - 3), { flag: 'a' });
  const reopened = await CommitLog.open(path);
  const seqs: number[] = [];
  for await (const r of reopened.records(token(7))) seqs.push(r.seq);
  expect(seqs).toEqual([1, 2, 3]);
  await reopened.close();
});

it('past rotateBytes the log moves to a new file and deletes the old once every copy has synced', async () => {
  const path = join(dir, 'log');
  const log = await CommitLog.open(path, { rotateBytes: 4096 });
  const shard = await Shard.open({ path: join(dir, 'shard'), commitLog: log });
  for (let i = 0; i < 60; i++) await shard.write({ op: 'index', id: `d${i}`, body: { i, pad: 'x'.repeat(200) }, commit: true });
  // The checkpoint (the copy's LevelDB synced) runs behind the writes: wait for the old files to go.
  const deadline = Date.now() + 10_000;
  while ((await readdir(path)).length > 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect((await readdir(path)).length).toBeLessThanOrEqual(2);
  await shard.close();
  await log.close();
  const again = await CommitLog.open(path, { rotateBytes: 4096 });
  const reopened = await Shard.open({ path: join(dir, 'shard'), commitLog: again });
  expect(reopened.stats().documents).toBe(60);
  await reopened.close();
  await again.close();
});
