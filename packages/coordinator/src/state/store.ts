/**
 * DESIGN.md's cluster-state store: one document read with `get`, replaced
 * with `compareAndSet` and followed with `watch`, plus **leases** — values
 * that live only as long as their holder keeps a lease alive. The local
 * store (local-store.ts) implements it for one coordinator; the etcd store
 * (etcd-store.ts) for several, sharing it (leases are etcd's own); both pass
 * the same suite (store.conformance.ts). The etcd store reaches etcd over the
 * network: `health()` says whether it can now, and its calls reject with a
 * 503 when it cannot.
 *
 * A lease is granted with a TTL and lives until `ttlMs` after its grant or
 * last keep-alive, or until it is revoked. When it ends, every value put
 * under it disappears, and watchers see each value deleted, then the lease
 * ended. An ended lease never comes back: keep-alive answers false, and the
 * holder must grant a new one (its values are gone, as everyone saw).
 */

export type LeaseId = string;

/** What a leased value may hold: plain JSON (it crosses etcd as text). */
export type LeasedValue = string | number | boolean | null | readonly LeasedValue[] | { readonly [key: string]: LeasedValue };

export interface LeasedEntry {
  key: string;
  value: LeasedValue;
  lease: LeaseId;
}

/** Why a leased value disappeared, or a lease ended. */
export type LeaseEndCause = 'expired' | 'revoked';

export type LeaseEvent =
  | { type: 'put'; key: string; value: LeasedValue; lease: LeaseId }
  | { type: 'delete'; key: string; lease: LeaseId; cause: LeaseEndCause | 'deleted' }
  /** After the delete events of its values. */
  | { type: 'ended'; lease: LeaseId; cause: LeaseEndCause };

export interface StateStoreHealth {
  connected: boolean;
  /** Why not, when not connected. */
  reason?: string;
}

export interface PutLeasedOptions {
  /** Set only if no value holds the key (first one wins: an election). */
  ifAbsent?: boolean;
}

export interface StateStore<T> {
  get(): T;
  /** Replace the state if `expected` is still current; resolves once durable. */
  compareAndSet(expected: T, next: T): Promise<boolean>;
  /** `listener` gets every new state; returns the function that stops it. */
  watch(listener: (state: T) => void): () => void;
  /**
   * Read the state from the store itself rather than from what this store
   * has heard of it: afterwards `get()` holds every change acknowledged
   * before the call (another coordinator's too). True when that was newer.
   */
  refresh(): Promise<boolean>;
  /**
   * A number that changes with every change of the state, the same in every
   * process sharing the store (etcd's mod revision of the state key): a
   * decision made from the state at one revision is known stale elsewhere.
   * Absent for a store of one process.
   */
  revision?(): number;
  /**
   * Before a change this process made (`compareAndSet`) resolves, `fence`
   * runs with its revision: the elected coordinator's followers take it
   * first (cluster/follower-leases.ts). Absent for a store of one process.
   */
  fenceCommits?(fence: (revision: number) => Promise<void>): void;

  /** A new lease, alive for `ttlMs` unless kept alive. */
  grantLease(ttlMs: number): Promise<LeaseId>;
  /** Extend the lease to `ttlMs` from now; false once it expired or was revoked. */
  keepAlive(lease: LeaseId): Promise<boolean>;
  /** End the lease now: its values disappear. Nothing happens for a lease already ended. */
  revokeLease(lease: LeaseId): Promise<void>;
  /**
   * Set `key` for as long as `lease` lives (a key already held moves to this
   * lease). False, and nothing set, when the lease has ended or, with
   * `ifAbsent`, when another value holds the key.
   */
  putLeased(key: string, value: LeasedValue, lease: LeaseId, options?: PutLeasedOptions): Promise<boolean>;
  /** Remove a leased value (its lease lives on); false if there was none. */
  deleteLeased(key: string): Promise<boolean>;
  getLeased(key: string): LeasedEntry | undefined;
  /** Leased values whose key starts with `prefix`, by key. */
  listLeased(prefix: string): LeasedEntry[];
  /** `listener` gets every put and delete of a leased value and every lease that ends; returns the function that stops it. */
  watchLeases(listener: (event: LeaseEvent) => void): () => void;

  /** Whether the store can read and write now: a coordinator cut off from it must stop deciding (readiness). */
  health(): StateStoreHealth;

  /** Stop timers and connections; the store is not used after. */
  close(): Promise<void>;
}
