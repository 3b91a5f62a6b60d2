/**
 * Where a shard's copies are and which of them may serve and be promoted:
 * the allocation (primary first), the shard's primary term, and its in-sync
 * set — the copies that hold every acknowledged write. All three are cluster
 * state (state/cluster-state.ts); an index written before replication existed
 * has term 1 and every allocated copy in sync (they were created empty
 * together).
 */
import type { IndexMeta, ShardReplicationState } from '../state/cluster-state.js';

export const FIRST_TERM = 1;

export interface Placement {
  index: string;
  shard: number;
  /** Node names, primary first. */
  copies: string[];
  primary: string | undefined;
  term: number;
  inSync: string[];
}

export function replicationStateOf(meta: IndexMeta, shard: number): ShardReplicationState {
  return meta.replication?.[shard - 1] ?? { term: FIRST_TERM, inSync: [...(meta.allocation[shard - 1] ?? [])] };
}

export function placementOf(meta: IndexMeta, shard: number): Placement {
  const copies = meta.allocation[shard - 1] ?? [];
  const { term, inSync } = replicationStateOf(meta, shard);
  return { index: meta.path, shard, copies, primary: copies[0], term, inSync };
}

/** A new replication state for one shard, applied to the index's metadata. */
export interface PlacementChange {
  copies: string[];
  term: number;
  inSync: string[];
}

export function withPlacement(meta: IndexMeta, shard: number, change: PlacementChange): IndexMeta {
  const allocation = meta.allocation.map((copies, i) => (i === shard - 1 ? [...change.copies] : copies));
  const replication = meta.allocation.map((_, i) => (i === shard - 1
    ? { term: change.term, inSync: [...change.inSync] }
    : replicationStateOf(meta, i + 1)));
  return { ...meta, allocation, replication };
}
