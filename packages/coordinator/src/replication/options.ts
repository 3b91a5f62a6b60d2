/**
 * The replicator's options and its log (replicator.ts, recovery.ts,
 * reallocation.ts read them): timeouts, page sizes, delays, with their
 * defaults.
 */
import type { WriteCall, WriteReply } from '@tessera/rpc';
import type { IndexMeta } from '../state/cluster-state.js';

export interface ReplicationOptions {
  /**
   * How long a write waits for its shard to get a primary again (a switch in
   * progress, a lost primary being replaced) before 503. Above the RPC
   * heartbeat timeout (5 s by default), which is how long a lost node takes
   * to be noticed.
   */
  failoverWaitMs: number;
  /** Deadline of one `doc.replicate` call; past it the replica leaves the in-sync set. */
  relayTimeoutMs: number;
  /** Operation-log entries per catch-up page. */
  catchUpPageChanges: number;
  /** Documents per full-copy page. */
  copyPageDocuments: number;
  /** First wait before a failed recovery is retried (doubles up to 10 s). */
  recoveryRetryMs: number;
  /** Deadline of the calls a promotion and the lag gauge make. */
  controlTimeoutMs: number;
  /** A node lost this long has its copies re-allocated to other nodes (reallocation.ts); 0: at once. */
  nodeLeftDelayMs: number;
  /**
   * A restarted coordinator waits this long for the nodes of its cluster
   * state to rejoin before it counts one that did not as lost (its primaries
   * fail over). Above a node's longest redial backoff (5 s) plus a handshake.
   */
  rejoinTimeoutMs: number;
  /**
   * Whether this coordinator makes the cluster's decisions now: failover,
   * recovery, re-allocation, recording joins and losses. Of several
   * coordinators only the elected one does (cluster/coordinator-group.ts);
   * the others keep their shard groups for reads and wait.
   */
  decides: () => boolean;
  /**
   * Where a coordinator that does not decide sends a document write: the
   * elected coordinator, which runs it through the primary and relays it
   * (cluster/leader-link.ts). Without it such a write is refused with
   * `leader_required` (its request is then forwarded whole).
   */
  leaderWrite?: (meta: IndexMeta, call: WriteCall, routedAt: number) => Promise<WriteReply>;
  /** Where a coordinator that does not decide reports the replicas that failed a direct write's relay (the elected coordinator, which takes them out of the in-sync set). */
  leaderRelayFailed?: (meta: IndexMeta, shard: number, term: number, nodes: string[]) => Promise<void>;
  /**
   * Several coordinators share the cluster state (etcd): the revision of
   * this coordinator's state now. With it, the elected coordinator places
   * each shard on its primary (`shard.placement`): to take writes straight
   * from every coordinator (`direct`) and relay them to its replicas itself
   * while it can — a shard of one copy always, one with replicas while every
   * copy is in sync and each node has a relay listener — and not otherwise.
   */
  stateRevision?: () => number;
  /**
   * For a direct write on a coordinator that does not decide: resolves once
   * this coordinator's state holds every change acknowledged before the
   * call (the fence reads make, coordinator.ts `caughtUp`).
   */
  fenceState?: () => Promise<void>;
  /** A document write on a coordinator that does not decide went straight to the primary, or through the elected coordinator. */
  onRoutedWrite?: (via: 'primary' | 'elected') => void;
  log: ReplicationLog;
}

/** Structured logger (a pino Logger fits). */
export interface ReplicationLog {
  info(bindings: Record<string, unknown>, msg: string): void;
  warn(bindings: Record<string, unknown>, msg: string): void;
  error(bindings: Record<string, unknown>, msg: string): void;
}

const silentLog: ReplicationLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

export const REPLICATION_DEFAULTS: Readonly<ReplicationOptions> = Object.freeze({
  failoverWaitMs: 15_000,
  relayTimeoutMs: 10_000,
  catchUpPageChanges: 1_000,
  copyPageDocuments: 500,
  recoveryRetryMs: 500,
  controlTimeoutMs: 5_000,
  nodeLeftDelayMs: 60_000,
  rejoinTimeoutMs: 10_000,
  decides: () => true,
  log: silentLog,
});
