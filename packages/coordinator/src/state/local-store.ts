/**
 * Cluster state on the coordinator's disk: one JSON document replaced
 * atomically (write a temporary file, fsync, rename, fsync the directory), so
 * a crash leaves either the old or the new state, never half of one. Writes
 * are serialised. DESIGN.md's store interface (get, compare-and-set, watch)
 * starts here with the single-coordinator case.
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface StateStore<T> {
  get(): T;
  /** Replace the state if `expected` is still current; resolves once durable. */
  compareAndSet(expected: T, next: T): Promise<boolean>;
  watch(listener: (state: T) => void): () => void;
}

export class LocalStateStore<T> implements StateStore<T> {
  private state: T;
  private writing: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(state: T) => void>();

  private constructor(private readonly file: string, initial: T) {
    this.state = initial;
  }

  static async open<T>(file: string, initial: T): Promise<LocalStateStore<T>> {
    await mkdir(dirname(file), { recursive: true });
    let state = initial;
    try {
      state = JSON.parse(await readFile(file, 'utf8')) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return new LocalStateStore(file, state);
  }

  get(): T {
    return this.state;
  }

  async compareAndSet(expected: T, next: T): Promise<boolean> {
    const attempt = this.writing.then(async () => {
      if (this.state !== expected) return false;
      await writeAtomically(this.file, JSON.stringify(next, null, 1));
      this.state = next;
      for (const listener of this.listeners) listener(next);
      return true;
    });
    this.writing = attempt.catch(() => undefined);
    return attempt;
  }

  watch(listener: (state: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = join(dirname(file), `.${Date.now()}-${process.pid}.tmp`);
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
