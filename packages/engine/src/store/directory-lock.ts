/**
 * An exclusive lock on a data directory, taken before a process serves or
 * writes anything there and held until it ends: two processes on one
 * directory would each write the cluster state and open the same shard
 * databases.
 *
 * Built on LevelDB's own lock: a small, empty database at `<dir>/lock/` is
 * opened and kept open, and LevelDB holds its LOCK file with fcntl(F_SETLK)
 * (LockFileEx on Windows). That lock belongs to the kernel: it is released
 * when the process ends however it ends, kill -9 included, so there is never
 * a stale lock to clean up and no pid to trust (a pid file outlives its
 * process, and its pid may by then be another process's). It works between
 * containers that share a volume, where pids mean nothing.
 *
 * Who holds it is written beside the LOCK, in `<dir>/lock/holder.json` (pid,
 * host, command, start time), for the message of the process refused.
 * LevelDB leaves files it does not name alone.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { TesseraError } from '@tessera/errors';

/** The lock database, inside the directory locked. */
export const LOCK_DIRECTORY = 'lock';
const HOLDER_FILE = 'holder.json';

/** Who holds a directory's lock. */
export interface LockHolder {
  pid: number;
  host: string;
  /** What runs, e.g. `tessera serve --port 8880`. */
  command: string;
  /** ISO 8601. */
  startedAt: string;
}

export interface DirectoryLock {
  readonly dir: string;
  /** Release the lock (the process's end releases it too). */
  release(): Promise<void>;
}

/** Another process holds the directory's lock: nothing was done. */
export function directoryLocked(dir: string, holder: LockHolder | undefined): TesseraError {
  const who = holder === undefined
    ? 'another process (it has not said which)'
    : `pid ${holder.pid} on ${holder.host} (${holder.command}, since ${holder.startedAt})`;
  return new TesseraError('directory_locked', 409,
    `Data directory ${dir} is in use by ${who}: stop that process first, or give this one another data directory`,
    { details: { dir, holder } });
}

/**
 * Take `dir`'s lock, creating the directory if missing; fails with
 * `directory_locked` (naming the holder) when another process has it.
 */
export async function lockDirectory(dir: string, holder: LockHolder): Promise<DirectoryLock> {
  const lockDir = join(dir, LOCK_DIRECTORY);
  await mkdir(lockDir, { recursive: true });
  // The smallest database LevelDB makes: nothing is ever written to it.
  const db = new ClassicLevel(lockDir, { createIfMissing: true, writeBufferSize: 4096, cacheSize: 0 });
  try {
    await db.open();
  } catch (err) {
    if (isLocked(err)) throw directoryLocked(dir, await readHolder(lockDir));
    throw err;
  }
  const holderFile = join(lockDir, HOLDER_FILE);
  const tmp = `${holderFile}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(holder)}\n`);
  await rename(tmp, holderFile);
  let released = false;
  return {
    dir,
    async release() {
      if (released) return;
      released = true;
      await rm(holderFile, { force: true });
      await db.close();
    },
  };
}

/** classic-level reports a held LOCK as LEVEL_LOCKED: the open's own error, or its cause. */
function isLocked(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  return e?.code === 'LEVEL_LOCKED' || e?.cause?.code === 'LEVEL_LOCKED';
}

async function readHolder(lockDir: string): Promise<LockHolder | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(lockDir, HOLDER_FILE), 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return undefined;
    return { pid: parsed.pid, host: parsed.host, command: String(parsed.command ?? ''), startedAt: String(parsed.startedAt ?? '') };
  } catch {
    // Not written yet (the holder is starting), or damaged: the refusal still stands, without a name.
    return undefined;
  }
}
