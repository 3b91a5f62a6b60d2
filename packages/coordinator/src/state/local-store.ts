/**
 * Cluster state on the coordinator's disk: a base (the whole state, one JSON
 * document: `file`) and a log of the changes since (`file.log`). Each
 * compare-and-set appends one delta — the top-level keys, or the entries of
 * a top-level object (one index of `indexes`), whose value changed — and
 * fdatasyncs the log once: a schema that grows costs its index's entry, not
 * the whole state. Once the log outgrows its bound, the base is rewritten
 * atomically (write a temporary file, fsync, rename, fsync the directory)
 * and the log emptied. Opening replays the base, then the log. Writes are
 * serialised. DESIGN.md's store interface (store.ts) for the
 * single-coordinator case; its leases live in memory (lease-table.ts).
 *
 * A delta names what changed by reference: the state is never changed in
 * place, every update builds a new one sharing what it kept
 * (indexes/registry.ts `snapshot()`), so an entry still `===` its old value
 * is unchanged.
 *
 * Log record: payload length (u32 LE) | CRC-32 of those 4 bytes (u32 LE) |
 * CRC-32 of the payload (u32 LE) | payload (the delta's JSON). A record cut
 * short by the end of the file, or the last one failing its payload's
 * checksum, is what a coordinator killed while appending leaves: it was
 * never acknowledged, and is dropped (and cut off the log at open). Any
 * other mismatch — a length whose checksum fails, a record before the last
 * one failing its own — refuses the open, as a base JSON cannot parse does.
 */
import { readFileSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { LeaseTable, type LeaseTableLimits } from './lease-table.js';
import type { LeaseEvent, LeaseId, LeasedEntry, LeasedValue, PutLeasedOptions, StateStore, StateStoreHealth } from './store.js';

export type { StateStore } from './store.js';

const RECORD_HEADER_BYTES = 12;
/** The log is folded into the base once it holds this many times the base's bytes… */
const LOG_BYTES_PER_BASE_BYTE = 4;
/** …and at least this many: a small state is not rewritten every few changes. */
const LOG_BYTES_MIN = 1024 * 1024;
/** Deltas name changes down to the entries of top-level objects (an index of `indexes`). */
const DELTA_DEPTH = 2;

/** One change of a delta: the path's value set, or removed when absent. An empty path replaces the whole state. */
type Change = [path: string[], value?: unknown];

export class LocalStateStore<T> implements StateStore<T> {
  private state: T;
  private writing: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(state: T) => void>();
  private readonly leases: LeaseTable;
  private baseBytes: number;
  /** The log's bytes, all whole records. */
  private logBytes: number;
  /** An append failed midway: the log may end in part of a record, and is emptied (by a compaction) before the next. */
  private logTorn = false;

  private constructor(private readonly file: string, loaded: LoadedState<T>, limits: LeaseTableLimits | undefined) {
    this.state = loaded.state;
    this.baseBytes = loaded.baseBytes;
    this.logBytes = loaded.logBytes;
    this.leases = new LeaseTable(limits);
  }

  static async open<T>(file: string, initial: T, limits?: LeaseTableLimits): Promise<LocalStateStore<T>> {
    await mkdir(dirname(file), { recursive: true });
    const [base, log] = await Promise.all([readFile(file).catch(undefinedIfMissing), readFile(logFileOf(file)).catch(undefinedIfMissing)]);
    const loaded = loadState(file, base, log, initial);
    if (loaded.baseBytes === 0) loaded.baseBytes = await writeAtomically(file, loaded.state);
    // Created here if missing, its directory entry made durable once; a torn last record is cut off,
    // so that what is appended next follows whole records.
    await withLog(file, async (log) => {
      if ((await log.stat()).size > loaded.logBytes) await cutLog(log, loaded.logBytes);
    });
    await syncDirectory(dirname(file));
    return new LocalStateStore(file, loaded, limits);
  }

  get(): T {
    return this.state;
  }

  async compareAndSet(expected: T, next: T): Promise<boolean> {
    const attempt = this.writing.then(async () => {
      if (this.state !== expected) return false;
      // Folded before the append, while the log leads exactly to the base written.
      if (this.logTorn || this.logBytes > Math.max(this.baseBytes * LOG_BYTES_PER_BASE_BYTE, LOG_BYTES_MIN)) await this.compact();
      const changes = changesBetween(this.state, next);
      if (changes.length > 0) {
        const record = logRecord(JSON.stringify(changes));
        try {
          await withLog(this.file, async (log) => {
            // A short write (a disk filling up) is a failed change: the log ends in part of a record.
            const { bytesWritten } = await log.write(record);
            if (bytesWritten !== record.length) throw new Error(`short write of the cluster state's log (${bytesWritten} of ${record.length} bytes)`);
            await log.datasync();
          });
        } catch (err) {
          this.logTorn = true;
          throw err;
        }
        this.logBytes += record.length;
      }
      this.state = next;
      for (const listener of this.listeners) listener(next);
      return true;
    });
    this.writing = attempt.catch(() => undefined);
    return attempt;
  }

  /**
   * The state as the new base, then an empty log. A crash in between leaves
   * the new base and the old log, which replays to that same base: each
   * change sets or removes a value outright, and the log's last word on
   * every path it touches is the state it led to.
   */
  private async compact(): Promise<void> {
    this.baseBytes = await writeAtomically(this.file, this.state);
    await withLog(this.file, (log) => cutLog(log, 0));
    this.logBytes = 0;
    this.logTorn = false;
  }

  /** Nothing to catch up with: this store is the only writer of its file, and `get()` is what it wrote. */
  async refresh(): Promise<boolean> {
    return false;
  }

  watch(listener: (state: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async grantLease(ttlMs: number): Promise<LeaseId> {
    return this.leases.grant(ttlMs);
  }

  async keepAlive(lease: LeaseId): Promise<boolean> {
    return this.leases.keepAlive(lease);
  }

  async revokeLease(lease: LeaseId): Promise<void> {
    this.leases.revoke(lease);
  }

  async putLeased(key: string, value: LeasedValue, lease: LeaseId, options?: PutLeasedOptions): Promise<boolean> {
    return this.leases.put(key, value, lease, options);
  }

  async deleteLeased(key: string): Promise<boolean> {
    return this.leases.delete(key);
  }

  getLeased(key: string): LeasedEntry | undefined {
    return this.leases.get(key);
  }

  listLeased(prefix: string): LeasedEntry[] {
    return this.leases.list(prefix);
  }

  watchLeases(listener: (event: LeaseEvent) => void): () => void {
    return this.leases.watch(listener);
  }

  /** Always connected: the state is on this coordinator's own disk. */
  health(): StateStoreHealth {
    return { connected: true };
  }

  async close(): Promise<void> {
    await this.writing;
    this.leases.close();
    this.listeners.clear();
  }
}

/** The state a local store's files hold (base and log), for tools and tests; `initial` when there are none. */
export function readLocalState<T>(file: string, initial: T): T {
  const read = (path: string): Buffer | undefined => {
    try {
      return readFileSync(path);
    } catch (err) {
      return undefinedIfMissing(err);
    }
  };
  return loadState(file, read(file), read(logFileOf(file)), initial).state;
}

/** Make `state` the whole of a local store's files (a restore): a new base, and no log. */
export async function writeLocalState(file: string, state: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeAtomically(file, state);
  await rm(logFileOf(file), { force: true });
  await syncDirectory(dirname(file));
}

function logFileOf(file: string): string {
  return `${file}.log`;
}

/** `use` the log of `file` opened for appending (created if missing; no descriptor is held between changes). */
async function withLog<R>(file: string, use: (log: FileHandle) => Promise<R>): Promise<R> {
  const log = await open(logFileOf(file), 'a');
  try {
    return await use(log);
  } finally {
    await log.close();
  }
}

/** Cut the log at `bytes`, durably. */
async function cutLog(log: FileHandle, bytes: number): Promise<void> {
  await log.truncate(bytes);
  await log.datasync();
}

interface LoadedState<T> {
  state: T;
  /** The base's size, 0 when there is none. */
  baseBytes: number;
  /** The log's whole records: a torn last one excluded. */
  logBytes: number;
}

/** The base (or `initial`) with the log's deltas applied; a SyntaxError names the file and what is corrupted. */
function loadState<T>(file: string, base: Buffer | undefined, log: Buffer | undefined, initial: T): LoadedState<T> {
  let state: unknown = initial;
  if (base !== undefined) {
    try {
      state = JSON.parse(base.toString('utf8'));
    } catch (err) {
      throw corrupted(file, (err as Error).message);
    }
  }
  let p = 0;
  while (log !== undefined && log.length - p >= RECORD_HEADER_BYTES) {
    const length = log.readUInt32LE(p);
    if (crc32(log.subarray(p, p + 4)) !== log.readUInt32LE(p + 4)) throw corrupted(logFileOf(file), `record length checksum mismatch at byte ${p}`);
    const end = p + RECORD_HEADER_BYTES + length;
    if (end > log.length) break;
    const payload = log.subarray(p + RECORD_HEADER_BYTES, end);
    if (crc32(payload) !== log.readUInt32LE(p + 8)) {
      if (end === log.length) break;
      throw corrupted(logFileOf(file), `record checksum mismatch at byte ${p}`);
    }
    let changes: Change[];
    try {
      changes = JSON.parse(payload.toString('utf8')) as Change[];
    } catch (err) {
      throw corrupted(logFileOf(file), `record at byte ${p}: ${(err as Error).message}`);
    }
    // The initial state is the caller's (a shared constant): changed only in a copy.
    if (state === initial) state = structuredClone(initial);
    state = applyChanges(state, changes);
    p = end;
  }
  return { state: state as T, baseBytes: base?.length ?? 0, logBytes: p };
}

/** A corrupted state refuses the open, as JSON.parse refused a corrupted base before there was a log. */
function corrupted(file: string, why: string): SyntaxError {
  return new SyntaxError(`The cluster state in ${file} is corrupted (${why}); refusing to open it`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function ownValue(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** The changes from `before` to `after`, down to DELTA_DEPTH; an undefined value is an absent one, as in JSON. */
function changesBetween(before: unknown, after: unknown, path: string[] = [], out: Change[] = []): Change[] {
  if (before === after) return out;
  if (path.length < DELTA_DEPTH && isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      if (before[key] !== undefined && ownValue(after, key) === undefined) out.push([[...path, key]]);
    }
    for (const [key, value] of Object.entries(after)) {
      if (value !== undefined) changesBetween(ownValue(before, key), value, [...path, key], out);
    }
  } else {
    out.push([path, after]);
  }
  return out;
}

/** `state` with `changes` applied, in place (it is the store's own, parsed from its files). */
function applyChanges(state: unknown, changes: Change[]): unknown {
  for (const [path, ...value] of changes) {
    if (path.length === 0) {
      state = value[0];
      continue;
    }
    let parent = state as Record<string, unknown>;
    for (const key of path.slice(0, -1)) {
      const child = ownValue(parent, key);
      if (isObject(child)) {
        parent = child;
      } else {
        // Removed later in the log than this change (a crash while the log was being emptied): rebuilt as it was.
        const created: Record<string, unknown> = {};
        defineOwn(parent, key, created);
        parent = created;
      }
    }
    const key = path[path.length - 1]!;
    if (value.length === 0) delete parent[key];
    else defineOwn(parent, key, value[0]);
  }
  return state;
}

/** Set an own property, even one named `__proto__` (plain assignment would change the prototype). */
function defineOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function logRecord(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + payload.length);
  record.writeUInt32LE(payload.length, 0);
  record.writeUInt32LE(crc32(record.subarray(0, 4)), 4);
  record.writeUInt32LE(crc32(payload), 8);
  payload.copy(record, RECORD_HEADER_BYTES);
  return record;
}

/** A file's absence read as undefined; any other error thrown. */
function undefinedIfMissing(err: unknown): undefined {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw err;
}

/** Replace `file` with `state`'s JSON, whole or not at all; its size in bytes. */
async function writeAtomically(file: string, state: unknown): Promise<number> {
  const bytes = Buffer.from(JSON.stringify(state, null, 1), 'utf8');
  const tmp = join(dirname(file), `.${Date.now()}-${process.pid}.tmp`);
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  await syncDirectory(dirname(file));
  return bytes.length;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
