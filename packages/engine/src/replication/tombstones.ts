/**
 * Origins of documents a replica deleted, kept for a while: a change can
 * reach a replica twice and out of order (a catch-up page read before a live
 * deletion arrives after it), and without the deletion's origin an older put
 * would bring the document back.
 *
 * Kept in memory for TOMBSTONE_TTL_MS: a late copy of a change only comes from
 * a page or call read in this process's lifetime, and a catch-up after a
 * restart re-reads the log in order (the deletion follows the put in the same
 * stream). Insertion order is expiry order, so pruning walks from the front.
 */
import type { Origin } from './origin.js';

/** How long a deletion's origin is kept; far above an RPC call's deadline (30 s by default). */
export const TOMBSTONE_TTL_MS = 120_000;

interface Tombstone {
  origin: Origin;
  expiresAt: number;
}

export class Tombstones {
  private readonly byKey = new Map<string, Tombstone>();

  constructor(private readonly ttlMs: number = TOMBSTONE_TTL_MS) {}

  get size(): number {
    return this.byKey.size;
  }

  get(key: string, now: number): Origin | undefined {
    const tombstone = this.byKey.get(key);
    return tombstone !== undefined && tombstone.expiresAt > now ? tombstone.origin : undefined;
  }

  set(key: string, origin: Origin, now: number): void {
    this.byKey.delete(key);
    this.byKey.set(key, { origin, expiresAt: now + this.ttlMs });
    this.prune(now);
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }

  clear(): void {
    this.byKey.clear();
  }

  private prune(now: number): void {
    for (const [key, tombstone] of this.byKey) {
      if (tombstone.expiresAt > now) return;
      this.byKey.delete(key);
    }
  }
}
