/**
 * Document writes through any coordinator (docs/cluster.md "Who does what").
 *
 * A coordinator that is not elected runs a single-document write itself —
 * HTTP parsing, body decoding, validation, the fold against the schema, the
 * `_id` and its shard, the answer's rendering — and hands only the routed
 * call to the elected coordinator over its RPC port (`leader.write`), which
 * runs it through the shard's primary and relays it to the replicas: one
 * coordinator still knows every copy recovering or being promoted, and the
 * elected one no longer parses, decodes nor renders the writes the others
 * take.
 *
 * Whatever changes the cluster state — a new index or settings, a schema
 * that grows, a generated or noted numeric `_id` — is the elected
 * coordinator's: the registry refuses it here with `leader_required` before
 * anything was sent to a shard, and the HTTP request is forwarded whole
 * (forward.ts). The elected coordinator answers `leader_required` too when it
 * is no longer elected, or the cluster state it holds is not the one the
 * write was routed from (its etcd revision: the other coordinator's watch
 * had not brought a change acknowledged here, an alias moved, say): nothing
 * ran, and the request is forwarded. So a write through any coordinator
 * sees every change of the state acknowledged before it, without the read
 * of etcd a read makes first.
 */
import type { RpcHandler, RpcPeer, WriteCall, WriteReply } from '@tessera/rpc';
import { connectPeer } from '@tessera/rpc';
import { apiErrors } from '../errors.js';
import type { IndexMeta } from '../state/cluster-state.js';
import { SharedRound } from '../state/shared-round.js';
import type { CoordinatorGroup } from './coordinator-group.js';
import { COORDINATOR_REVISION_METHOD, type FollowerCalls, type FollowerLeases } from './follower-leases.js';

/** The hello role of a coordinator dialling the elected one. */
export const COORDINATOR_HELLO_ROLE = 'coordinator';
/** Coordinator → elected coordinator: a write routed to its shard, run through the primary and relayed. */
export const LEADER_WRITE_METHOD = 'leader.write';
/** Coordinator → elected coordinator: the revision of the cluster state as it decides now (a read's fence). */
export const LEADER_REVISION_METHOD = 'leader.revision';
/** Longest wait for the elected coordinator's revision before a read falls back to reading etcd. */
const REVISION_TIMEOUT_MS = 1_000;

/**
 * What a routed write carries: the index by path and uuid (a write routed in
 * an index since dropped never lands in its successor), and the revision of
 * the cluster state it was routed from.
 */
export interface LeaderWriteCall {
  uuid: string;
  stateRevision: number;
  call: WriteCall;
}

/** Coordinator → elected coordinator: a direct write's replicas that failed its relay leave the in-sync set before it is acknowledged. */
export const LEADER_RELAY_FAILED_METHOD = 'leader.relayFailed';

/** What a `leader.relayFailed` carries: the shard (index by path and uuid), the term the write ran in, the replicas that failed. */
export interface RelayFailedCall {
  index: string;
  uuid: string;
  shard: number;
  term: number;
  nodes: string[];
}

/** Coordinator → elected coordinator: renew this follower's lease; the answer is the revision the elected coordinator decides at (follower-leases.ts). */
export const LEADER_LEASE_METHOD = 'leader.lease';

export interface LeaderCalls {
  'leader.write': [LeaderWriteCall, WriteReply];
  'leader.lease': [Record<string, never>, { revision: number }];
  'leader.relayFailed': [RelayFailedCall, null];
  'leader.revision': [Record<string, never>, { revision: number }];
}

export interface LeaderLinkOptions {
  /** This coordinator's name, said in its hello. */
  name: string;
  /** The elected coordinator's cluster secret (`--cluster-secret`), '' for none. */
  clusterSecret: string;
  /** Certificates (PEM) a `wss://` elected coordinator is verified against. */
  ca?: Buffer;
  /** Longest wait for a write's answer: the elected coordinator waits out a failover and the replicas' relays within it. */
  callTimeoutMs: number;
  /** Longest wait for the connection to a newly elected coordinator before the write is refused as `leader_unavailable`. */
  connectTimeoutMs: number;
  /** This follower's lease from the elected coordinator (follower-leases.ts), ms; absent: none, every read asks. */
  leaseMs?: number;
  /** Resolves true once this coordinator's state reached `revision`, false if it did not in time. */
  reachRevision?: (revision: number) => Promise<boolean>;
}

export const LEADER_LINK_DEFAULTS = { callTimeoutMs: 60_000, connectTimeoutMs: 3_000 } as const;

/** A coordinator's connection to the elected one, dialled anew when another is elected. */
export class LeaderLink {
  private link: Link | undefined;
  /** Connections to an elected coordinator lost so far: a write that saw one happen was cut off by it. */
  private losses = 0;
  /** Resolves on the group's next change of leader, while writes wait for one. */
  private nextChange: Promise<void> | undefined;
  /** The elected coordinator's revision: one ask in flight, the reads arriving meanwhile share the next. */
  private readonly revisions = new SharedRound(() => this.askRevision());
  /** Until then (Date.now()), this follower holds a lease from the elected coordinator (follower-leases.ts)… */
  private leaseUntil = 0;
  /** …with every change acknowledged before now at or below this revision. */
  private leaseRevision = 0;
  private renewing = false;
  private readonly renewTimer: NodeJS.Timeout | undefined;

  constructor(private readonly group: CoordinatorGroup, private readonly options: LeaderLinkOptions) {
    const leaseMs = options.leaseMs;
    if (leaseMs !== undefined && leaseMs > 0) {
      this.renewTimer = setInterval(() => void this.renewLease(leaseMs), Math.max(20, Math.floor(leaseMs / 3)));
      this.renewTimer.unref();
      // A lease is from one elected coordinator: another one's decisions are not fenced by it.
      group.on('leaderChanged', () => this.dropLease());
    }
  }

  /**
   * The revision a read here may be served at without asking: every change
   * acknowledged before now is at or below it, while this follower's lease
   * lives; undefined without one.
   */
  leasedRevision(): number | undefined {
    return Date.now() < this.leaseUntil ? this.leaseRevision : undefined;
  }

  private dropLease(): void {
    this.leaseUntil = 0;
    this.leaseRevision = 0;
  }

  private async renewLease(leaseMs: number): Promise<void> {
    if (this.renewing || this.group.isLeader) return;
    const peer = this.open();
    if (peer === undefined) return;
    this.renewing = true;
    const leader = peer.remote?.name;
    // Counted from the ask: the elected coordinator counts from its answer, so this end comes first.
    const asked = Date.now();
    try {
      const { revision } = await peer.call(LEADER_LEASE_METHOD, {}, { timeoutMs: leaseMs });
      if (!Number.isSafeInteger(revision) || this.group.leader()?.name !== leader) return;
      if (revision > this.leaseRevision) this.leaseRevision = revision;
      this.leaseUntil = asked + leaseMs;
    } catch {
      // Not renewed: it lapses.
    } finally {
      this.renewing = false;
    }
  }

  /** The elected coordinator's `coordinator.revision`: held once this coordinator's state reached it; else the lease is dropped. */
  private async takeRevision(params: unknown): Promise<{ held: boolean }> {
    const revision = (params as { revision?: unknown } | null)?.revision;
    if (typeof revision !== 'number' || !Number.isSafeInteger(revision)) throw apiErrors.badLeaderCall('coordinator.revision takes { revision }');
    const reached = this.options.reachRevision === undefined ? false : await this.options.reachRevision(revision);
    if (!reached) {
      this.dropLease();
      return { held: false };
    }
    if (revision > this.leaseRevision) this.leaseRevision = revision;
    return { held: true };
  }

  /** The write, routed from the cluster state at `stateRevision`, run by the elected coordinator; its reply. */
  async write(meta: IndexMeta, call: WriteCall, stateRevision: number): Promise<WriteReply> {
    const peer = await this.peer();
    // The schema is the elected coordinator's own (a superset of this one's, which the document was folded against).
    const { schema: _own, ...routed } = call;
    const lossesBefore = this.losses;
    try {
      return await peer.call(LEADER_WRITE_METHOD, { uuid: meta.uuid, stateRevision, call: routed }, { timeoutMs: this.options.callTimeoutMs });
    } catch (err) {
      // Said as what it is, not as a shard node's connection (rpc_unavailable): the elected coordinator died or was cut off.
      if (this.losses !== lossesBefore) {
        throw apiErrors.leaderUnavailable(`the connection to the elected coordinator '${this.link?.leader ?? '?'}' was lost while it ran the write, which may or may not have been applied`);
      }
      throw err;
    }
  }

  /** Replicas that failed a direct write's relay, taken out of the in-sync set by the elected coordinator (replication/replicator.ts). */
  async relayFailed(call: RelayFailedCall): Promise<void> {
    const peer = await this.peer();
    await peer.call(LEADER_RELAY_FAILED_METHOD, call, { timeoutMs: this.options.callTimeoutMs });
  }

  /**
   * The revision of the cluster state at the elected coordinator, asked now
   * over an open connection: every change of the state acknowledged before
   * this call is at or below it, since the elected coordinator makes them
   * all and answers only while it decides (its lease's safe part, as for
   * any decision). So a read served once this coordinator's watch brought
   * that revision sees them, as one after a read of etcd does — for one
   * message over a connection already open instead of an etcd call.
   * Undefined when no connection to the elected coordinator is open now
   * (one is dialled for the next read); rejects when the ask fails.
   */
  electedRevision(): Promise<number | undefined> {
    if (this.open() === undefined) {
      // Dialled for the next read (once, not per read); this one reads etcd.
      const leader = this.group.leader();
      if (!this.group.isLeader && leader?.rpc !== undefined && this.linkTo(leader) === undefined) this.peer().catch(() => undefined);
      return Promise.resolve(undefined);
    }
    return this.revisions.join();
  }

  async close(): Promise<void> {
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    this.dropLease();
    const link = this.link;
    this.link = undefined;
    await link?.peer.close();
  }

  /**
   * The connection to the elected coordinator, waited for up to
   * connectTimeoutMs. A change of leader ends the wait at once: the write
   * goes to the new one, or is refused with `leader_required` (nothing was
   * sent) when this coordinator was elected, so it runs here.
   */
  private async peer(): Promise<RpcPeer<LeaderCalls>> {
    const deadline = Date.now() + this.options.connectTimeoutMs;
    for (;;) {
      if (this.group.isLeader) throw apiErrors.leaderRequired('this coordinator was elected');
      const leader = this.group.leader();
      const waitMs = deadline - Date.now();
      if (leader?.rpc === undefined) {
        if (waitMs <= 0 || (await this.firstOf(undefined, waitMs)) === 'timed out') throw apiErrors.leaderUnavailable(this.group.health() ?? 'no coordinator is elected');
        continue;
      }
      if (leader.name === this.group.name) throw apiErrors.leaderRequired(`this coordinator's election is being settled`);
      let link = this.linkTo(leader);
      if (link === undefined) {
        void this.link?.peer.close();
        link = this.link = this.dial(leader.rpc, leader.name);
      }
      if (!link.peer.connected) {
        // One wait per connection, shared by the writes that arrive meanwhile (not a listener set each).
        const outcome = await this.firstOf(link.connected, waitMs);
        if (outcome === 'leader changed') continue;
        if (outcome === undefined || outcome === 'timed out') {
          if (this.link === link) this.link = undefined;
          void link.peer.close();
          throw apiErrors.leaderUnavailable(`the elected coordinator '${leader.name}' at ${leader.rpc} did not answer`);
        }
      }
      // The address may have been taken by another process since the registration was read.
      if (link.peer.remote?.name !== leader.name) throw apiErrors.leaderRequired(`${leader.rpc} is '${link.peer.remote?.name ?? '?'}', not the elected '${leader.name}'`);
      return link.peer;
    }
  }

  /** The connection to the coordinator elected now, if open. */
  private open(): RpcPeer<LeaderCalls> | undefined {
    const leader = this.group.leader();
    const link = leader === undefined ? undefined : this.linkTo(leader);
    return link !== undefined && link.peer.connected && link.peer.remote?.name === leader?.name ? link.peer : undefined;
  }

  /** The link dialled to `leader` as registered now (its name and RPC address), if any. */
  private linkTo(leader: { name: string; rpc?: string }): Link | undefined {
    const link = this.link;
    return link !== undefined && link.leader === leader.name && link.url === leader.rpc ? link : undefined;
  }

  private async askRevision(): Promise<number | undefined> {
    const peer = this.open();
    if (peer === undefined) return undefined;
    const { revision } = await peer.call(LEADER_REVISION_METHOD, {}, { timeoutMs: REVISION_TIMEOUT_MS });
    if (!Number.isSafeInteger(revision) || revision < 0) throw apiErrors.badLeaderCall(`leader.revision answered ${String(revision)}`);
    return revision;
  }

  /** What comes first: `other`'s value, a change of the group's leader, or the end of `ms`. */
  private async firstOf<T>(other: Promise<T> | undefined, ms: number): Promise<T | 'leader changed' | 'timed out'> {
    // One listener on the group, however many writes wait.
    this.nextChange ??= new Promise<void>((resolve) => this.group.once('leaderChanged', () => { this.nextChange = undefined; resolve(); }));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed out'>((resolve) => { timer = setTimeout(() => resolve('timed out'), Math.max(0, ms)); });
    try {
      return await Promise.race([this.nextChange.then(() => 'leader changed' as const), timedOut, ...(other === undefined ? [] : [other])]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A connection to the elected coordinator at `url`; `connected` resolves with its hello, or undefined past connectTimeoutMs. */
  private dial(url: string, leader: string): Link {
    const peer = connectPeer<LeaderCalls>(url, {
      identity: { name: this.options.name, role: COORDINATOR_HELLO_ROLE },
      handler: (method, params) => (method === COORDINATOR_REVISION_METHOD
        ? this.takeRevision(params) : Promise.reject(apiErrors.badLeaderCall(`'${method}' is not a call a coordinator serves`))),
      ...(this.options.ca === undefined ? {} : { ca: this.options.ca }),
      ...(this.options.clusterSecret === '' ? {} : { clusterSecret: this.options.clusterSecret }),
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), this.options.connectTimeoutMs); });
    const connected = Promise.race([peer.whenConnected().catch(() => undefined), timedOut]).finally(() => clearTimeout(timer));
    const link: Link = { url, leader, peer, connected };
    peer.on('lost', () => {
      this.losses++;
      // Not redialled: writes waiting for it fail now rather than at their deadline, and the next goes to whoever is elected then.
      if (this.link === link) this.link = undefined;
      void peer.close();
    });
    return link;
  }
}

/** One connection to an elected coordinator. */
interface Link {
  url: string;
  leader: string;
  peer: RpcPeer<LeaderCalls>;
  connected: Promise<unknown>;
}

/** What the elected coordinator needs to run routed writes. */
export interface LeaderWriteHost {
  decides(): boolean;
  /** The cluster state's revision here (StateStore.revision). */
  stateRevision(): number;
  /** Resolves once this coordinator read the state from etcd since it was last elected (it may have missed its predecessor's last changes). */
  readSinceElected(): Promise<void>;
  get(path: string): IndexMeta | undefined;
  write(meta: IndexMeta, shard: number, call: WriteCall): Promise<WriteReply>;
  /** Replicas that failed a direct write's relay in `term` leave the in-sync set; rejects when the shard is no longer in that term. */
  relayFailed(meta: IndexMeta, shard: number, term: number, nodes: string[]): Promise<void>;
  /** The followers' leases (`leader.lease`); absent: none granted. */
  leases?: FollowerLeases;
}

/** The elected coordinator's handler of the calls of another coordinator, over its connection `peer`. */
export function leaderCallHandler(host: LeaderWriteHost): (peer: RpcPeer) => RpcHandler {
  return (peer) => async (method, params) => {
    if (method === LEADER_LEASE_METHOD) {
      if (host.leases === undefined) throw apiErrors.badLeaderCall('this coordinator grants no lease');
      await host.readSinceElected();
      if (!host.decides()) throw apiErrors.leaderRequired('this coordinator is no longer elected');
      host.leases.grant(peer as unknown as RpcPeer<FollowerCalls>);
      return { revision: host.stateRevision() };
    }
    if (method === LEADER_REVISION_METHOD) {
      await host.readSinceElected();
      // Read at the moment the decision holds: no other coordinator can have made a change this one has not.
      if (!host.decides()) throw apiErrors.leaderRequired('this coordinator is no longer elected');
      return { revision: host.stateRevision() };
    }
    if (method === LEADER_RELAY_FAILED_METHOD) {
      const p = params as Partial<RelayFailedCall> | null;
      if (typeof p?.index !== 'string' || typeof p.uuid !== 'string' || !Number.isSafeInteger(p.shard) || !Number.isSafeInteger(p.term) ||
          !Array.isArray(p.nodes) || !p.nodes.every((n) => typeof n === 'string')) {
        throw apiErrors.badLeaderCall('leader.relayFailed takes { index, uuid, shard, term, nodes }');
      }
      if (!host.decides()) throw apiErrors.leaderRequired('this coordinator is no longer elected');
      const meta = host.get(p.index);
      if (meta === undefined || meta.uuid !== p.uuid) throw apiErrors.indexNotFound(p.index);
      await host.relayFailed(meta, p.shard as number, p.term as number, p.nodes);
      return null;
    }
    if (method !== LEADER_WRITE_METHOD) throw apiErrors.badLeaderCall(`'${method}' is not a call a coordinator serves`);
    const { uuid, stateRevision, call } = checkedWrite(params);
    if (!host.decides()) throw apiErrors.leaderRequired('this coordinator is no longer elected');
    // Routed from a state other than this one's (an alias moved, a default script set, a field grown… and acknowledged here):
    // what the other coordinator decided may not hold, and the request is made again here.
    if (stateRevision !== host.stateRevision()) throw apiErrors.leaderRequired(`the write was routed from the cluster state at revision ${stateRevision}, it is at ${host.stateRevision()} now`);
    const meta = host.get(call.index);
    if (meta === undefined || meta.uuid !== uuid) throw apiErrors.leaderRequired(`index ${call.index} changed since the write was routed`);
    if (call.shard > meta.allocation.length) throw apiErrors.badLeaderCall(`index ${call.index} has no shard ${call.shard}`);
    // Object.assign, not a spread with a new key (~2 µs on Node 20's V8; see replicator.ts throughPrimary).
    return host.write(meta, call.shard, Object.assign({}, call, { schema: meta.schema }));
  };
}

/** The shape a routed write must have (its contents are the primary's to check, as for any write call). */
function checkedWrite(params: unknown): LeaderWriteCall {
  const p = params as Partial<LeaderWriteCall> | null;
  const call = p?.call as Partial<WriteCall> | undefined;
  if (typeof p?.uuid !== 'string' || !Number.isSafeInteger(p.stateRevision) || typeof call !== 'object' || call === null || typeof call.index !== 'string' ||
      !Number.isSafeInteger(call.shard) || (call.shard as number) < 1) {
    throw apiErrors.badLeaderCall('leader.write takes { uuid, stateRevision, call: { index, shard, … } }');
  }
  return p as LeaderWriteCall;
}
