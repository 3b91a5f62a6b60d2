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
import { checkLevelDbLogs, checkLogBytes, crc32c } from './log-check.js';

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

it('CRC-32C is the Castagnoli checksum (RFC 3720 test vector)', () => {
  expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
});

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
