/**
 * Reads on a coordinator that is not elected without asking the elected one
 * first (docs/cluster.md "Who does what"). A follower holds a short lease
 * from the elected coordinator (`leader.lease`, renewed three times per
 * period, counted by the follower from when it asked and by the elected one
 * from when it answered, so the follower's ends first), together with the
 * revision of the state it was given. Before the elected coordinator
 * acknowledges a change of the state, every follower whose lease is alive
 * takes the change's revision (`coordinator.revision`: it answers once its
 * own state reached it, or drops its lease), or the elected coordinator
 * waits its lease out. So a follower whose lease is alive, and whose state
 * reached the revisions it was given, holds every change acknowledged
 * before a read: it serves it at once.
 *
 * A lease is a fraction of the coordinator lease (LEASE_FRACTION): the
 * elected coordinator answers renewals only while it decides, and steps
 * down at 80 % of its own lease without a keep-alive, so a follower's lease
 * from it ends before another coordinator can be elected and acknowledge
 * anything.
 */
import type { RpcPeer } from '@tessera/rpc';

/** A follower's lease, as a fraction of the coordinator lease (at most 0.2: see the header). */
export const LEASE_FRACTION = 1 / 8;

/** Elected coordinator → follower: take this revision of the state. */
export const COORDINATOR_REVISION_METHOD = 'coordinator.revision';

export interface FollowerCalls {
  'coordinator.revision': [{ revision: number }, { held: boolean }];
}

/** The elected coordinator's side: the followers holding a lease, and the fence before a change is acknowledged. */
export class FollowerLeases {
  /** Follower connection → Date.now() past which its lease has surely ended. */
  private readonly holders = new Map<RpcPeer<FollowerCalls>, number>();

  constructor(private readonly leaseMs: number) {}

  /** A follower renewed its lease now. */
  grant(peer: RpcPeer<FollowerCalls>): void {
    this.holders.set(peer, Date.now() + this.leaseMs);
  }

  /**
   * Resolves once every follower holding a lease took `revision`, or its
   * lease has ended: a change at `revision` may then be acknowledged.
   */
  async fence(revision: number): Promise<void> {
    const now = Date.now();
    const waits: Array<Promise<void>> = [];
    for (const [peer, endsAt] of this.holders) {
      if (endsAt <= now) {
        this.holders.delete(peer);
        continue;
      }
      waits.push(peer.call(COORDINATOR_REVISION_METHOD, { revision }, { timeoutMs: endsAt - now }).then(() => undefined, async () => {
        // Not answered: its lease is waited out (it may still think it holds one).
        const left = endsAt - Date.now();
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
      }));
    }
    await Promise.all(waits);
  }
}
