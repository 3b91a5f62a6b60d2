/**
 * The leases of the local store, in memory: a lease held by this coordinator
 * means nothing to the next one, so leases and their values end with the
 * process, as if they had all expired at once (an etcd store keeps them for
 * their TTL instead).
 *
 * Expiry is exact whatever the timer does: every operation first ends the
 * leases past their deadline. One timer, not one per lease, fires at
 * `earliest`, a lower bound of every deadline: a keep-alive only moves a
 * deadline later, so it never re-arms the timer (an early fire just finds
 * nothing to end and re-arms), and operations before `earliest` scan nothing.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { stateErrors } from './errors.js';
import type { LeaseEndCause, LeaseEvent, LeaseId, LeasedEntry, LeasedValue, PutLeasedOptions } from './store.js';

export interface LeaseTableLimits {
  /** Leases alive at once (a lease per node and per coordinator: far fewer). */
  leasesMax: number;
  /** Leased values at once. */
  leasedValuesMax: number;
}

export const LEASE_TABLE_LIMITS: Readonly<LeaseTableLimits> = Object.freeze({ leasesMax: 10_000, leasedValuesMax: 100_000 });

/** Longest lease: past it a setTimeout would fire at once (2^31 − 1 ms). */
const LEASE_TTL_MS_MAX = 2 ** 31 - 1;

interface Lease {
  id: LeaseId;
  ttlMs: number;
  expiresAt: number;
  keys: Set<string>;
}

export class LeaseTable {
  private readonly leases = new Map<LeaseId, Lease>();
  private readonly values = new Map<string, { value: LeasedValue; lease: LeaseId }>();
  private readonly listeners = new Set<(event: LeaseEvent) => void>();
  private timer: NodeJS.Timeout | undefined;
  /** No lease expires before this (Infinity: no lease). */
  private earliest = Infinity;
  private closed = false;

  constructor(private readonly limits: LeaseTableLimits = LEASE_TABLE_LIMITS, private readonly now: () => number = Date.now) {}

  grant(ttlMs: number): LeaseId {
    assert.ok(Number.isSafeInteger(ttlMs) && ttlMs >= 1 && ttlMs <= LEASE_TTL_MS_MAX, `a lease TTL is an integer from 1 to ${LEASE_TTL_MS_MAX} ms`);
    this.expire();
    if (this.leases.size >= this.limits.leasesMax) throw stateErrors.leasesFull(this.limits.leasesMax);
    const lease: Lease = { id: randomUUID(), ttlMs, expiresAt: this.now() + ttlMs, keys: new Set() };
    this.leases.set(lease.id, lease);
    this.schedule(lease.expiresAt);
    return lease.id;
  }

  keepAlive(id: LeaseId): boolean {
    this.expire();
    const lease = this.leases.get(id);
    if (lease === undefined) return false;
    lease.expiresAt = this.now() + lease.ttlMs;
    return true;
  }

  revoke(id: LeaseId): void {
    this.expire();
    const lease = this.leases.get(id);
    if (lease !== undefined) this.end(lease, 'revoked');
  }

  put(key: string, value: LeasedValue, id: LeaseId, options: PutLeasedOptions = {}): boolean {
    assert.ok(typeof key === 'string' && key.length > 0, 'a leased key is a non-empty string');
    this.expire();
    const lease = this.leases.get(id);
    if (lease === undefined) return false;
    const held = this.values.get(key);
    if (held !== undefined && options.ifAbsent === true) return false;
    if (held === undefined && this.values.size >= this.limits.leasedValuesMax) throw stateErrors.leasedValuesFull(this.limits.leasedValuesMax);
    if (held !== undefined) this.leases.get(held.lease)?.keys.delete(key);
    // A copy: a caller changing its object later must not change what watchers saw.
    const stored = structuredClone(value);
    this.values.set(key, { value: stored, lease: id });
    lease.keys.add(key);
    this.emit({ type: 'put', key, value: stored, lease: id });
    return true;
  }

  delete(key: string): boolean {
    this.expire();
    const held = this.values.get(key);
    if (held === undefined) return false;
    this.values.delete(key);
    this.leases.get(held.lease)?.keys.delete(key);
    this.emit({ type: 'delete', key, lease: held.lease, cause: 'deleted' });
    return true;
  }

  get(key: string): LeasedEntry | undefined {
    this.expire();
    const held = this.values.get(key);
    return held === undefined ? undefined : { key, value: held.value, lease: held.lease };
  }

  list(prefix: string): LeasedEntry[] {
    this.expire();
    return leasedEntriesUnder(this.values, prefix);
  }

  watch(listener: (event: LeaseEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stop the timer; the leases end with the store, unannounced (nobody is left to hear). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.leases.clear();
    this.values.clear();
    this.listeners.clear();
  }

  /** End every lease past its deadline (`force`: scan even before `earliest`, the timer's own call). */
  private expire(force = false): void {
    const now = this.now();
    if (now < this.earliest && !force) return;
    for (const lease of [...this.leases.values()]) {
      // A listener may have ended it meanwhile (it called back into the table).
      if (lease.expiresAt <= now && this.leases.get(lease.id) === lease) this.end(lease, 'expired');
    }
    let earliest = Infinity;
    for (const lease of this.leases.values()) if (lease.expiresAt < earliest) earliest = lease.expiresAt;
    this.earliest = Infinity;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule(earliest);
  }

  private end(lease: Lease, cause: LeaseEndCause): void {
    this.leases.delete(lease.id);
    const keys = [...lease.keys];
    lease.keys.clear();
    for (const key of keys) {
      if (this.values.get(key)?.lease !== lease.id) continue;
      this.values.delete(key);
      this.emit({ type: 'delete', key, lease: lease.id, cause });
    }
    this.emit({ type: 'ended', lease: lease.id, cause });
  }

  /** Make sure the timer fires by `at`. */
  private schedule(at: number): void {
    if (this.closed || at >= this.earliest) return;
    this.earliest = at;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.expire(true);
    }, Math.max(0, at - this.now()));
    // Leases alone do not keep the process alive.
    this.timer.unref();
  }

  private emit(event: LeaseEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }
}

/** `listLeased` of every store: the values whose key starts with `prefix`, by key (code unit order). */
export function leasedEntriesUnder(values: ReadonlyMap<string, { value: LeasedValue; lease: LeaseId }>, prefix: string): LeasedEntry[] {
  const out: LeasedEntry[] = [];
  for (const [key, held] of values) if (key.startsWith(prefix)) out.push({ key, value: held.value, lease: held.lease });
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
