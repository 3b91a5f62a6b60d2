/**
 * The node's side of "a primary cut off from the coordinator stops taking
 * writes" (docs/cluster.md "Leases"). Every word from the coordinator — a
 * call, a ping, a pong: the RPC heartbeat's `lastHeardAt` — renews the
 * node's lease; once nothing was heard for longer than `leaseMs`, the node
 * refuses writes as primary (`doc.write`, `doc.writeMany`) with 503
 * `primary_lease_expired`. It takes them again as soon as the coordinator
 * is heard, which then decides, with primary terms, who is primary.
 *
 * The lease is shorter than the coordinator's heartbeat timeout less one
 * heartbeat (5 s − 1 s): by the time the coordinator can have declared this
 * node lost and promoted another copy, this node has stopped writing.
 * Reads, relays as a replica and recovery are not refused: they make no
 * decision only a primary may make.
 */
import type { ShardRef } from '@tessera/rpc';
import { nodeErrors } from './errors.js';

export interface PrimaryLeaseOptions {
  /** Writes as primary are refused this long after the coordinator was last heard, ms. */
  leaseMs: number;
  /** Date.now() the coordinator was last heard; undefined while disconnected (the last value is remembered). */
  lastHeardAt: () => number | undefined;
  /** The lease ran out (`silentMs`: since the coordinator was last heard). */
  onExpired?: (silentMs: number) => void;
  /** The coordinator was heard again after the lease ran out. */
  onRenewed?: () => void;
  now?: () => number;
}

export const PRIMARY_LEASE_DEFAULTS = Object.freeze({
  leaseMs: 3_000,
  /** How often the heartbeat is read while nothing asks (so a disconnection keeps the time of the last word). */
  sampleMs: 250,
});

/** The longest lease: the coordinator's default heartbeat timeout less one heartbeat interval (see above). */
export const PRIMARY_LEASE_MS_MAX = 4_000;

export class PrimaryLease {
  /** Date.now() the coordinator was last heard; -Infinity before it ever was (no lease yet). */
  private heardAt = -Infinity;
  private expired = false;
  private sampler: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: PrimaryLeaseOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Read the heartbeat; true while the lease holds. */
  refresh(): boolean {
    const heard = this.options.lastHeardAt();
    if (heard !== undefined && heard > this.heardAt) this.heardAt = heard;
    const silentMs = this.now() - this.heardAt;
    const valid = silentMs <= this.options.leaseMs;
    if (!valid && !this.expired && this.heardAt !== -Infinity) {
      this.expired = true;
      this.options.onExpired?.(silentMs);
    } else if (valid && this.expired) {
      this.expired = false;
      this.options.onRenewed?.();
    }
    return valid;
  }

  /** Throws 503 `primary_lease_expired` when the lease does not hold. */
  check(where: ShardRef): void {
    if (this.refresh()) return;
    throw nodeErrors.primaryLeaseExpired(where.index, where.shard, this.now() - this.heardAt, this.options.leaseMs);
  }

  /** Read the heartbeat every `sampleMs` until stop(). */
  start(sampleMs: number = PRIMARY_LEASE_DEFAULTS.sampleMs): void {
    if (this.sampler !== undefined) return;
    this.sampler = setInterval(() => this.refresh(), sampleMs);
    this.sampler.unref();
  }

  stop(): void {
    clearInterval(this.sampler);
    this.sampler = undefined;
  }
}
