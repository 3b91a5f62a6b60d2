/**
 * LevelDB log checks before a shard copy opens: a complete record whose
 * checksum does not match refuses the open (store_corrupted, file and offset
 * named, the log left in place) instead of LevelDB dropping acknowledged
 * writes; an append cut short at the end of the file is still opened.
 */
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../shard.js';
import { checkLevelDbLogs, checkLogBytes } from './log-check.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'tessera-log-check-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

/** A shard copy whose last writes are only in its log (LevelDB does not flush the memtable on close). */
async function shardWithLog(path: string, writes: number): Promise<string> {
  const shard = await Shard.open({ path });
  for (let i = 0; i < writes; i++) await shard.write({ op: 'index', id: `d${i}`, body: { n: i, text: `doc ${i}` } });
  await shard.close();
  const logs = (await readdir(path)).filter((name) => name.endsWith('.log'));
  const sizes = await Promise.all(logs.map(async (name) => (await readFile(join(path, name))).length));
  const index = sizes.findIndex((size) => size > 0);
  expect(index).toBeGreaterThanOrEqual(0);
  return join(path, logs[index]!);
}

it('an intact log passes; a flipped bit in a record refuses the open with the file and offset, and the log stays', async () => {
  const path = join(dir, 'shard');
  const log = await shardWithLog(path, 40);
  expect(await checkLevelDbLogs(path)).toBeNull();
  const bytes = await readFile(log);
  const at = Math.floor(bytes.length / 2);
  bytes[at] ^= 0x10;
  await writeFile(log, bytes);
  expect(await checkLevelDbLogs(path)).toMatchObject({ file: log, why: 'checksum mismatch' });
  await expect(Shard.open({ path })).rejects.toMatchObject({ code: 'store_corrupted', status: 500, message: expect.stringContaining(log) });
  expect((await readFile(log)).equals(bytes)).toBe(true);
});

it('a record cut short by the end of the file (an append that never finished) still opens, with the records before it', async () => {
  const path = join(dir, 'shard');
  const log = await shardWithLog(path, 40);
  const size = (await readFile(log)).length;
  await truncate(log, size - 5);
  expect(await checkLevelDbLogs(path)).toBeNull();
  const shard = await Shard.open({ path });
  try {
    expect(await shard.get('d0')).toMatchObject({ body: { n: 0 } });
  } finally {
    await shard.close();
  }
});

it('a record length reaching past its block, before the end of the file, is corruption; zero padding is not', async () => {
  const block = Buffer.alloc(64 * 1024);
  expect(checkLogBytes(block)).toBeNull();
  block.writeUInt16LE(40_000, 4);
  block[6] = 1;
  expect(checkLogBytes(block)).toEqual({ offset: 0, why: 'record length beyond its block' });
  expect(await checkLevelDbLogs(join(dir, 'missing'))).toBeNull();
});

it('a flipped length bit that makes the last record reach past the end of the file is corruption, not an unfinished append', async () => {
  const path = join(dir, 'shard');
  const log = await shardWithLog(path, 40);
  const bytes = await readFile(log);
  let last = 0; // the last record's header
  for (let p = 0; p + 7 <= bytes.length; p += 7 + bytes.readUInt16LE(p + 4)) last = p;
  bytes[last + 5] ^= 0x02; // length + 512
  await writeFile(log, bytes);
  expect(await checkLevelDbLogs(path)).toMatchObject({ file: log, offset: last, why: 'record length beyond its block' });
});

it('every flipped bit of a manifest is found, and the copy is not opened (LevelDB would drop the tables the lost records name)', async () => {
  const path = join(dir, 'shard');
  const shard = await Shard.open({ path, storeWriteBufferBytes: 64 * 1024 });
  for (let i = 0; i < 400; i++) await shard.write({ op: 'index', id: `d${i}`, body: { n: i, text: `document ${i} ${'lorem '.repeat(20)}` } });
  await shard.close();
  const manifest = join(path, (await readdir(path)).find((name) => name.startsWith('MANIFEST-'))!);
  const bytes = await readFile(manifest);
  expect(checkLogBytes(bytes)).toBeNull();
  const missed: number[] = [];
  for (let bit = 0; bit < bytes.length * 8; bit++) {
    bytes[bit >> 3] ^= 1 << (bit & 7);
    if (checkLogBytes(bytes) === null) missed.push(bit);
    bytes[bit >> 3] ^= 1 << (bit & 7);
  }
  expect(missed).toEqual([]);
  // The second record's length grown past the end of the file, as R12 planted it.
  const second = 7 + bytes.readUInt16LE(4);
  bytes[second + 5] ^= 0x02;
  await writeFile(manifest, bytes);
  const tables = (await readdir(path)).filter((name) => name.endsWith('.ldb'));
  await expect(Shard.open({ path })).rejects.toMatchObject({ code: 'store_corrupted', message: expect.stringContaining(manifest) });
  expect((await readdir(path)).filter((name) => name.endsWith('.ldb'))).toEqual(tables);
});

it('a non-zero byte in a block\'s padding is corruption', () => {
  const block = Buffer.alloc(64 * 1024);
  block[100] = 1;
  expect(checkLogBytes(block)).toEqual({ offset: 100, why: 'non-zero block padding' });
});
