/**
 * LevelDB's table files (`NNNNNN.ldb`, `.sst` before LevelDB 1.14 named
 * them), checked before the database is opened.
 *
 * classic-level exposes neither `paranoid_checks` nor `verify_checksums`, so
 * LevelDB reads its tables without checking their blocks' checksums: a
 * flipped bit in a block of keys, an index or a bloom filter changes what a
 * read finds (a key seen as absent, a filter that says "not here", an
 * outdated value that wins) or passes unnoticed, and only a flipped value is
 * caught by our own record checksums (store/records.ts). So every byte of
 * every table is checked here, once per open of the copy (tables are
 * immutable), and a mismatch refuses the open with the file and offset.
 *
 * Format (LevelDB doc/table_format.md): blocks, each followed by a 5-byte
 * trailer — compression type (u8: 0 none, 1 snappy) and the masked CRC-32C of
 * the stored (compressed) block and that type byte (u32 LE) — then a 48-byte
 * footer: the metaindex and index block handles (varint64 offset and size
 * each), zero padding to 40 bytes, the magic number (u64 LE). The index
 * block's values are the data blocks' handles, the metaindex's the filter
 * block's. Every block's checksum is checked, the footer's padding and magic
 * compared, and the blocks must tile the file from byte 0 to the footer: a
 * flip in a handle moves a block off its place, so no byte goes unchecked.
 */
import { crc32c } from '@node-rs/crc32';
import { uncompressSync } from 'snappy';
import { liveTableNumbers } from './live-tables.js';
import { firstCorruptFile, unmaskCrc, type StoreCorruption } from './log-check.js';

const TABLE_FILE = /^\d+\.(ldb|sst)$/;
const FOOTER_BYTES = 48;
const FOOTER_HANDLES_BYTES = 40;
const TRAILER_BYTES = 5;
const MAGIC_LOW = 0x8b80fb57;
const MAGIC_HIGH = 0xdb477524;
const NO_COMPRESSION = 0;
const SNAPPY_COMPRESSION = 1;
/** Tables read at once: their reads overlap each other's checksums. */
const TABLES_IN_FLIGHT = 4;

interface BlockHandle {
  offset: number;
  size: number;
}

class TableCorruption extends Error {
  constructor(readonly offset: number, why: string) {
    super(why);
  }
}

/**
 * Check every live table in the database directory `dir` (a missing
 * directory has none): those its current manifest lists (live-tables.ts: a
 * table a killed process left half written is in none, and LevelDB deletes
 * it unread), or every table when the manifest cannot be read. The first
 * corruption found, or null.
 */
export async function checkLevelDbTables(dir: string): Promise<StoreCorruption | null> {
  const live = await liveTableNumbers(dir);
  const include = live === null ? undefined : (name: string) => live.has(Number(name.slice(0, name.indexOf('.'))));
  return firstCorruptFile(dir, TABLE_FILE, checkTableBytes, TABLES_IN_FLIGHT, include);
}

/** The first corruption in one table's bytes, or null when every block and the footer check out. */
export function checkTableBytes(table: Uint8Array): { offset: number; why: string } | null {
  const buf = Buffer.from(table.buffer, table.byteOffset, table.byteLength);
  try {
    const footerStart = buf.length - FOOTER_BYTES;
    if (footerStart < 0) throw new TableCorruption(0, `table of ${buf.length} bytes is shorter than its footer`);
    if (buf.readUInt32LE(buf.length - 8) !== MAGIC_LOW || buf.readUInt32LE(buf.length - 4) !== MAGIC_HIGH) {
      throw new TableCorruption(buf.length - 8, 'bad table magic number');
    }
    const footer = { p: footerStart };
    const metaindex = readHandle(buf, footer, footerStart + FOOTER_HANDLES_BYTES);
    const index = readHandle(buf, footer, footerStart + FOOTER_HANDLES_BYTES);
    for (let p = footer.p; p < footerStart + FOOTER_HANDLES_BYTES; p++) {
      if (buf[p] !== 0) throw new TableCorruption(p, 'non-zero footer padding');
    }
    const blocks = [metaindex, index];
    for (const entry of blockEntries(readBlock(buf, index), index.offset)) blocks.push(entry);
    // The metaindex names the filter block (the only meta block LevelDB writes).
    for (const entry of blockEntries(readBlock(buf, metaindex), metaindex.offset)) blocks.push(entry);
    // Data and filter blocks: checked, not parsed (a data block's records are checked when read).
    for (let i = 2; i < blocks.length; i++) readBlock(buf, blocks[i]!, false);
    blocks.sort((a, b) => a.offset - b.offset);
    let expected = 0;
    for (const block of blocks) {
      if (block.offset !== expected) throw new TableCorruption(Math.min(block.offset, expected), 'blocks do not tile the table');
      expected = block.offset + block.size + TRAILER_BYTES;
    }
    if (expected !== footerStart) throw new TableCorruption(expected, 'blocks do not tile the table');
    return null;
  } catch (err) {
    if (err instanceof TableCorruption) return { offset: err.offset, why: err.message };
    throw err;
  }
}

/** The block's checksum checked; its contents, uncompressed when `contents`. */
function readBlock(buf: Buffer, handle: BlockHandle, contents = true): Buffer {
  const end = handle.offset + handle.size;
  if (end + TRAILER_BYTES > buf.length - FOOTER_BYTES) throw new TableCorruption(handle.offset, 'block handle beyond the table');
  if (unmaskCrc(buf.readUInt32LE(end + 1)) !== crc32c(buf.subarray(handle.offset, end + 1))) {
    throw new TableCorruption(handle.offset, 'block checksum mismatch');
  }
  const type = buf[end]!;
  const stored = buf.subarray(handle.offset, end);
  if (type === NO_COMPRESSION) return stored;
  if (type !== SNAPPY_COMPRESSION) throw new TableCorruption(end, `unknown block compression type ${type}`);
  if (!contents) return stored;
  try {
    return uncompressSync(stored, { asBuffer: true }) as Buffer;
  } catch {
    throw new TableCorruption(handle.offset, 'block does not uncompress');
  }
}

/** The block handles an index or metaindex block holds as values. */
function blockEntries(block: Buffer, blockOffset: number): BlockHandle[] {
  try {
    return parseBlockEntries(block);
  } catch (err) {
    // Offsets inside an uncompressed block mean nothing in the file: the block's own is reported.
    if (err instanceof TableCorruption) throw new TableCorruption(blockOffset, `malformed index block: ${err.message}`);
    throw err;
  }
}

function parseBlockEntries(block: Buffer): BlockHandle[] {
  const corrupt = (): never => { throw new TableCorruption(0, 'entries overrun the block'); };
  if (block.length < 4) corrupt();
  const restarts = block.readUInt32LE(block.length - 4);
  const entriesEnd = block.length - 4 - 4 * restarts;
  if (restarts < 1 || entriesEnd < 0) corrupt();
  const handles: BlockHandle[] = [];
  const at = { p: 0 };
  while (at.p < entriesEnd) {
    readVarint(block, at, entriesEnd); // bytes shared with the previous key
    const unshared = readVarint(block, at, entriesEnd);
    const valueLength = readVarint(block, at, entriesEnd);
    at.p += unshared;
    const valueEnd = at.p + valueLength;
    if (valueEnd > entriesEnd) corrupt();
    handles.push(readHandle(block, at, valueEnd));
    if (at.p !== valueEnd) corrupt();
  }
  return handles;
}

function readHandle(buf: Buffer, at: { p: number }, end: number): BlockHandle {
  return { offset: readVarint(buf, at, end), size: readVarint(buf, at, end) };
}

/** A varint (LevelDB's varint32/varint64, shortest encoding) up to 2^53, advancing `at.p`. */
function readVarint(buf: Buffer, at: { p: number }, end: number): number {
  let value = 0;
  for (let shift = 1; shift < 2 ** 56; shift *= 128) {
    if (at.p >= end) throw new TableCorruption(at.p, 'truncated varint');
    const byte = buf[at.p++]!;
    value += (byte & 0x7f) * shift;
    if ((byte & 0x80) === 0) {
      // LevelDB writes the shortest encoding: a longer one is a flipped continuation bit, same value or not.
      if (byte === 0 && shift > 1) throw new TableCorruption(at.p - 1, 'overlong varint');
      return value;
    }
  }
  throw new TableCorruption(at.p, 'varint too long');
}
