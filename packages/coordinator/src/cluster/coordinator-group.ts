/**
 * Several coordinators over one cluster state (docs/cluster.md "Several
 * coordinators"): each holds a lease in the state store (etcd), registers
 * itself under it (`coordinators/<name>`: its HTTP and RPC addresses) and
 * campaigns for `leader` — a leased value set only if absent, so the first
 * one wins and the key disappears with its holder's lease. The elected one
 * makes the cluster's decisions (failover, allocation, recovery) and
 * relays every write; the others serve reads and searches, run document
 * writes up to their routed call (leader-link.ts) and forward the rest to
 * it. When the leader's lease lapses (its process died, or it lost etcd),
 * every other coordinator campaigns again.
 *
 * A coordinator stops deciding before its lease can have expired in etcd:
 * the lease lives `leaseMs` from the last keep-alive etcd accepted, counted
 * from when that keep-alive was *sent*; past `leaseMs × STEP_DOWN_FRACTION`
 * without one, the coordinator steps down at once and says why
 * (`health()`, /readyz). Another coordinator can only be elected once the
 * lease is gone, so two never decide at the same time.
 *
 * Each record also lists the shard nodes its coordinator saw lost (their
 * connection to it closed or timed out) and not back since: nodes join
 * every coordinator, so when the elected one dies with a node, whichever
 * coordinator is elected next — a follower that saw the loss, or the dead
 * one restarted, which never saw that node — knows the node is gone from
 * etcd at once instead of waiting a rejoin timeout for it.
 */
import { EventEmitter } from 'node:events';
import type { LeaseEvent, LeaseId, LeasedValue, StateStore } from '../state/store.js';

/** What a coordinator announces of itself. */
export interface CoordinatorRecord {
  name: string;
  /** Base URL of its HTTP API (`http://host:port`), once it listens. */
  http?: string;
  /** Its RPC address for nodes (`ws://host:port`), once it listens. */
  rpc?: string;
  startedAt: string;
  /** Shard nodes this coordinator saw lost and not back since: name → Date.now() of the loss. */
  lostNodes?: Record<string, number>;
}

export interface CoordinatorGroupOptions {
  store: StateStore<unknown>;
  name: string;
  /** The coordinator's lease in the store, ms (etcd counts whole seconds). */
  leaseMs: number;
  log: { info(b: Record<string, unknown>, m: string): void; warn(b: Record<string, unknown>, m: string): void };
}

export interface CoordinatorGroupEvents {
  /** This coordinator now decides. */
  elected: [];
  /** This coordinator stopped deciding, and why. */
  demoted: [reason: string];
  /** The leader key was put or removed: `leader()` may name another coordinator, or none. */
  leaderChanged: [];
}

export const LEADER_KEY = 'leader';
export const COORDINATOR_KEY_PREFIX = 'coordinators/';
/** Keep-alives per lease period. */
const KEEP_ALIVES_PER_LEASE = 3;
/** A leader steps down when this much of its lease passed since the last keep-alive etcd accepted was sent. */
const STEP_DOWN_FRACTION = 0.8;
/** How often the lease deadline is looked at. */
const DEADLINE_CHECK_MS = 100;

export class CoordinatorGroup extends EventEmitter<CoordinatorGroupEvents> {
  private lease: LeaseId | undefined;
  /** When the last keep-alive (or grant) etcd accepted was sent. */
  private renewedAt = 0;
  private leading = false;
  private problem: string | undefined = 'not registered yet';
  private record: CoordinatorRecord;
  private readonly timers: NodeJS.Timeout[] = [];
  private stopWatching: () => void = () => undefined;
  private renewing: Promise<void> | undefined;
  /** The record's puts, one after another: the last one put is the latest record. */
  private publishing: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(private readonly options: CoordinatorGroupOptions) {
    super();
    this.record = { name: options.name, startedAt: new Date().toISOString() };
  }

  /** Register and campaign; resolves once registered (elected or not). */
  static async join(options: CoordinatorGroupOptions): Promise<CoordinatorGroup> {
    const group = new CoordinatorGroup(options);
    group.stopWatching = options.store.watchLeases((event) => group.leaseEvent(event));
    await group.renew();
    group.timers.push(setInterval(() => void group.renew(), Math.max(100, Math.floor(options.leaseMs / KEEP_ALIVES_PER_LEASE))));
    group.timers.push(setInterval(() => group.checkDeadline(), DEADLINE_CHECK_MS));
    for (const timer of group.timers) timer.unref();
    return group;
  }

  get name(): string {
    return this.options.name;
  }

  /** The coordinator lease, ms. */
  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Whether this coordinator decides now. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** The elected coordinator's record, if one is elected and registered. */
  leader(): CoordinatorRecord | undefined {
    const name = this.options.store.getLeased(LEADER_KEY)?.value;
    if (typeof name !== 'string') return undefined;
    return this.member(name);
  }

  /** Every registered coordinator, by name. */
  members(): CoordinatorRecord[] {
    return this.options.store.listLeased(COORDINATOR_KEY_PREFIX).flatMap((entry) => {
      const record = recordOf(entry.value);
      return record === undefined ? [] : [record];
    });
  }

  /** Why this coordinator cannot take part now (lost its lease, store unreachable); undefined when it can. */
  health(): string | undefined {
    return this.problem;
  }

  /** Announce where this coordinator listens. */
  advertise(addresses: { http?: string; rpc?: string }): Promise<void> {
    this.record = { ...this.record, ...addresses };
    return this.publish();
  }

  /** Announce the shard nodes this coordinator sees lost now (name → Date.now() of the loss); a failed put is logged, and the next renewal's registration carries the list. */
  reportLostNodes(lost: ReadonlyMap<string, number>): void {
    const lostNodes = Object.fromEntries(lost);
    this.record = { ...this.record, lostNodes };
    this.publish().catch((err: unknown) =>
      this.options.log.warn({ coordinator: this.options.name, err: err instanceof Error ? err.message : String(err) }, 'could not announce the nodes this coordinator saw lost'));
  }

  /**
   * The shard nodes the other registered coordinators saw lost and not back
   * since, each with the earliest such loss: what an elected coordinator
   * takes as lost, with what it saw itself.
   */
  lostElsewhere(): Map<string, number> {
    const lost = new Map<string, number>();
    for (const member of this.members()) {
      if (member.name === this.options.name) continue;
      for (const [node, at] of Object.entries(member.lostNodes ?? {})) lost.set(node, Math.min(at, lost.get(node) ?? at));
    }
    return lost;
  }

  /** Step down and leave: the lease is revoked, so another coordinator is elected at once. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.stopWatching();
    this.demote('shutting down');
    if (this.lease !== undefined) await this.options.store.revokeLease(this.lease).catch(() => undefined);
  }

  /** Put the current record under the lease, after any put before it. */
  private publish(): Promise<void> {
    const put = this.publishing.catch(() => undefined).then(async () => {
      if (this.lease !== undefined && !this.closed) await this.options.store.putLeased(this.key(), this.record as unknown as LeasedValue, this.lease);
    });
    this.publishing = put;
    return put;
  }

  private key(): string {
    return `${COORDINATOR_KEY_PREFIX}${this.options.name}`;
  }

  private member(name: string): CoordinatorRecord | undefined {
    return recordOf(this.options.store.getLeased(`${COORDINATOR_KEY_PREFIX}${name}`)?.value);
  }

  /** Keep the lease alive (or get a new one, registering again) and campaign when no one leads. One at a time. */
  private renew(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.renewing ??= this.renewOnce().finally(() => { this.renewing = undefined; });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    const { store, leaseMs, log } = this.options;
    const sentAt = Date.now();
    try {
      if (this.lease === undefined || !(await store.keepAlive(this.lease))) {
        if (this.lease !== undefined) this.demote('the coordinator\'s lease expired');
        const lease = await store.grantLease(leaseMs);
        await store.putLeased(this.key(), this.record as unknown as LeasedValue, lease);
        this.lease = lease;
        log.info({ coordinator: this.options.name, leaseMs }, 'coordinator registered');
      }
      this.renewedAt = sentAt;
      this.problem = undefined;
      await this.campaign();
    } catch (err) {
      this.problem = `cannot reach the cluster-state store: ${err instanceof Error ? err.message : String(err)}`;
      this.checkDeadline();
    }
  }

  private async campaign(): Promise<void> {
    if (this.closed || this.lease === undefined) return;
    const holder = this.options.store.getLeased(LEADER_KEY);
    if (holder !== undefined) {
      // Elected under this lease: still leading. Under another (an earlier lease of ours that lapsed): not.
      if (holder.value === this.options.name && holder.lease === this.lease) this.elect();
      else if (this.leading) this.demote(`coordinator '${String(holder.value)}' holds the leadership`);
      return;
    }
    if (await this.options.store.putLeased(LEADER_KEY, this.options.name, this.lease, { ifAbsent: true })) this.elect();
  }

  private elect(): void {
    if (this.leading || this.closed) return;
    this.leading = true;
    this.options.log.info({ coordinator: this.options.name }, 'coordinator elected');
    this.emit('elected');
    this.emit('leaderChanged');
  }

  private demote(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.options.log.warn({ coordinator: this.options.name, reason }, 'coordinator stepped down');
    this.emit('demoted', reason);
  }

  /** Past the safe part of the lease without a keep-alive etcd accepted: stop deciding now. */
  private checkDeadline(): void {
    const silentMs = Date.now() - this.renewedAt;
    if (silentMs < this.options.leaseMs * STEP_DOWN_FRACTION) return;
    const reason = `no keep-alive of the coordinator's lease accepted for ${silentMs} ms${this.problem === undefined ? '' : ` (${this.problem})`}`;
    this.problem ??= reason;
    this.demote(reason);
  }

  private leaseEvent(event: LeaseEvent): void {
    if (this.closed) return;
    if (event.type !== 'ended' && event.key === LEADER_KEY) this.emit('leaderChanged');
    if (event.type === 'delete' && event.key === LEADER_KEY) void this.renew();
    if (event.type === 'ended' && event.lease === this.lease) this.demote('the coordinator\'s lease ended');
  }
}

function recordOf(value: LeasedValue | undefined): CoordinatorRecord | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, LeasedValue>;
  if (typeof record.name !== 'string' || typeof record.startedAt !== 'string') return undefined;
  const out: CoordinatorRecord = { name: record.name, startedAt: record.startedAt };
  if (typeof record.http === 'string') out.http = record.http;
  if (typeof record.rpc === 'string') out.rpc = record.rpc;
  const lost = record.lostNodes;
  if (lost !== null && typeof lost === 'object' && !Array.isArray(lost)) {
    const lostNodes = Object.entries(lost as Record<string, LeasedValue>).filter((e): e is [string, number] => typeof e[1] === 'number');
    if (lostNodes.length > 0) out.lostNodes = Object.fromEntries(lostNodes);
  }
  return out;
}
