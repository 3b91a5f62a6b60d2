/**
 * LevelDB's write-ahead logs (`NNNNNN.log` in a shard copy's database),
 * checked before the database is opened.
 *
 * classic-level opens LevelDB with `paranoid_checks` off, and that LevelDB,
 * replaying a log record whose checksum does not match, drops it and the rest
 * of its 32 KiB block, notes "(ignoring error) … dropping N bytes" in its
 * LOG file and deletes the log once replayed: acknowledged writes, `?commit`
 * ones included, vanish without an error (a flipped bit in a log lost the
 * last 12 writes of a shard in scripts/chaos/scenarios/r12-flipped-byte.mjs).
 * So every complete record's checksum is checked here first, and a mismatch
 * refuses the open with the file and offset, leaving the log in place.
 *
 * Format (LevelDB doc/log_format.md): 32 KiB blocks of records, each a 7-byte
 * header — masked CRC-32C of type + data (u32 LE), data length (u16 LE), type
 * (u8) — then the data; a block's last < 7 bytes are zero padding, and a zero
 * header ends a preallocated block. A record cut short by the end of the file
 * is what a process killed while appending leaves: LevelDB ignores it, so
 * does this check.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

const BLOCK_BYTES = 32 * 1024;
const HEADER_BYTES = 7;
const LOG_FILE = /^\d+\.log$/;

/** Where a log is corrupted, or null when every complete record's checksum matches. */
export interface LogCorruption {
  file: string;
  offset: number;
  why: string;
}

/** Check every `*.log` in the database directory `dir` (a missing directory has none). */
export async function checkLevelDbLogs(dir: string): Promise<LogCorruption | null> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => LOG_FILE.test(name)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  for (const name of names) {
    const file = join(dir, name);
    const found = checkLogBytes(await readFile(file));
    if (found !== null) return { file, ...found };
  }
  return null;
}

/** The first corrupted record of one log's bytes, or null. */
export function checkLogBytes(buf: Uint8Array): { offset: number; why: string } | null {
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let block = 0; block < view.length; block += BLOCK_BYTES) {
    const end = Math.min(block + BLOCK_BYTES, view.length);
    for (let p = block; end - p >= HEADER_BYTES;) {
      const length = view.readUInt16LE(p + 4);
      const type = view[p + 6]!;
      if (type === 0 && length === 0) break; // the rest of a preallocated block
      if (p + HEADER_BYTES + length > end) {
        if (end === view.length) return null; // cut short by the end of the file: an append that never finished
        return { offset: p, why: 'record length beyond its block' };
      }
      if (unmask(view.readUInt32LE(p)) !== crc32c(view, p + 6, p + HEADER_BYTES + length)) {
        return { offset: p, why: 'checksum mismatch' };
      }
      p += HEADER_BYTES + length;
    }
  }
  return null;
}

const MASK_DELTA = 0xa282ead8;

function unmask(masked: number): number {
  const rot = (masked - MASK_DELTA) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}

/** CRC-32C (Castagnoli, reflected 0x82f63b78), as LevelDB's util/crc32c. */
const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = CRC32C_TABLE[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
