/**
 * A shard copy's replication position: the highest primary term it has seen
 * (older terms are refused: they come from a demoted primary) and its
 * checkpoint — every change the primary of `checkpointTerm` numbered up to
 * `checkpoint` is applied here, or superseded by a newer version. Catch-up
 * restarts from the checkpoint; changes re-applied are discarded by origin
 * (replication/origin.ts), so restarting low is always safe.
 *
 * Changes arrive out of order (live writes during a catch-up, a relay that
 * failed), so seqs applied above the checkpoint wait in `received` until the
 * gap below them fills. A new term starts over: seqs of an older term mean
 * nothing in the new primary's numbering, until the coordinator tells the
 * copy where it stands (`follow`).
 */
import assert from 'node:assert/strict';
import { FIRST_TERM } from './origin.js';

export interface ReplicationState {
  /** Highest primary term seen. */
  term: number;
  /** The term whose primary's numbering `checkpoint` is in (0: none known). */
  checkpointTerm: number;
  checkpoint: number;
}

/**
 * Seqs held above the checkpoint at most. Past it the copy forgets its
 * position (checkpointTerm 0), so the coordinator recovers it by a full copy
 * instead of this set growing without bound behind a gap that never fills.
 */
export const RECEIVED_AHEAD_MAX = 1_000_000;

export const INITIAL_REPLICATION_STATE: Readonly<ReplicationState> = Object.freeze({
  // A new copy is empty: it holds every change of the first term up to seq 0.
  term: FIRST_TERM, checkpointTerm: FIRST_TERM, checkpoint: 0,
});

export class ReplicaPosition {
  private state: ReplicationState;
  private readonly received = new Set<number>();
  /** Changed since last written to the shard's metadata. */
  dirty = false;

  constructor(state: ReplicationState, private readonly receivedMax: number = RECEIVED_AHEAD_MAX) {
    this.state = { ...state };
  }

  get term(): number {
    return this.state.term;
  }

  snapshot(): ReplicationState {
    return { ...this.state };
  }

  /** Seqs waiting above the checkpoint (tests, metrics). */
  get ahead(): number {
    return this.received.size;
  }

  /** Adopt a newer term; false when `term` is not newer. */
  raiseTerm(term: number): boolean {
    if (term <= this.state.term) return false;
    this.state.term = term;
    this.received.clear();
    this.dirty = true;
    return true;
  }

  /** The change the primary of `term` numbered `seq` is durable here (or superseded). */
  observe(term: number, seq: number): void {
    // A newer term arrived while the change was applied: its seq is in another numbering.
    if (term !== this.state.term) return;
    if (this.state.checkpointTerm === term && seq <= this.state.checkpoint) return;
    this.received.add(seq);
    this.advance();
  }

  /** The coordinator vouches that this copy holds every change of `term` up to `checkpoint`. */
  follow(term: number, checkpoint: number): void {
    assert.ok(term >= this.state.term, 'follow with an older term');
    this.raiseTerm(term);
    const s = this.state;
    if (s.checkpointTerm === term) {
      s.checkpoint = Math.max(s.checkpoint, checkpoint);
    } else {
      s.checkpointTerm = term;
      s.checkpoint = checkpoint;
    }
    for (const seq of this.received) if (seq <= s.checkpoint) this.received.delete(seq);
    this.dirty = true;
    this.advance();
  }

  private advance(): void {
    const s = this.state;
    if (s.checkpointTerm === s.term) {
      const from = s.checkpoint;
      while (this.received.delete(s.checkpoint + 1)) s.checkpoint++;
      if (s.checkpoint !== from) this.dirty = true;
    }
    if (this.received.size > this.receivedMax) {
      this.received.clear();
      s.checkpointTerm = 0;
      s.checkpoint = 0;
      this.dirty = true;
    }
  }
}
