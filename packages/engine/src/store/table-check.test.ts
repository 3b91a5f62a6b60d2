/**
 * LevelDB table checks before a shard copy opens: a flipped bit anywhere in a
 * table (data block, filter, metaindex, index, a trailer, the footer's
 * handles, padding or magic) refuses the open (store_corrupted, file and
 * offset named), before LevelDB reads it unchecked or compacts it away.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../shard.js';
import { STORE_WRITE_BUFFER_BYTES_MIN } from '../shard/options.js';
import { liveTableNumbers } from './live-tables.js';
import { checkLevelDbTables, checkTableBytes } from './table-check.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'tessera-table-check-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

/** A shard copy whose documents went to tables (a small write buffer flushes often); its largest table. */
async function shardWithTables(path: string): Promise<string> {
  const shard = await Shard.open({ path, storeWriteBufferBytes: STORE_WRITE_BUFFER_BYTES_MIN });
  for (let i = 0; i < 600; i++) {
    await shard.write({ op: 'index', id: `d${i}`, body: { n: i, text: `document ${i} ${'lorem ipsum '.repeat(i % 7)}` } });
  }
  await shard.close();
  const tables = (await readdir(path)).filter((name) => name.endsWith('.ldb'));
  const sizes = await Promise.all(tables.map(async (name) => (await readFile(join(path, name))).length));
  expect(tables.length).toBeGreaterThan(0);
  return join(path, tables[sizes.indexOf(Math.max(...sizes))]!);
}

it('every flipped bit of a table is found: each block by its checksum, the footer by its layout', async () => {
  const table = await readFile(await shardWithTables(join(dir, 'shard')));
  expect(checkTableBytes(table)).toBeNull();
  // Every bit of the last 512 bytes (index, metaindex, the filter's end, the footer), one bit in every 13th byte before.
  const flips: Array<[number, number]> = [];
  for (let at = 0; at < table.length; at++) {
    if (at >= table.length - 512) for (let bit = 0; bit < 8; bit++) flips.push([at, bit]);
    else if (at % 13 === 0) flips.push([at, at % 8]);
  }
  const missed = flips.filter(([at, bit]) => {
    table[at] ^= 1 << bit;
    const found = checkTableBytes(table);
    table[at] ^= 1 << bit;
    return found === null;
  });
  expect(missed).toEqual([]);
  expect(flips.length).toBeGreaterThan(4096);
});

it('a footer handle re-encoded one byte longer (a flipped continuation bit, same value) is corruption', async () => {
  const table = await readFile(await shardWithTables(join(dir, 'shard')));
  const footer = table.length - 48;
  let end = footer; // the first handle's offset varint
  while (table[end]! & 0x80) end++;
  // A 1-byte varint v becomes v|0x80, 0x00: same value, but the zero padding after the handles now starts a byte later.
  const longer = Buffer.concat([table.subarray(0, footer), Buffer.from(table.subarray(footer, end)), Buffer.of(table[end]! | 0x80, 0), table.subarray(end + 1, footer + 39), table.subarray(footer + 40)]);
  expect(longer.length).toBe(table.length);
  expect(checkTableBytes(longer)).toMatchObject({ why: 'overlong varint' });
});

it('a shard copy with a flipped bit in a table is not opened: store_corrupted names the file, and the table stays as it was', async () => {
  const path = join(dir, 'shard');
  const file = await shardWithTables(path);
  expect(await checkLevelDbTables(path)).toBeNull();
  const bytes = await readFile(file);
  const at = Math.floor(bytes.length / 3);
  bytes[at] ^= 0x04;
  await writeFile(file, bytes);
  expect(await checkLevelDbTables(path)).toMatchObject({ file, why: 'block checksum mismatch' });
  await expect(Shard.open({ path })).rejects.toMatchObject({ code: 'store_corrupted', status: 500, message: expect.stringContaining(file) });
  expect((await readFile(file)).equals(bytes)).toBe(true);
  expect(await checkLevelDbTables(join(dir, 'missing'))).toBeNull();
});

it('a corrupt file the checks do not read (CURRENT) is store_corrupted too, not storage_unavailable', async () => {
  const path = join(dir, 'shard');
  await shardWithTables(path);
  const current = (await readFile(join(path, 'CURRENT'), 'utf8')).trimEnd();
  await writeFile(join(path, 'CURRENT'), current); // no final newline
  await expect(Shard.open({ path })).rejects.toMatchObject({ code: 'store_corrupted', status: 500, message: expect.stringContaining(path) });
});

it('a table a killed process left half written (in no manifest record) is not checked, and LevelDB opens without it', async () => {
  const path = join(dir, 'shard');
  const largest = await shardWithTables(path);
  const tables = (await readdir(path)).filter((name) => name.endsWith('.ldb')).map((name) => Number(name.slice(0, -4)));
  expect([...(await liveTableNumbers(path)) ?? []].sort((a, b) => a - b)).toEqual(tables.sort((a, b) => a - b));
  // A flush or compaction cut short by kill -9: a table numbered past the others, its footer never written.
  const orphan = join(path, `${String(Math.max(...tables) + 1).padStart(6, '0')}.ldb`);
  await writeFile(orphan, (await readFile(largest)).subarray(0, 1000));
  expect(await checkLevelDbTables(path)).toBeNull();
  const shard = await Shard.open({ path });
  expect(shard.stats().documents).toBe(600);
  await shard.close();
  // A live table cut short is still corruption.
  const live = join(path, (await readdir(path)).filter((name) => name.endsWith('.ldb'))[0]!);
  await writeFile(live, (await readFile(live)).subarray(0, 1000));
  expect((await checkLevelDbTables(path))?.file).toBe(live);
});
