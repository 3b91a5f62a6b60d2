/**
 * What the elected coordinator last said of each shard copy this node holds
 * as primary (rpc `PlacementCall`): the shard's term, and whether the copy
 * is `solo` — the shard's only copy, so that a write needs no relay and a
 * coordinator that is not elected may send it straight here
 * (`WriteCall.direct`) instead of through the elected one.
 *
 * The placement of the highest cluster-state revision wins: a push delayed
 * on the wire (from a coordinator since deposed) never replaces a newer one.
 * A push that ends `solo` is answered once the direct writes running on the
 * copy have finished, so the elected coordinator knows that every write
 * after its answer goes through it (and reaches the copy it is about to
 * recover). Kept in memory only: a restarted node takes no direct write
 * until the elected coordinator has placed its copies again.
 */
import { nodeErrors } from './errors.js';
import type { PlacementCall, ShardRef } from '@tessera/rpc';

interface Held {
  term: number;
  revision: number;
  solo: boolean;
  /** Direct writes running now. */
  running: number;
  /** Answers of pushes that ended `solo`, waiting for `running` to reach 0. */
  idle: Array<() => void>;
}

export class SoloPlacements {
  private readonly held = new Map<string, Held>();

  /** A push of the elected coordinator; resolves once it holds (see the header). */
  place(key: string, call: PlacementCall): Promise<void> {
    const known = this.held.get(key);
    if (known !== undefined && call.revision < known.revision) return Promise.resolve();
    const held = known ?? { term: call.term, revision: call.revision, solo: call.solo, running: 0, idle: [] };
    held.term = call.term;
    held.revision = call.revision;
    held.solo = call.solo;
    this.held.set(key, held);
    if (held.solo || held.running === 0) return Promise.resolve();
    return new Promise((resolve) => held.idle.push(resolve));
  }

  /** Admit a direct write under `term` (throws 503 `primary_not_solo` otherwise); call the returned function once it finished. */
  admit(key: string, where: ShardRef, term: unknown): () => void {
    const held = this.held.get(key);
    if (held === undefined || !held.solo || held.term !== term) throw nodeErrors.primaryNotSolo(where.index, where.shard, term);
    held.running++;
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      if (--held.running > 0) return;
      for (const resolve of held.idle.splice(0)) resolve();
    };
  }

  /** The copy was dropped: a copy made again under the same name starts unplaced. */
  forget(key: string): void {
    const held = this.held.get(key);
    this.held.delete(key);
    if (held !== undefined) held.solo = false;
  }
}
