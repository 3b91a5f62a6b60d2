/**
 * What the coordinator keeps in memory for one shard while it replicates:
 * the relay queue of each replica copy, the recoveries running, the last
 * positions copies reported, and two gates —
 *
 * - the switch: set while the primary is being replaced; writes wait for it
 *   to end, and a primary's answer that arrives meanwhile is not relayed;
 * - the serial queue: changes of the in-sync set (a copy leaving it, a
 *   recovered copy joining it, a promotion) run one at a time, so a copy
 *   never joins the set while a relay it failed is being judged.
 *
 * Relays in flight are tracked so a promotion starts only once each of them
 * has either reached every in-sync copy or taken the failing copy out.
 */
import type { ReplicationPositionReply } from '@tessera/rpc';
import type { CopyRelay } from '@tessera/rpc';

/** What a shard group keeps of a copy's recovery (recovery.ts `Recovery`). */
export interface CopyRecovery {
  /** Relays wait for the copy (its last step). */
  readonly tracking: boolean;
  /** A relay the copy failed while tracking: the attempt is void. */
  relayFailed(err: unknown): void;
  cancel(): void;
}

/** How often a waiting write re-checks the shard when no event woke it. */
const WAIT_POLL_MS = 100;

export class ShardGroup {
  readonly relays = new Map<string, CopyRelay>();
  readonly recoveries = new Map<string, CopyRecovery>();
  /** Last position each copy reported (relay replies, recoveries). */
  readonly positions = new Map<string, ReplicationPositionReply>();
  /** Highest seq the primary answered with. */
  primarySeq = 0;
  /**
   * In-sync replicas checked against the primary (the resync) since this
   * coordinator began deciding, or that joined the in-sync set through a
   * recovery since: one not checked may lack a change whose relay a
   * coordinator before left undone.
   */
  readonly resynced = new Set<string>();
  /** What this coordinator last placed on the shard's primary (`shard.placement`; replicas by name, comma-separated), once the node took it. */
  placed: { primary: string; term: number; direct: boolean; replicas: string } | undefined;
  /** A `shard.placement` in flight: writes wait for it. */
  placing = false;
  /** RESTORE batches this coordinator relays now: the primary is not placed `direct` meanwhile. */
  batches = 0;
  /** On a coordinator that does not decide: the shard's writes go through the elected one until then (its primary refused a direct write). */
  directRefusedUntil = 0;
  /** The resync running, if one does. */
  resyncing: Promise<boolean> | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private switches = 0;
  private switchEnded: Promise<void> = Promise.resolve();
  private endSwitch: () => void = () => undefined;
  private serialTail: Promise<unknown> = Promise.resolve();
  private readonly wakers = new Set<() => void>();

  constructor(readonly uuid: string, readonly index: string, readonly shard: number) {}

  get switching(): boolean {
    return this.switches > 0;
  }

  /** Writes wait from now until the returned function is called. */
  beginSwitch(): () => void {
    if (this.switches++ === 0) this.switchEnded = new Promise((resolve) => { this.endSwitch = resolve; });
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.switches === 0) this.endSwitch();
      this.wake();
    };
  }

  /** Resolves true once no switch runs, false if one still runs at `deadline`. */
  async waitForSwitch(deadline: number): Promise<boolean> {
    while (this.switching) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      await within(this.switchEnded, remaining);
    }
    return true;
  }

  /** Resolves on the next membership or placement change, or after a short poll, never after `deadline`. */
  changed(deadline: number): Promise<void> {
    const ms = Math.max(0, Math.min(WAIT_POLL_MS, deadline - Date.now()));
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      }
      const wakers = this.wakers;
      wakers.add(done);
    });
  }

  wake(): void {
    for (const waker of [...this.wakers]) waker();
  }

  /** Writes this coordinator sent to the primary whose relay is not registered yet. */
  private readonly sending = new Set<Promise<void>>();

  /** A write sent to the primary; call the returned function once its relay is registered (or it ended without one). */
  beginSending(): () => void {
    let done!: () => void;
    const sent = new Promise<void>((resolve) => { done = resolve; });
    this.sending.add(sent);
    return () => {
      this.sending.delete(sent);
      done();
    };
  }

  /** Resolves once every write sent now has registered its relay or ended. */
  async settleSending(): Promise<void> {
    while (this.sending.size > 0) await Promise.allSettled([...this.sending]);
  }

  /** A relay in flight, until it settled. */
  track(relay: Promise<unknown>): void {
    this.inFlight.add(relay);
    void relay.then(() => this.inFlight.delete(relay), () => this.inFlight.delete(relay));
  }

  /** Resolves once every relay in flight now (and those they led to) has settled. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Run `work` after every earlier serial task of this shard. */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serialTail.then(work);
    this.serialTail = run.catch(() => undefined);
    return run;
  }
}

function within(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
