/**
 * Cluster state in etcd, shared by several coordinators (DESIGN.md: "replication
 * is ours, consensus is etcd's"). The store interface of store.ts over the
 * npm `etcd3` client.
 *
 * Keys, under `prefix` (one per cluster):
 * - `<prefix>/state`: the document, JSON. Missing means `initial` (created by
 *   the first compare-and-set). One key, so one etcd request carries all of
 *   it: etcd refuses requests over `--max-request-bytes` (1.5 MiB by default;
 *   scripts/etcd.mjs starts etcd with 32 MiB), and this store refuses a state
 *   over `stateBytesMax` (31 MiB by default) before sending it (507
 *   `cluster_state_too_large`).
 * - `<prefix>/leased/<key>`: a leased value, JSON, attached to an etcd lease.
 *
 * Reads are synchronous from a cache: a range read of `<prefix>/` at open,
 * then one etcd watch of the prefix from the revision read. Every change the
 * store makes itself is applied to the cache as soon as etcd answers, with
 * the revision etcd gave it; the watch event of the same change then arrives
 * at or below a revision the cache knows and is ignored, so watchers see each
 * change once. A compare-and-set that lost its race reads the current state
 * in the same transaction, so the caller's next `get()` is the winner's.
 *
 * Leases are etcd leases, whose TTL counts whole seconds: a TTL is rounded up
 * to the next second, at least 1 s (etcd itself may raise a short TTL to its
 * minimum, 1.5 s → 2 s with default election settings).
 *
 * What etcd tells another client when a leased value disappears is only "deleted
 * at revision R". The cause in `watchLeases` events is therefore found so:
 * `revoked` for a lease this store revoked; otherwise the lease is looked up —
 * alive means the value was `deleted` (deleteLeased, here or elsewhere), gone
 * means `expired` (a lease another store revoked also reads `expired`). An
 * `ended` event is sent once per lease: for the leases this store granted
 * (a timer at their deadline asks etcd whether they are gone), and for any
 * lease once its values disappeared with it; a lease of another store that
 * held no value here ends unannounced.
 *
 * Failure: every etcd call has a deadline (`callTimeoutMs`) and rejects with a
 * 503 `state_store_unavailable` past it; `health()` says whether the watch is
 * connected and the last call reached etcd. The client reconnects by itself
 * (backoff capped at 1 s); after a reconnect the cache reads `<prefix>/` again
 * and applies what it missed, as events.
 */
import assert from 'node:assert/strict';
import type { Etcd3, IKeyValue, IWatchResponse } from 'etcd3';
import { isEtcdLeaseInvalid, loadEtcdLibrary } from './etcd-client.js';
import { delay, PrefixWatch, RECONNECT_BACKOFF_MS_MAX, withTimeout } from './etcd-watch.js';
import { stateErrors } from './errors.js';
import { LEASE_TABLE_LIMITS, leasedEntriesUnder, type LeaseTableLimits } from './lease-table.js';
import { SharedRound } from './shared-round.js';
import type {
  LeaseEndCause, LeaseEvent, LeaseId, LeasedEntry, LeasedValue, PutLeasedOptions, StateStore, StateStoreHealth,
} from './store.js';

export interface EtcdStateStoreOptions<T> {
  /** etcd client URLs (`http://127.0.0.1:2379`). */
  endpoints: string | string[];
  /** Root of this cluster's keys (`/tessera/prod`); a trailing `/` is dropped. */
  prefix: string;
  /** The state while `<prefix>/state` does not exist. */
  initial: T;
  /** Longest wait for one etcd call, ms (default 3000). */
  callTimeoutMs?: number;
  /** Largest state document, bytes of JSON (default 31 MiB: under the 32 MiB request limit scripts/etcd.mjs gives etcd). */
  stateBytesMax?: number;
  /** Bounds of the leases this store grants and of the leased values it caches (those of the local store). */
  limits?: LeaseTableLimits;
}

export const ETCD_CALL_TIMEOUT_MS = 3000;
export const ETCD_STATE_BYTES_MAX = 31 * 1024 * 1024;
/** Ended leases remembered (to skip late events under them and announce each end once): as many as the leases one store may hold. */
const ENDED_LEASES_REMEMBERED = LEASE_TABLE_LIMITS.leasesMax;
/** After a lease's deadline, how long before asking again whether etcd ended it (its expiry sweep runs every 500 ms). */
const LEASE_END_RECHECK_MS = 250;

interface CachedLeased {
  value: LeasedValue;
  lease: LeaseId;
  /** etcd's mod revision of the key: an event at or below it is old news. */
  modRevision: number;
}

/** What every etcd call of this store carries: its deadline (gRPC call options). */
interface CallOptions {
  deadline: number;
}


export class EtcdStateStore<T> implements StateStore<T> {
  private readonly root: string;
  private readonly stateKey: string;
  private readonly leasedRoot: string;
  private readonly callTimeoutMs: number;
  private readonly stateBytesMax: number;
  private readonly limits: LeaseTableLimits;

  private state: T;
  /** Mod revision of the state key; 0 while it does not exist. */
  private stateModRevision = 0;
  /** Highest revision applied to the state (a delete leaves a revision, not a mod revision). */
  private stateSeenRevision = 0;
  private readonly stateListeners = new Set<(state: T) => void>();
  /** The state read from etcd (`refresh`): one in flight, the calls made meanwhile share the next. */
  private readonly reads = new SharedRound(() => this.readState());

  private readonly leased = new Map<string, CachedLeased>();
  private readonly keysByLease = new Map<LeaseId, Set<string>>();
  /** Keys this store deleted ahead of the watch → the delete's revision: older events for them are skipped. */
  private readonly tombstones = new Map<string, number>();
  private readonly leaseListeners = new Set<(event: LeaseEvent) => void>();
  /** Leases known ended (oldest first, bounded), and whether their `ended` was sent. */
  private readonly endedLeases = new Map<LeaseId, { cause: LeaseEndCause; announced: boolean }>();
  /** Leases this store is revoking: their values' deletes read `revoked`. */
  private readonly revoking = new Set<LeaseId>();
  /** Leases this store granted and not seen end → the timer that asks etcd at their deadline. */
  private readonly ownLeases = new Map<LeaseId, NodeJS.Timeout>();

  private readonly watcher: PrefixWatch;
  /** Why a change from etcd could not be applied, until the prefix is read again. */
  private applyFailureReason: string | undefined;
  /** Why the last etcd call did not reach etcd, until one does. */
  private callFailureReason: string | undefined;
  private closed = false;

  private constructor(private readonly client: Etcd3, private readonly options: EtcdStateStoreOptions<T>) {
    this.root = options.prefix.replace(/\/+$/, '') + '/';
    this.stateKey = `${this.root}state`;
    this.leasedRoot = etcdLeasedKey(options.prefix, '');
    this.callTimeoutMs = options.callTimeoutMs ?? ETCD_CALL_TIMEOUT_MS;
    this.stateBytesMax = options.stateBytesMax ?? ETCD_STATE_BYTES_MAX;
    this.limits = options.limits ?? LEASE_TABLE_LIMITS;
    this.state = options.initial;
    this.watcher = new PrefixWatch(client, this.root, this.callTimeoutMs, {
      readAll: () => this.readAll(),
      apply: (response) => this.applyWatchResponse(response),
      failed: (reason) => {
        this.applyFailureReason = reason;
      },
    });
  }

  /** Connects, reads `<prefix>/` and starts watching it; rejects (503) if etcd does not answer within `callTimeoutMs`. */
  static async open<T>(options: EtcdStateStoreOptions<T>): Promise<EtcdStateStore<T>> {
    assert.ok(options.prefix.replace(/\/+$/, '').length > 0, 'an etcd state store needs a non-empty key prefix');
    const callTimeoutMs = options.callTimeoutMs ?? ETCD_CALL_TIMEOUT_MS;
    const { etcd3: { Etcd3 }, cockatiel: { ExponentialBackoff, noop } } = await loadEtcdLibrary();
    const client = new Etcd3({
      hosts: options.endpoints,
      dialTimeout: callTimeoutMs,
      // No retries or circuit breaker inside the client: a call either reaches
      // etcd before its deadline or fails (a retried transaction could apply
      // twice, and an open breaker would keep failing after etcd is back).
      faultHandling: {
        host: () => noop,
        global: noop,
        // etcd3 types this slot as a first backoff step (it calls next() on it to start over).
        watchBackoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: RECONNECT_BACKOFF_MS_MAX }).next(),
      },
      grpcOptions: {
        // The state is one message: allow it whole (gRPC's default is 4 MiB).
        'grpc.max_receive_message_length': -1,
        'grpc.max_send_message_length': -1,
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': RECONNECT_BACKOFF_MS_MAX,
        // Notice a dead connection without traffic; etcd refuses pings more often than every 5 s.
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': callTimeoutMs,
      },
    });
    const store = new EtcdStateStore(client, options);
    try {
      const revision = await store.readAll();
      await store.watcher.start(revision + 1);
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  get(): T {
    return this.state;
  }

  revision(): number {
    return this.stateModRevision;
  }

  private commitFence: ((revision: number) => Promise<void>) | undefined;

  fenceCommits(fence: (revision: number) => Promise<void>): void {
    this.commitFence = fence;
  }

  async compareAndSet(expected: T, next: T): Promise<boolean> {
    if (expected !== this.state) return false;
    const text = JSON.stringify(next);
    const bytes = Buffer.byteLength(text);
    if (bytes > this.stateBytesMax) throw stateErrors.stateTooLarge(bytes, this.stateBytesMax);
    const key = Buffer.from(this.stateKey);
    const compare = this.stateModRevision === 0
      ? { key, target: 'Create' as const, result: 'Equal' as const, create_revision: 0 }
      : { key, target: 'Mod' as const, result: 'Equal' as const, mod_revision: this.stateModRevision };
    const response = await this.call('replace the cluster state', (options) => this.client.kv.txn({
      compare: [compare],
      success: [{ request_put: { key, value: Buffer.from(text) } }],
      // The loser reads the winner's state in the same transaction: its next get() is current.
      failure: [{ request_range: { key } }],
    }, options));
    const revision = Number(response.header.revision);
    if (response.succeeded) {
      this.applyOwnState(next, revision);
      if (this.commitFence !== undefined) await this.commitFence(revision);
      return true;
    }
    this.applyStateKey(response.responses[0]?.response_range.kvs[0], revision);
    return false;
  }

  /**
   * A linearizable read of the state key: etcd answers with every change it
   * acknowledged, which the watch may not have brought yet. One read at a
   * time: the calls made while one is in flight share the next, which starts
   * after them (so it sees what they must see), so a burst of reads costs
   * etcd one request per round trip.
   */
  refresh(): Promise<boolean> {
    return this.reads.join();
  }

  /**
   * The key's revision first, without its value (`keys_only`): the whole
   * state — every index's schema in one document, megabytes in a big
   * cluster — is read only when it changed since this store last saw it,
   * not on every read a coordinator that is not elected serves.
   */
  private async readState(): Promise<boolean> {
    const key = Buffer.from(this.stateKey);
    const before = this.stateSeenRevision;
    const head = await this.call('read the cluster state', (options) => this.client.kv.range({ key, keys_only: true }, options));
    const seen = head.kvs[0];
    if (seen !== undefined && Number(seen.mod_revision) <= before) return false;
    const response = seen === undefined ? head : await this.call('read the cluster state', (options) => this.client.kv.range({ key }, options));
    this.applyStateKey(response.kvs[0], Number(response.header.revision));
    return this.stateSeenRevision > before;
  }

  watch(listener: (state: T) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** An etcd lease of `ttlMs` rounded up to whole seconds (at least 1 s). */
  async grantLease(ttlMs: number): Promise<LeaseId> {
    assert.ok(Number.isSafeInteger(ttlMs) && ttlMs >= 1, 'a lease TTL is a positive integer of ms');
    if (this.ownLeases.size >= this.limits.leasesMax) throw stateErrors.leasesFull(this.limits.leasesMax);
    const ttlSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
    const response = await this.call('grant a lease', (options) => this.client.leaseClient.leaseGrant({ TTL: ttlSeconds }, options));
    const lease = response.ID;
    this.ownLeases.set(lease, this.checkLeaseEndAt(lease, Number(response.TTL) * 1000));
    return lease;
  }

  async keepAlive(lease: LeaseId): Promise<boolean> {
    if (this.endedLeases.has(lease)) return false;
    const response = await this.call('keep a lease alive', async (options) => {
      const stream = await this.client.leaseClient.leaseKeepAlive(options);
      try {
        return await new Promise<{ TTL: string }>((resolve, reject) => {
          stream.on('data', resolve);
          // Stays attached: an error after the answer must not go unhandled.
          stream.on('error', reject);
          stream.write({ ID: lease });
        });
      } finally {
        stream.end();
      }
    });
    const ttlSeconds = Number(response.TTL);
    if (ttlSeconds <= 0) {
      this.leaseGone(lease);
      return false;
    }
    if (this.ownLeases.has(lease)) this.ownLeases.set(lease, this.checkLeaseEndAt(lease, ttlSeconds * 1000));
    return true;
  }

  async revokeLease(lease: LeaseId): Promise<void> {
    if (this.endedLeases.has(lease)) return;
    this.revoking.add(lease);
    try {
      await this.call('revoke a lease', (options) => this.client.leaseClient.leaseRevoke({ ID: lease }, options));
    } catch (err) {
      // Already ended (or never was one): nothing to do, as the interface says.
      if (!isEtcdLeaseInvalid(err)) throw err;
      this.leaseGone(lease);
      return;
    } finally {
      this.revoking.delete(lease);
    }
    this.markEnded(lease, 'revoked');
    // Every value under the lease is gone as of the revoke: the watch's deletes will find them removed already.
    for (const key of [...(this.keysByLease.get(lease) ?? [])]) this.removeLeased(key, 'revoked');
    this.announceEnd(lease);
  }

  async putLeased(key: string, value: LeasedValue, lease: LeaseId, options: PutLeasedOptions = {}): Promise<boolean> {
    assert.ok(typeof key === 'string' && key.length > 0, 'a leased key is a non-empty string');
    if (this.endedLeases.has(lease)) return false;
    if (!this.leased.has(key) && this.leased.size >= this.limits.leasedValuesMax) throw stateErrors.leasedValuesFull(this.limits.leasedValuesMax);
    const text = JSON.stringify(value);
    const etcdKey = Buffer.from(this.leasedRoot + key);
    const put = { key: etcdKey, value: Buffer.from(text), lease };
    let revision: number;
    try {
      if (options.ifAbsent === true) {
        const response = await this.call('elect a leased value', (callOptions) => this.client.kv.txn({
          compare: [{ key: etcdKey, target: 'Create', result: 'Equal', create_revision: 0 }],
          success: [{ request_put: put }],
          // The holder, read with the refusal: getLeased shows who won.
          failure: [{ request_range: { key: etcdKey } }],
        }, callOptions));
        revision = Number(response.header.revision);
        if (!response.succeeded) {
          const holder = response.responses[0]?.response_range.kvs[0];
          if (holder !== undefined) this.applyLeasedPut(holder);
          return false;
        }
      } else {
        const response = await this.call('put a leased value', (callOptions) => this.client.kv.put(put, callOptions));
        revision = Number(response.header.revision);
      }
    } catch (err) {
      if (!isEtcdLeaseInvalid(err)) throw err;
      this.leaseGone(lease);
      return false;
    }
    // A copy through JSON, as every other store reader gets: a caller changing its object later changes nothing here.
    this.applyLeased(key, { value: JSON.parse(text) as LeasedValue, lease, modRevision: revision });
    return true;
  }

  async deleteLeased(key: string): Promise<boolean> {
    const response = await this.call('delete a leased value', (options) =>
      this.client.kv.deleteRange({ key: Buffer.from(this.leasedRoot + key), prev_kv: true }, options));
    if (Number(response.deleted) === 0) return false;
    const revision = Number(response.header.revision);
    this.tombstones.set(key, revision);
    const cached = this.leased.get(key);
    if (cached !== undefined && cached.modRevision < revision) this.removeLeased(key, 'deleted');
    return true;
  }

  getLeased(key: string): LeasedEntry | undefined {
    const cached = this.leased.get(key);
    return cached === undefined ? undefined : { key, value: cached.value, lease: cached.lease };
  }

  listLeased(prefix: string): LeasedEntry[] {
    return leasedEntriesUnder(this.leased, prefix);
  }

  watchLeases(listener: (event: LeaseEvent) => void): () => void {
    this.leaseListeners.add(listener);
    return () => this.leaseListeners.delete(listener);
  }

  health(): StateStoreHealth {
    if (this.closed) return { connected: false, reason: 'the store is closed' };
    if (this.watcher.downReason !== undefined) return { connected: false, reason: `etcd watch down: ${this.watcher.downReason}` };
    if (this.callFailureReason !== undefined) return { connected: false, reason: this.callFailureReason };
    if (this.applyFailureReason !== undefined) return { connected: false, reason: this.applyFailureReason };
    return { connected: true };
  }

  /** Cancels the watch and the lease timers and closes the connection; leases live on in etcd until their TTL. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.ownLeases.values()) clearTimeout(timer);
    this.ownLeases.clear();
    await this.watcher.close();
    this.client.close();
    this.stateListeners.clear();
    this.leaseListeners.clear();
  }

  // ---- etcd calls ----

  /** Runs one etcd call with a deadline; anything but an answer from etcd rejects with a 503 and marks the store disconnected. */
  private async call<R>(what: string, run: (options: CallOptions) => Promise<R>): Promise<R> {
    if (this.closed) throw stateErrors.unavailable(what, 'the store is closed', undefined);
    const running = run({ deadline: Date.now() + this.callTimeoutMs });
    try {
      const result = await withTimeout(running, this.callTimeoutMs);
      this.callFailureReason = undefined;
      return result;
    } catch (err) {
      // An answer from etcd: it is reachable; the caller decides what it means.
      if (isEtcdLeaseInvalid(err)) {
        this.callFailureReason = undefined;
        throw err;
      }
      const reason = err instanceof Error ? err.message : String(err);
      this.callFailureReason = `etcd call failed: ${reason}`;
      throw stateErrors.unavailable(what, reason, err);
    }
  }

  /** Whether etcd still holds the lease (TTL -1: not found, ended). */
  private async leaseAlive(lease: LeaseId): Promise<boolean> {
    const response = await this.call('look up a lease', (options) => this.client.leaseClient.leaseTimeToLive({ ID: lease }, options));
    return Number(response.TTL) !== -1;
  }

  /** `leaseAlive`, asked again until etcd answers (while the watch waits for it, nothing newer can arrive anyway). */
  private async leaseAliveEventually(lease: LeaseId): Promise<boolean> {
    for (;;) {
      if (this.closed) return true;
      try {
        return await this.leaseAlive(lease);
      } catch {
        if (this.closed) return true;
        await delay(RECONNECT_BACKOFF_MS_MAX);
      }
    }
  }

  // ---- the cache ----

  /** Range-reads `<prefix>/` and applies it as the truth at its revision; returns that revision. */
  private async readAll(): Promise<number> {
    const start = Buffer.from(this.root);
    const response = await this.call('read the cluster state', (options) =>
      this.client.kv.range({ key: start, range_end: prefixEnd(start) }, options));
    const revision = Number(response.header.revision);
    let stateKv: IKeyValue | undefined;
    const present = new Set<string>();
    for (const kv of response.kvs) {
      const key = kv.key.toString();
      if (key === this.stateKey) stateKv = kv;
      else if (key.startsWith(this.leasedRoot)) {
        present.add(key.slice(this.leasedRoot.length));
        this.applyLeasedPut(kv);
      }
    }
    this.applyStateKey(stateKv, revision);
    for (const [key, cached] of [...this.leased]) {
      if (present.has(key) || cached.modRevision > revision) continue;
      // Gone by `revision`: whatever older event the watch replays for it is stale.
      this.tombstones.set(key, revision);
      await this.removeLeasedWithCause(key, cached);
    }
    this.applyFailureReason = undefined;
    return revision;
  }

  private async applyWatchResponse(response: IWatchResponse): Promise<void> {
    let highest = 0;
    for (const event of response.events) {
      const key = event.kv.key.toString();
      const revision = Number(event.kv.mod_revision);
      highest = Math.max(highest, revision);
      if (key === this.stateKey) {
        this.applyStateKey(event.type === 'Put' ? event.kv : undefined, revision);
      } else if (key.startsWith(this.leasedRoot)) {
        if (event.type === 'Put') this.applyLeasedPut(event.kv);
        else await this.applyLeasedDelete(key.slice(this.leasedRoot.length), revision);
      }
    }
    // Once the watch is past a tombstone's revision, no older event for its key can come.
    for (const [key, revision] of this.tombstones) if (revision < highest) this.tombstones.delete(key);
  }

  /** The state key as etcd has it at `revision` (undefined: absent). */
  private applyStateKey(kv: IKeyValue | undefined, revision: number): void {
    if (kv === undefined) {
      if (revision <= this.stateSeenRevision || this.stateModRevision === 0) return;
      this.stateModRevision = 0;
      this.stateSeenRevision = revision;
      this.setState(this.options.initial);
      return;
    }
    const modRevision = Number(kv.mod_revision);
    if (modRevision <= this.stateSeenRevision) return;
    this.stateModRevision = modRevision;
    this.stateSeenRevision = modRevision;
    this.setState(JSON.parse(kv.value.toString()) as T);
  }

  /** This store's own successful compare-and-set: the caller's object becomes `get()`, even if the watch or a loser's read got there first. */
  private applyOwnState(next: T, revision: number): void {
    if (revision < this.stateSeenRevision) return;
    const news = revision > this.stateSeenRevision;
    this.stateModRevision = revision;
    this.stateSeenRevision = revision;
    if (news) this.setState(next);
    else this.state = next;
  }

  private setState(state: T): void {
    this.state = state;
    for (const listener of [...this.stateListeners]) listener(state);
  }

  private applyLeasedPut(kv: IKeyValue): void {
    const key = kv.key.toString().slice(this.leasedRoot.length);
    this.applyLeased(key, { value: JSON.parse(kv.value.toString()) as LeasedValue, lease: kv.lease, modRevision: Number(kv.mod_revision) });
  }

  /** A value etcd held at `entry.modRevision`, unless the cache knows a later one. */
  private applyLeased(key: string, entry: CachedLeased): void {
    if ((this.tombstones.get(key) ?? 0) >= entry.modRevision) return;
    if ((this.leased.get(key)?.modRevision ?? 0) >= entry.modRevision) return;
    // A put under a lease known ended is followed by its delete: skip both.
    if (this.endedLeases.has(entry.lease)) return;
    this.setLeased(key, entry);
  }

  private async applyLeasedDelete(key: string, revision: number): Promise<void> {
    if ((this.tombstones.get(key) ?? 0) >= revision) {
      if (this.tombstones.get(key) === revision) this.tombstones.delete(key);
      return;
    }
    const cached = this.leased.get(key);
    if (cached === undefined || cached.modRevision >= revision) return;
    await this.removeLeasedWithCause(key, cached);
  }

  /** Removes a value etcd deleted by someone else's hand (or a lease's end), finding out which. */
  private async removeLeasedWithCause(key: string, cached: CachedLeased): Promise<void> {
    const lease = cached.lease;
    let cause: LeaseEndCause | 'deleted';
    const ended = this.endedLeases.get(lease);
    if (ended !== undefined) cause = ended.cause;
    else if (this.revoking.has(lease)) cause = 'revoked';
    else cause = (await this.leaseAliveEventually(lease)) ? 'deleted' : 'expired';
    // The cache may have moved on while etcd was asked.
    if (this.leased.get(key) !== cached) return;
    if (cause !== 'deleted') this.markEnded(lease, cause);
    this.removeLeased(key, cause);
    if (cause !== 'deleted') this.announceEnd(lease);
  }

  private setLeased(key: string, entry: CachedLeased): void {
    const previous = this.leased.get(key);
    if (previous !== undefined) this.keysByLease.get(previous.lease)?.delete(key);
    this.leased.set(key, entry);
    let keys = this.keysByLease.get(entry.lease);
    if (keys === undefined) this.keysByLease.set(entry.lease, (keys = new Set()));
    keys.add(key);
    this.emit({ type: 'put', key, value: entry.value, lease: entry.lease });
    // The key moved off a lease that ended meanwhile: that end may now be complete.
    if (previous !== undefined && previous.lease !== entry.lease) this.announceEnd(previous.lease);
  }

  private removeLeased(key: string, cause: LeaseEndCause | 'deleted'): void {
    const cached = this.leased.get(key);
    if (cached === undefined) return;
    this.leased.delete(key);
    const keys = this.keysByLease.get(cached.lease);
    keys?.delete(key);
    if (keys?.size === 0) this.keysByLease.delete(cached.lease);
    this.emit({ type: 'delete', key, lease: cached.lease, cause });
  }

  // ---- lease ends ----

  /** Asks etcd at `afterMs` whether the lease ended (it ends values here through the watch, but a lease with no value sends nothing). */
  private checkLeaseEndAt(lease: LeaseId, afterMs: number): NodeJS.Timeout {
    clearTimeout(this.ownLeases.get(lease));
    const timer = setTimeout(() => void this.checkOwnLease(lease), afterMs);
    // Lease timers alone do not keep the process alive.
    timer.unref();
    return timer;
  }

  private async checkOwnLease(lease: LeaseId): Promise<void> {
    if (this.closed || !this.ownLeases.has(lease)) return;
    let alive: boolean;
    try {
      alive = await this.leaseAlive(lease);
    } catch {
      if (this.ownLeases.has(lease)) this.ownLeases.set(lease, this.checkLeaseEndAt(lease, RECONNECT_BACKOFF_MS_MAX));
      return;
    }
    if (alive) {
      // Past its deadline but not yet swept by etcd, or kept alive meanwhile: ask again soon.
      if (this.ownLeases.has(lease)) this.ownLeases.set(lease, this.checkLeaseEndAt(lease, LEASE_END_RECHECK_MS));
      return;
    }
    this.leaseGone(lease);
  }

  /** etcd says the lease no longer exists, for a cause not seen here. */
  private leaseGone(lease: LeaseId): void {
    if (this.endedLeases.has(lease)) return;
    this.markEnded(lease, this.revoking.has(lease) ? 'revoked' : 'expired');
    this.announceEnd(lease);
  }

  private markEnded(lease: LeaseId, cause: LeaseEndCause): void {
    clearTimeout(this.ownLeases.get(lease));
    this.ownLeases.delete(lease);
    if (this.endedLeases.has(lease)) return;
    this.endedLeases.set(lease, { cause, announced: false });
    if (this.endedLeases.size > ENDED_LEASES_REMEMBERED) this.endedLeases.delete(this.endedLeases.keys().next().value!);
  }

  /** Sends `ended` once the lease is known ended and none of its values is left here (after their deletes, as the interface says). */
  private announceEnd(lease: LeaseId): void {
    const ended = this.endedLeases.get(lease);
    if (ended === undefined || ended.announced || (this.keysByLease.get(lease)?.size ?? 0) > 0) return;
    ended.announced = true;
    this.emit({ type: 'ended', lease, cause: ended.cause });
  }

  private emit(event: LeaseEvent): void {
    for (const listener of [...this.leaseListeners]) listener(event);
  }
}

/** The etcd key of the leased value `key` under `prefix`: where a process without a store (a shard node, node-leases.ts) puts one. */
export function etcdLeasedKey(prefix: string, key: string): string {
  return `${prefix.replace(/\/+$/, '')}/leased/${key}`;
}

/** The end of the key range of every key starting with `start` (etcd's prefix convention). */
function prefixEnd(start: Buffer): Buffer {
  const end = Buffer.from(start);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
