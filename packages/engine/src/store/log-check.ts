/**
 * LevelDB's write-ahead logs (`NNNNNN.log` in a shard copy's database) and
 * manifests (`MANIFEST-NNNNNN`, the log of which tables make up the
 * database), checked before the database is opened.
 *
 * classic-level opens LevelDB with `paranoid_checks` off, and that LevelDB,
 * replaying a log record whose checksum does not match, drops it and the rest
 * of its 32 KiB block, notes "(ignoring error) … dropping N bytes" in its
 * LOG file and deletes the log once replayed: acknowledged writes, `?commit`
 * ones included, vanish without an error (a flipped bit in a log lost the
 * last 12 writes of a shard in scripts/chaos/scenarios/r12-flipped-byte.mjs).
 * A manifest record whose length bit flipped reads as one cut short at the
 * end of the file: LevelDB stops there, opens an older set of tables and
 * deletes the newer ones as obsolete (R12 lost 3 of 5 tables so). So every
 * complete record's checksum is checked here first, and a mismatch refuses
 * the open with the file and offset, leaving the file in place.
 *
 * Format (LevelDB doc/log_format.md): 32 KiB blocks of records, each a 7-byte
 * header — masked CRC-32C of type + data (u32 LE), data length (u16 LE), type
 * (u8) — then the data; a block's last < 7 bytes are zero padding, and a zero
 * header ends a preallocated block. A record cut short by the end of the file
 * is what a process killed while appending leaves: LevelDB ignores it, so
 * does this check, unless the record is whole with one bit of its length
 * flipped back.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';

const BLOCK_BYTES = 32 * 1024;
const HEADER_BYTES = 7;
/** Write-ahead logs and manifests (the log of the table set's versions): one format. */
const LOG_FILE = /^(\d+\.log|MANIFEST-\d+)$/;

/** Where a LevelDB file (a log, a table: store/table-check.ts) is corrupted. */
export interface StoreCorruption {
  file: string;
  offset: number;
  why: string;
}

/** Check every `*.log` and `MANIFEST-*` in the database directory `dir` (a missing directory has none). */
export function checkLevelDbLogs(dir: string): Promise<StoreCorruption | null> {
  return firstCorruptFile(dir, LOG_FILE, checkLogBytes, 1);
}

/**
 * Check each file of `dir` whose name matches `pattern` (and `include`) with `check`, up to
 * `inFlight` files read at once; the first corruption in name order, or null
 * (a missing directory has no files).
 */
export async function firstCorruptFile(dir: string, pattern: RegExp,
  check: (bytes: Uint8Array) => { offset: number; why: string } | null, inFlight: number,
  include: (name: string) => boolean = () => true): Promise<StoreCorruption | null> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => pattern.test(name) && include(name)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const found: Array<StoreCorruption | null> = new Array(names.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const i = next++;
      const file = join(dir, names[i]!);
      const corruption = check(await readFile(file));
      if (corruption !== null) found[i] = { file, ...corruption };
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, names.length) }, worker));
  return found.find((c) => c !== null) ?? null;
}

/**
 * What walking a log's bytes meets, in order: each record fragment whose
 * checksum matches, each block's tail after its last fragment (zeros in a
 * sound log), and at most one fragment it cannot read — whose length runs
 * past its block, or whose checksum does not match — where the walk ends.
 * The checker and the reader below tell these apart differently.
 */
type LogPiece =
  | { kind: 'fragment'; type: number; data: Buffer }
  | { kind: 'padding'; from: number; to: number }
  | { kind: 'beyond block'; offset: number; length: number; blockEnd: number }
  | { kind: 'checksum mismatch'; offset: number };

function* logPieces(view: Buffer): Generator<LogPiece> {
  for (let block = 0; block < view.length; block += BLOCK_BYTES) {
    const end = Math.min(block + BLOCK_BYTES, view.length);
    let p = block;
    while (end - p >= HEADER_BYTES) {
      const length = view.readUInt16LE(p + 4);
      const type = view[p + 6]!;
      if (type === 0 && length === 0) break; // the rest of a preallocated block: zeros
      if (p + HEADER_BYTES + length > end) {
        yield { kind: 'beyond block', offset: p, length, blockEnd: end };
        return;
      }
      if (!checksumMatches(view, p, length)) {
        yield { kind: 'checksum mismatch', offset: p };
        return;
      }
      yield { kind: 'fragment', type, data: view.subarray(p + HEADER_BYTES, p + HEADER_BYTES + length) };
      p += HEADER_BYTES + length;
    }
    // A block's tail (under a header's size, or after a zero header), but for a header cut short at the end of the file.
    const tailEnd = end === view.length && end - p < HEADER_BYTES ? p : end;
    if (p < tailEnd) yield { kind: 'padding', from: p, to: tailEnd };
  }
}

/** The first corrupted record of one log's bytes, or null. */
export function checkLogBytes(buf: Uint8Array): { offset: number; why: string } | null {
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  for (const piece of logPieces(view)) {
    switch (piece.kind) {
      case 'beyond block':
        // Cut short by the end of the file: an append that never finished, unless a flipped length bit made it look so.
        if (piece.blockEnd === view.length && !wholeWithFlippedLength(view, piece.offset, piece.length, piece.blockEnd)) return null;
        return { offset: piece.offset, why: 'record length beyond its block' };
      case 'checksum mismatch':
        return { offset: piece.offset, why: 'checksum mismatch' };
      case 'padding':
        for (let q = piece.from; q < piece.to; q++) if (view[q] !== 0) return { offset: q, why: 'non-zero block padding' };
        break;
      case 'fragment':
        break;
    }
  }
  return null;
}

/** LevelDB log record types: a record whole in one block, or its first, middle and last fragments. */
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/**
 * The records of a log's bytes, fragments joined, in order; stops at the
 * first record cut short, failing its checksum or out of sequence (what
 * LevelDB would not read either).
 */
export function logRecords(buf: Uint8Array): Buffer[] {
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const records: Buffer[] = [];
  let fragments: Buffer[] | undefined;
  for (const piece of logPieces(view)) {
    if (piece.kind === 'padding') continue;
    if (piece.kind !== 'fragment') return records;
    const { type, data } = piece;
    if (type === FULL && fragments === undefined) records.push(data);
    else if (type === FIRST && fragments === undefined) fragments = [data];
    else if (type === MIDDLE && fragments !== undefined) fragments.push(data);
    else if (type === LAST && fragments !== undefined) {
      fragments.push(data);
      records.push(Buffer.concat(fragments));
      fragments = undefined;
    } else {
      return records;
    }
  }
  return records;
}

function checksumMatches(view: Buffer, p: number, length: number): boolean {
  return unmaskCrc(view.readUInt32LE(p)) === crc32c(view.subarray(p + 6, p + HEADER_BYTES + length));
}

/** Whether the record at `p` is whole and matches its checksum with one bit of its length flipped back. */
function wholeWithFlippedLength(view: Buffer, p: number, length: number, end: number): boolean {
  for (let bit = 0; bit < 16; bit++) {
    const candidate = length ^ (1 << bit);
    if (p + HEADER_BYTES + candidate <= end && checksumMatches(view, p, candidate)) return true;
  }
  return false;
}

const MASK_DELTA = 0xa282ead8;

/** A CRC-32C as LevelDB stores it (masked, util/crc32c.h), unmasked. */
export function unmaskCrc(masked: number): number {
  const rot = (masked - MASK_DELTA) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}
