/**
 * The node's commit log: `commit` batches of several copies share its
 * fdatasyncs; a copy whose LevelDB lost its unsynced tail (a power cut)
 * gets its acknowledged `commit` writes back when the log opens again; a
 * torn record ends a file; a full file moves to a new one and the old one
 * goes once every copy has synced.
 */
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../shard.js';
import { openCommitLog } from '../shard/recovery.js';
import { CommitLog, type CommitLogRecord, encodeRecord } from './commit-log.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'tessera-commit-log-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

const token = (n: number): Buffer => Buffer.alloc(16, n);
const record = (n: number, seq: number): CommitLogRecord => ({
  token: token(n), path: `copy${n}`, prevSeq: seq - 1, seq, operations: [{ type: 'put', key: Buffer.from(`k${seq}`), value: Buffer.from(`v${seq}`) }],
});
const nothingToReplay = async (): Promise<number> => 0;

it('records of several copies appended together share one fdatasync', async () => {
  const { log } = await CommitLog.open(join(dir, 'log'), nothingToReplay);
  try {
    // The first starts a round at once; the nine that arrive while it is in flight go out in the next.
    await Promise.all(Array.from({ length: 10 }, (_, i) => log.append(record(i % 5, Math.floor(i / 5) + 1))));
    expect(log.counts).toEqual({ records: 10, syncs: 2 });
  } finally {
    await log.close();
  }
});

it('commit writes on copies with the log go through it and are readable', async () => {
  const { log } = await openCommitLog(join(dir, 'log'));
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

it('a copy that lost its unsynced LevelDB tail gets its acknowledged commit writes back when the log opens, once', async () => {
  const node = join(dir, 'node');
  const after = join(dir, 'after');
  const { log } = await openCommitLog(join(node, 'log'));
  const shard = await Shard.open({ path: join(node, 'shard'), commitLog: log });
  await shard.write({ op: 'index', id: 'before', body: { n: 0 }, commit: true });
  await shard.close();
  const reopened = await Shard.open({ path: join(node, 'shard'), commitLog: log });
  // What a power cut leaves of the copy's LevelDB: the state as of its last sync (the open syncs it).
  await cp(join(node, 'shard'), join(after, 'shard'), { recursive: true });
  const acked = await Promise.all(Array.from({ length: 40 }, (_, i) =>
    reopened.write({ op: 'index', id: `d${i}`, body: { n: i, text: `word${i % 4}` }, commit: true })));
  await reopened.write({ op: 'delete', id: 'before', commit: true });
  const seq = reopened.stats().seq;
  // The log as synced when the writes were answered.
  await cp(join(node, 'log'), join(after, 'log'), { recursive: true });
  await reopened.close();
  await log.close();
  // Without the log, the synced state has none of them: they are the log's to give back.
  await cp(join(after, 'shard'), join(dir, 'bare'), { recursive: true });
  const bare = await Shard.open({ path: join(dir, 'bare') });
  expect(bare.stats().documents).toBe(1);
  await bare.close();

  for (let round = 0; round < 2; round++) {
    const { log: again, recovery } = await openCommitLog(join(after, 'log'));
    // The first open re-applies them and deletes the files; the first's own went when it closed after its copy.
    if (round === 0) expect(recovery.replayed).toBeGreaterThan(0);
    else expect(recovery).toMatchObject({ files: 0, records: 0, replayed: 0 });
    expect(recovery.failed).toEqual([]);
    const recovered = await Shard.open({ path: join(after, 'shard'), commitLog: again });
    try {
      expect(recovered.stats()).toMatchObject({ documents: 40, seq });
      for (const { id, version } of acked) expect((await recovered.get(id))?.version).toBe(version);
      expect(await recovered.get('before')).toBeUndefined();
      // The search index caught up with the re-applied batches (op-log replay).
      expect((await recovered.search({ k: 100 })).total).toBe(40);
    } finally {
      await recovered.close();
      await again.close();
    }
  }
});

it('a torn record ends a file: the records before it are replayed, and the files go', async () => {
  const path = join(dir, 'log');
  const { log } = await CommitLog.open(path, nothingToReplay);
  // A copy still open when the log closes (a crash, as far as the files go): they stay.
  log.register(async () => {});
  await Promise.all([1, 2, 3].map((seq) => log.append(record(7, seq))));
  await log.close();
  const [file] = await readdir(path);
  const torn = encodeRecord(record(7, 4));
  await writeFile(join(path, file!), torn.subarray(0, torn.length - 3), { flag: 'a' });
  const seen: number[] = [];
  const { log: reopened, recovery } = await CommitLog.open(path, async (copy, records) => {
    expect(copy).toBe(join(path, 'copy7'));
    seen.push(...records.map((r) => r.seq));
    return records.length;
  });
  expect(seen).toEqual([1, 2, 3]);
  expect(recovery).toMatchObject({ files: 1, records: 3, replayed: 3 });
  expect(await readdir(path)).not.toContain(file);
  await reopened.close();
});

it('past rotateBytes the log moves to a new file and deletes the old once every copy has synced', async () => {
  const path = join(dir, 'log');
  const { log } = await openCommitLog(path, { rotateBytes: 4096 });
  const shard = await Shard.open({ path: join(dir, 'shard'), commitLog: log });
  for (let i = 0; i < 60; i++) await shard.write({ op: 'index', id: `d${i}`, body: { i, pad: 'x'.repeat(200) }, commit: true });
  // The checkpoint (the copy's LevelDB synced) runs behind the writes: wait for the old files to go.
  const deadline = Date.now() + 10_000;
  while ((await readdir(path)).length > 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect((await readdir(path)).length).toBeLessThanOrEqual(2);
  await shard.close();
  await log.close();
  const { log: again } = await openCommitLog(path, { rotateBytes: 4096 });
  const reopened = await Shard.open({ path: join(dir, 'shard'), commitLog: again });
  expect(reopened.stats().documents).toBe(60);
  await reopened.close();
  await again.close();
});
