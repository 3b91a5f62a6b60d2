/**
 * Stored content (API.md §6): append-only volume files beside a shard's
 * LevelDB database, `<shard>/content/<n>.volume`. A blob is written once, as
 * one frame, and never rewritten; a change writes a new frame and the
 * document is relinked to it, unlinking only drops the link.
 *
 *   frame = magic "TSB1" (4) | size (u64 BE, 8) | crc32 (u32 BE, 4) | bytes
 *
 * A link records (volume, offset, size, crc32) too, so a read checks the
 * frame's header against the link and the bytes against the checksum: a torn
 * or corrupted blob is refused (`content_corrupted`, 500), never served.
 *
 * Crash safety: the frame is written (and, for `?commit`, fdatasync'ed)
 * before the LevelDB batch that links it, so a link never points at a frame
 * that was not completely handed to the OS. A frame half-written when the
 * process died sits unlinked at the end of its volume; appends go after it
 * (the volume's size is read from the file at open).
 *
 * Appends are serialised per store (one volume written at a time); reads use
 * their own file handles and run concurrently with appends.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { blobLength, blobParts, type BlobBytes } from '@tessera/documents';
import { TesseraError } from '@tessera/errors';
import { isDiskFull, storageFull } from '../errors.js';

/** Where a blob lives, as the document's content entry records it. */
export interface BlobLocation {
  /** Volume number (1-based). */
  volume: number;
  /** Offset of the blob's frame in the volume. */
  offset: number;
  /** Bytes of the blob (the frame header excluded). */
  size: number;
  /** CRC-32 of the blob's bytes. */
  crc: number;
}

export interface ContentVolumesOptions {
  /** A volume that reached this size is closed and the next one started. Default 1 GiB. */
  volumeBytesMax?: number | undefined;
}

export const CONTENT_DEFAULTS = {
  volumeBytesMax: 1024 * 1024 * 1024,
} as const;

/** Bytes read per step when a blob is checked or streamed. */
export const CONTENT_CHUNK_BYTES = 1024 * 1024;

const MAGIC = 0x54534231; // "TSB1"
const HEADER_BYTES = 16;
const VOLUME_SUFFIX = '.volume';
/**
 * Streamed reads (`readRange`) land in frames from a small pool: a fresh
 * 1 MiB buffer per read made V8 run a full mark-compact every few reads
 * (external memory pressure), measured at 45% of a GET's time. The consumer
 * done with a chunk — the HTTP server, once the socket has written it —
 * calls `chunk[RELEASE_BUFFER]()`; a chunk never released (sent over the
 * WebSocket transport, kept by DUMP) is garbage like any other.
 */
export const RELEASE_BUFFER = Symbol.for('tessera.release');
const POOL_FRAME_BYTES = HEADER_BYTES + CONTENT_CHUNK_BYTES;
const POOL_FRAMES_MAX = 16;
const framePool: Buffer[] = [];

function takeFrame(bytes: number): Buffer {
  if (bytes > POOL_FRAME_BYTES) return Buffer.allocUnsafe(bytes);
  return framePool.pop() ?? Buffer.allocUnsafeSlow(POOL_FRAME_BYTES);
}

function returnFrame(frame: Buffer): void {
  if (frame.length === POOL_FRAME_BYTES && framePool.length < POOL_FRAMES_MAX) framePool.push(frame);
}

/** `frame[start, end)`, releasable back to the pool once (a pool frame only). */
function pooledView(frame: Buffer, start: number, end: number): Buffer {
  const view = frame.subarray(start, end);
  if (frame.length === POOL_FRAME_BYTES) {
    let released = false;
    Object.defineProperty(view, RELEASE_BUFFER, {
      value: () => {
        if (released) return;
        released = true;
        returnFrame(frame);
      },
    });
  }
  return view;
}

/** Read handles kept open at most (one per volume, least recently used closed first). */
const READ_HANDLES_MAX = 16;

export const contentErrors = {
  corrupted: (where: BlobLocation, why: string) =>
    new TesseraError('content_corrupted', 500,
      `Stored content is corrupted (volume ${where.volume}, offset ${where.offset}): ${why}; the blob is not served`),
  storage: (cause: unknown) => (isDiskFull(cause)
    ? storageFull(cause)
    : new TesseraError('storage_unavailable', 503, `Content storage unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })),
  invalidLocation: (why: string) => new TesseraError('invalid_content_location', 400, `Invalid content location: ${why}`),
};

export class ContentVolumes {
  /** The volume appends go to, its handle (opened on the first append) and size. */
  private volume: number;
  private size: number;
  private writer: FileHandle | undefined;
  /** The tail of the append chain: appends run one after another. */
  private appending: Promise<unknown> = Promise.resolve();
  private readonly readers = new Map<number, Promise<FileHandle>>();
  private closed = false;

  private constructor(private readonly dir: string, private readonly volumeBytesMax: number, volume: number, size: number) {
    this.volume = volume;
    this.size = size;
  }

  /** Open the volumes in `dir` (created on the first append). */
  static async open(dir: string, options: ContentVolumesOptions = {}): Promise<ContentVolumes> {
    const volumeBytesMax = options.volumeBytesMax ?? CONTENT_DEFAULTS.volumeBytesMax;
    if (!Number.isSafeInteger(volumeBytesMax) || volumeBytesMax < HEADER_BYTES) {
      throw new TesseraError('invalid_option', 500, `Invalid content option 'volumeBytesMax': must be an integer ≥ ${HEADER_BYTES}`);
    }
    let last = 1;
    let size = 0;
    try {
      const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return [] as string[];
        throw err;
      });
      for (const name of names) {
        const n = volumeNumber(name);
        if (n !== undefined && n > last) last = n;
      }
      const handle = await open(join(dir, volumeName(last)), 'r').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
      if (handle !== undefined) {
        size = (await handle.stat()).size;
        await handle.close();
      }
    } catch (err) {
      throw contentErrors.storage(err);
    }
    return new ContentVolumes(dir, volumeBytesMax, last, size);
  }

  /**
   * Append one blob as a frame and return where it is. With `sync` the
   * volume is fdatasync'ed before this resolves (a `?commit` write).
   */
  append(bytes: BlobBytes, sync: boolean): Promise<BlobLocation> {
    const run = this.appending.then(() => this.appendNow(bytes, sync));
    this.appending = run.catch(() => undefined);
    return run;
  }

  private async appendNow(bytes: BlobBytes, sync: boolean): Promise<BlobLocation> {
    if (this.closed) throw contentErrors.storage(new Error('content volumes are closed'));
    const parts = blobParts(bytes);
    const size = blobLength(bytes);
    const frameBytes = HEADER_BYTES + size;
    try {
      let created = false;
      if (this.size > 0 && this.size + frameBytes > this.volumeBytesMax) {
        await this.writer?.close();
        this.writer = undefined;
        this.volume++;
        this.size = 0;
      }
      if (this.writer === undefined) {
        await mkdir(this.dir, { recursive: true });
        this.writer = await open(join(this.dir, volumeName(this.volume)), 'a');
        const stat = await this.writer.stat();
        created = stat.size === 0;
        this.size = stat.size;
      }
      let crc = 0;
      for (const part of parts) crc = crc32(part, crc);
      const header = Buffer.allocUnsafe(HEADER_BYTES);
      header.writeUInt32BE(MAGIC, 0);
      header.writeBigUInt64BE(BigInt(size), 4);
      header.writeUInt32BE(crc, 12);
      const offset = this.size;
      const frame = [header, ...parts];
      let written = (await this.writer.writev(frame)).bytesWritten;
      // Whatever was written counts: the next frame goes after it, even a torn one.
      this.size += written;
      // A short write (a disk filling up) is retried for the rest, which fails with the reason (ENOSPC → 507).
      while (written < frameBytes) {
        const more = (await this.writer.writev(piecesAfter(frame, written))).bytesWritten;
        if (more === 0) throw new Error(`short write (${written} of ${frameBytes} bytes)`);
        written += more;
        this.size += more;
      }
      if (sync) {
        await this.writer.datasync();
        if (created) syncDirectory(this.dir);
      }
      return { volume: this.volume, offset, size, crc };
    } catch (err) {
      // The handle may be unusable (disk full, I/O error): reopen on the next append, at the file's real size.
      await this.writer?.close().catch(() => undefined);
      this.writer = undefined;
      throw contentErrors.storage(err);
    }
  }

  /** The whole blob, checked: frame and bytes in one read. For blobs up to a few MiB; larger ones go through `readRange`. */
  read(where: BlobLocation): Promise<Buffer> {
    return this.readWhole(where, false);
  }

  private async readWhole(where: BlobLocation, pooled: boolean): Promise<Buffer> {
    validateLocation(where);
    const handle = await this.reader(where);
    const size = HEADER_BYTES + where.size;
    const frame = pooled ? takeFrame(size) : Buffer.allocUnsafe(size);
    try {
      await readFully(handle, frame.subarray(0, size), where.offset, where);
      checkHeader(frame, where);
      if (crc32(frame.subarray(HEADER_BYTES, size)) !== where.crc) throw contentErrors.corrupted(where, 'checksum mismatch');
    } catch (err) {
      if (pooled) returnFrame(frame);
      throw err;
    }
    return pooled ? pooledView(frame, HEADER_BYTES, size) : frame.subarray(HEADER_BYTES, size);
  }

  /**
   * Bytes [from, from + length) of a blob. With `verify`, the whole blob's
   * checksum is checked first (read in CONTENT_CHUNK_BYTES steps, bounded
   * memory), so a streamed answer starts only for a blob known good.
   */
  async readRange(where: BlobLocation, from: number, length: number, verify: boolean): Promise<Buffer> {
    validateLocation(where);
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(length) || from < 0 || length < 0 || from + length > where.size) {
      throw contentErrors.invalidLocation(`range ${from}+${length} is outside a blob of ${where.size} bytes`);
    }
    // The whole blob, checked: one read does both.
    if (verify && from === 0 && length === where.size && length <= CONTENT_CHUNK_BYTES) return this.readWhole(where, true);
    const handle = await this.reader(where);
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    await readFully(handle, header, where.offset, where);
    checkHeader(header, where);
    if (verify) await this.verify(handle, where);
    const frame = takeFrame(length);
    try {
      await readFully(handle, frame.subarray(0, length), where.offset + HEADER_BYTES + from, where);
    } catch (err) {
      returnFrame(frame);
      throw err;
    }
    return pooledView(frame, 0, length);
  }

  private async verify(handle: FileHandle, where: BlobLocation): Promise<void> {
    const chunk = Buffer.allocUnsafe(Math.min(CONTENT_CHUNK_BYTES, where.size));
    let crc = 0;
    for (let done = 0; done < where.size;) {
      const n = Math.min(chunk.length, where.size - done);
      const view = chunk.subarray(0, n);
      await readFully(handle, view, where.offset + HEADER_BYTES + done, where);
      crc = crc32(view, crc);
      done += n;
    }
    if (crc !== where.crc) throw contentErrors.corrupted(where, 'checksum mismatch');
  }

  private reader(where: BlobLocation): Promise<FileHandle> {
    if (this.closed) return Promise.reject(contentErrors.storage(new Error('content volumes are closed')));
    let handle = this.readers.get(where.volume);
    if (handle === undefined) {
      if (this.readers.size >= READ_HANDLES_MAX) {
        const [oldest, opening] = this.readers.entries().next().value as [number, Promise<FileHandle>];
        this.readers.delete(oldest);
        void opening.then((h) => h.close()).catch(() => undefined);
      }
      handle = open(join(this.dir, volumeName(where.volume)), 'r').catch((err: NodeJS.ErrnoException) => {
        this.readers.delete(where.volume);
        throw err.code === 'ENOENT' ? contentErrors.corrupted(where, 'the volume file is missing') : contentErrors.storage(err);
      });
      this.readers.set(where.volume, handle);
    } else {
      // Most recently used last.
      this.readers.delete(where.volume);
      this.readers.set(where.volume, handle);
    }
    return handle;
  }

  /** Finish the appends in flight and close every file. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.appending;
    this.closed = true;
    await this.writer?.close().catch(() => undefined);
    this.writer = undefined;
    const readers = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(readers.map((h) => h.then((handle) => handle.close()).catch(() => undefined)));
  }
}

/** The frame header at the start of `frame` must be the one the link names. */
function checkHeader(frame: Buffer, where: BlobLocation): void {
  if (frame.readUInt32BE(0) !== MAGIC) throw contentErrors.corrupted(where, 'no blob frame at this offset');
  if (frame.readBigUInt64BE(4) !== BigInt(where.size)) throw contentErrors.corrupted(where, 'frame size differs from the link');
  if (frame.readUInt32BE(12) !== where.crc) throw contentErrors.corrupted(where, 'frame checksum differs from the link');
}

/** What is left of `pieces` after their first `skip` bytes. */
export function piecesAfter(pieces: readonly Uint8Array[], skip: number): Uint8Array[] {
  const rest: Uint8Array[] = [];
  for (const piece of pieces) {
    if (skip >= piece.length) {
      skip -= piece.length;
      continue;
    }
    rest.push(skip === 0 ? piece : piece.subarray(skip));
    skip = 0;
  }
  return rest;
}

function volumeName(n: number): string {
  return `${String(n).padStart(6, '0')}${VOLUME_SUFFIX}`;
}

function volumeNumber(name: string): number | undefined {
  if (!name.endsWith(VOLUME_SUFFIX)) return undefined;
  const n = Number(name.slice(0, -VOLUME_SUFFIX.length));
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

export function validateLocation(where: BlobLocation): void {
  const ok = where !== null && typeof where === 'object' &&
    Number.isSafeInteger(where.volume) && where.volume >= 1 &&
    Number.isSafeInteger(where.offset) && where.offset >= 0 &&
    Number.isSafeInteger(where.size) && where.size >= 0 &&
    Number.isInteger(where.crc) && where.crc >= 0 && where.crc <= 0xffffffff;
  if (!ok) throw contentErrors.invalidLocation('volume, offset, size and crc must be non-negative integers');
}

async function readFully(handle: FileHandle, into: Buffer, position: number, where: BlobLocation): Promise<void> {
  let done = 0;
  try {
    while (done < into.length) {
      const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
      if (bytesRead === 0) throw contentErrors.corrupted(where, 'the volume ends inside the blob (torn write)');
      done += bytesRead;
    }
  } catch (err) {
    throw err instanceof TesseraError ? err : contentErrors.storage(err);
  }
}

/** A new volume's directory entry must survive a power loss too before a synced link points into it. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    // fsync on a directory descriptor: supported on Linux; elsewhere best effort.
    fsyncSync(fd);
  } catch {
    // Not every platform can open or fsync a directory.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
