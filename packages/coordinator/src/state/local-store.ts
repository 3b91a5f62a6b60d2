/**
 * Cluster state on the coordinator's disk: one JSON document replaced
 * atomically (write a temporary file, fsync, rename, fsync the directory), so
 * a crash leaves either the old or the new state, never half of one. Writes
 * are serialised. DESIGN.md's store interface (store.ts) for the
 * single-coordinator case; its leases live in memory (lease-table.ts).
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LeaseTable, type LeaseTableLimits } from './lease-table.js';
import type { LeaseEvent, LeaseId, LeasedEntry, LeasedValue, PutLeasedOptions, StateStore, StateStoreHealth } from './store.js';

export type { StateStore } from './store.js';

export class LocalStateStore<T> implements StateStore<T> {
  private state: T;
  private writing: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(state: T) => void>();
  private readonly leases: LeaseTable;

  private constructor(private readonly file: string, initial: T, limits: LeaseTableLimits | undefined) {
    this.state = initial;
    this.leases = new LeaseTable(limits);
  }

  static async open<T>(file: string, initial: T, limits?: LeaseTableLimits): Promise<LocalStateStore<T>> {
    await mkdir(dirname(file), { recursive: true });
    let state = initial;
    try {
      state = JSON.parse(await readFile(file, 'utf8')) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return new LocalStateStore(file, state, limits);
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
