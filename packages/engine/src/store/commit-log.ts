/**
 * The node's commit log: one append-only file that `?commit` batches of
 * every shard copy of a node are made durable in, with one fdatasync per
 * round for all of them, instead of one fsync of each copy's LevelDB log.
 *
 * Why: each shard copy has its own LevelDB, so N concurrent `?commit`
 * writes spread over a node's shards cost one fsync per shard per round
 * (5 shards by default) — about one fsync per 4 writes at 50 connections,
 * 130 µs of kernel time each on the event loop's core (issue 24).
 *
 * How a `?commit` batch becomes durable (shard/batch.ts): it is written to
 * LevelDB unsynced, then its LevelDB operations are appended here as one
 * record and the writer is answered once the round holding it is synced.
 * Rounds: one in flight at a time; records that arrive meanwhile go out
 * together in the next (one writev, one fdatasync). After a crash or power
 * loss the shard's LevelDB holds a prefix of its batches (unsynced tails
 * are lost from the end: LevelDB's log is written in order, and a record
 * broken mid-log refuses the open, store/log-check.ts); when the node opens
 * its log again, before any copy, each copy named in the files left there
 * gets the records of its batches past that prefix re-applied (`replay`,
 * shard/recovery.ts), and the files are deleted.
 *
 * A record goes here only while every earlier batch of the copy is durable
 * (synced in LevelDB or here): otherwise an unsynced batch lost before it
 * would leave a gap the record cannot fill, and the batch is synced in
 * LevelDB as before (shard/batch.ts).
 *
 * Files: `commit-NNNNNN.log` in the log's directory; a process appends to a
 * new one. Past `rotateBytes` the log starts a new file, every open copy
 * syncs its LevelDB (`register`'s checkpoint; a closing copy syncs too), and
 * the older files are deleted. A file whose copy could not be brought up to
 * date at open (its LevelDB corrupt, say) stays for the next open.
 *
 * Record: u32 LE payload length, u32 LE CRC-32C of the payload, payload:
 * 16-byte copy token (a random ID stored in the copy's LevelDB, so a copy
 * re-created in the same directory never gets the old one's records),
 * u16 path length + path (the copy's directory, relative to the log's, so a
 * data directory moved whole keeps its log), f64 seq before and after
 * the batch, u32 operation count, then per operation u8 type (0 put, 1 del),
 * u32 key length + key, and for a put u32 value length + value. Reading a
 * file stops at the first record cut short or failing its CRC: a torn tail.
 */
import assert from 'node:assert/strict';
import { mkdir, open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { crc32c } from '@node-rs/crc32';

export type CommitLogOperation = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

export interface CommitLogRecord {
  token: Buffer;
  path: string;
  prevSeq: number;
  seq: number;
  operations: CommitLogOperation[];
}

export interface CommitLogOptions {
  /** Size of a file past which the log moves to a new one and deletes what no copy needs. Default 64 MiB. */
  rotateBytes?: number;
}

/**
 * Re-applies to the copy in `path` (absolute) its records, in order, that
 * its LevelDB lacks (shard/recovery.ts). Resolves with how many.
 */
export type ReplayCopy = (path: string, records: readonly CommitLogRecord[]) => Promise<number>;

/** What opening the log found in the files left by the last process. */
export interface CommitLogRecovery {
  files: number;
  records: number;
  /** Batches re-applied, each to a copy whose LevelDB had lost it. */
  replayed: number;
  /** Copies that could not be brought up to date: their files stay. */
  failed: { path: string; error: Error }[];
}

const FILE = /^commit-(\d{6,})\.log$/;
const HEADER_BYTES = 8;
const TOKEN_BYTES = 16;
export const COMMIT_LOG_DEFAULTS = { rotateBytes: 64 * 1024 * 1024 } as const;
/** The log's directory in a node's data directory: `#` is in no index name, so it is never an index's. */
export const COMMIT_LOG_DIRECTORY = '#commit-log';

const fileName = (n: number): string => `commit-${String(n).padStart(6, '0')}.log`;

interface Pending {
  record: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class CommitLog {
  private pending: Pending[] = [];
  private syncing = false;
  /** A write failed and could not be undone: records are refused (copies sync their LevelDB instead). */
  private broken: Error | undefined;
  private size = 0;
  private closed = false;
  /** Checkpoints of the open copies: each syncs its copy's LevelDB. */
  private readonly checkpoints = new Set<() => Promise<void>>();
  /** Files no longer appended to, deleted once every copy has synced its LevelDB. */
  private readonly retired: string[];
  private checkpointing: Promise<void> | undefined;
  /** Records synced, and the fdatasyncs that synced them: their ratio is what the log saves. */
  readonly counts = { records: 0, syncs: 0 };

  private constructor(private readonly dir: string, private file: FileHandle, private fileNumber: number, retired: string[],
    private readonly rotateBytes: number) {
    this.retired = retired;
  }

  /**
   * Open the log in `dir` (created if missing), before any copy of the node
   * opens: the files left by the last process are replayed (`replay`, each
   * copy's records in order) and deleted, and a new file started.
   */
  static async open(dir: string, replay: ReplayCopy, options: CommitLogOptions = {}): Promise<{ log: CommitLog; recovery: CommitLogRecovery }> {
    const rotateBytes = options.rotateBytes ?? COMMIT_LOG_DEFAULTS.rotateBytes;
    assert.ok(Number.isSafeInteger(rotateBytes) && rotateBytes > 0, 'rotateBytes must be a positive integer');
    await mkdir(dir, { recursive: true });
    const numbers = (await readdir(dir)).map((name) => FILE.exec(name)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
    const recovery = await recover(dir, numbers.map(fileName), replay);
    const next = (numbers.at(-1) ?? 0) + 1;
    const file = await open(join(dir, fileName(next)), 'a');
    await syncDirectory(dir);
    return { log: new CommitLog(dir, file, next, [], rotateBytes), recovery };
  }

  /** How records name the copy in `path`: relative to the log's directory. */
  copyPath(path: string): string {
    return relative(this.dir, resolve(path));
  }

  /**
   * Append a batch's operations; resolves once they are synced. Rejects if
   * the log cannot take it (the caller then syncs its LevelDB instead).
   */
  append(record: CommitLogRecord): Promise<void> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    if (this.closed) return Promise.reject(new Error('the commit log is closed'));
    const bytes = encodeRecord(record);
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ record: bytes, resolve, reject });
      if (!this.syncing) void this.rounds();
    });
  }

  /** Write and sync what is pending, round after round, until nothing is. */
  private async rounds(): Promise<void> {
    this.syncing = true;
    while (this.pending.length > 0) {
      if (this.size >= this.rotateBytes) await this.rotate();
      const taken = this.pending;
      this.pending = [];
      const records = taken.map((p) => p.record);
      const total = records.reduce((sum, r) => sum + r.length, 0);
      try {
        if (this.broken !== undefined) throw this.broken;
        const { bytesWritten } = await this.file.writev(records);
        if (bytesWritten !== total) throw new Error(`commit log: wrote ${bytesWritten} of ${total} bytes`);
        await this.file.datasync();
        this.counts.syncs++;
        this.counts.records += taken.length;
        this.size += total;
        for (const p of taken) p.resolve();
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        // Later records must not land behind a torn one (reading stops there): cut the file back, or stop using it.
        await this.file.truncate(this.size).catch(() => { this.broken ??= error; });
        for (const p of taken) p.reject(error);
      }
    }
    this.syncing = false;
  }

  /** Move to a new file; the older ones go once every open copy has synced its LevelDB. */
  private async rotate(): Promise<void> {
    const next = this.fileNumber + 1;
    let file: FileHandle;
    try {
      file = await open(join(this.dir, fileName(next)), 'a');
      await syncDirectory(this.dir);
    } catch {
      return; // Keep appending to the current file; the next round tries again.
    }
    await this.file.close().catch(() => undefined);
    this.retired.push(fileName(this.fileNumber));
    this.file = file;
    this.fileNumber = next;
    this.size = 0;
    this.checkpointing ??= this.checkpoint().finally(() => { this.checkpointing = undefined; });
  }

  private async checkpoint(): Promise<void> {
    const retired = [...this.retired];
    try {
      await Promise.all([...this.checkpoints].map((sync) => sync()));
    } catch {
      return; // A copy could not sync: its records stay, the next rotation tries again.
    }
    let removed = false;
    for (const name of retired) {
      try {
        await unlink(join(this.dir, name));
        this.retired.splice(this.retired.indexOf(name), 1);
        removed = true;
      } catch { /* left for the next checkpoint */ }
    }
    if (removed) await syncDirectory(this.dir).catch(() => undefined);
  }

  /** Run `sync` (sync the copy's LevelDB) before files that hold its records are deleted; returns the unregister. */
  register(sync: () => Promise<void>): () => void {
    this.checkpoints.add(sync);
    return () => { this.checkpoints.delete(sync); };
  }

  /**
   * Stop taking records once those pending are synced. If every copy that
   * wrote here has closed (each synced its LevelDB), the files are deleted:
   * the next start has nothing to replay; otherwise they stay for it.
   */
  async close(): Promise<void> {
    this.closed = true;
    while (this.syncing) await new Promise((resolve) => setImmediate(resolve));
    await this.checkpointing;
    await this.file.close();
    if (this.checkpoints.size > 0) return;
    for (const name of [...this.retired, fileName(this.fileNumber)]) await unlink(join(this.dir, name)).catch(() => undefined);
    await syncDirectory(this.dir).catch(() => undefined);
  }
}

/**
 * Replay the files left by the last process, every copy's records in order
 * (a copy's records may span files), and delete them unless a copy failed.
 */
async function recover(dir: string, files: readonly string[], replay: ReplayCopy): Promise<CommitLogRecovery> {
  const recovery: CommitLogRecovery = { files: files.length, records: 0, replayed: 0, failed: [] };
  if (files.length === 0) return recovery;
  const byCopy = new Map<string, CommitLogRecord[]>();
  for (const name of files) {
    for (const { payload } of frames(await readFile(join(dir, name)))) {
      const record = decodePayload(payload);
      let records = byCopy.get(record.path);
      if (records === undefined) byCopy.set(record.path, records = []);
      records.push(record);
      recovery.records++;
    }
  }
  // The copies side by side: a start after a crash opens each of their databases once more.
  await Promise.all([...byCopy].map(async ([path, records]) => {
    try {
      recovery.replayed += await replay(resolve(dir, path), records);
    } catch (err) {
      recovery.failed.push({ path: resolve(dir, path), error: err instanceof Error ? err : new Error(String(err)) });
    }
  }));
  if (recovery.failed.length > 0) return recovery;
  for (const name of files) await unlink(join(dir, name));
  await syncDirectory(dir);
  return recovery;
}

/** Complete records of a file, in order, up to the first torn or corrupt one. */
function* frames(bytes: Buffer): Generator<{ payload: Buffer }> {
  let offset = 0;
  while (offset + HEADER_BYTES <= bytes.length) {
    const length = bytes.readUInt32LE(offset);
    const crc = bytes.readUInt32LE(offset + 4);
    const end = offset + HEADER_BYTES + length;
    if (length < TOKEN_BYTES + 2 || end > bytes.length) return;
    const payload = bytes.subarray(offset + HEADER_BYTES, end);
    if (crc32c(payload) !== crc) return;
    yield { payload };
    offset = end;
  }
}

export function encodeRecord(record: CommitLogRecord): Buffer {
  assert.equal(record.token.length, TOKEN_BYTES, 'a copy token is 16 bytes');
  const path = Buffer.from(record.path, 'utf8');
  let length = TOKEN_BYTES + 2 + path.length + 8 + 8 + 4;
  for (const op of record.operations) length += 1 + 4 + op.key.length + (op.type === 'put' ? 4 + op.value.length : 0);
  const out = Buffer.allocUnsafe(HEADER_BYTES + length);
  let at = HEADER_BYTES;
  at += record.token.copy(out, at);
  at = out.writeUInt16LE(path.length, at);
  at += path.copy(out, at);
  at = out.writeDoubleLE(record.prevSeq, at);
  at = out.writeDoubleLE(record.seq, at);
  at = out.writeUInt32LE(record.operations.length, at);
  for (const op of record.operations) {
    at = out.writeUInt8(op.type === 'put' ? 0 : 1, at);
    at = out.writeUInt32LE(op.key.length, at);
    at += op.key.copy(out, at);
    if (op.type === 'put') {
      at = out.writeUInt32LE(op.value.length, at);
      at += op.value.copy(out, at);
    }
  }
  assert.equal(at, out.length);
  out.writeUInt32LE(length, 0);
  out.writeUInt32LE(crc32c(out.subarray(HEADER_BYTES)), 4);
  return out;
}

function decodePayload(payload: Buffer): CommitLogRecord {
  let at = 0;
  const token = Buffer.from(payload.subarray(at, at += TOKEN_BYTES));
  const pathBytes = payload.readUInt16LE(at);
  at += 2;
  const path = payload.toString('utf8', at, at += pathBytes);
  const prevSeq = payload.readDoubleLE(at);
  const seq = payload.readDoubleLE(at += 8);
  const count = payload.readUInt32LE(at += 8);
  at += 4;
  const operations: CommitLogOperation[] = [];
  for (let i = 0; i < count; i++) {
    const type = payload.readUInt8(at++);
    const keyBytes = payload.readUInt32LE(at);
    const key = Buffer.from(payload.subarray(at += 4, at += keyBytes));
    if (type === 0) {
      const valueBytes = payload.readUInt32LE(at);
      operations.push({ type: 'put', key, value: Buffer.from(payload.subarray(at += 4, at += valueBytes)) });
    } else {
      operations.push({ type: 'del', key });
    }
  }
  return { token, path, prevSeq, seq, operations };
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
