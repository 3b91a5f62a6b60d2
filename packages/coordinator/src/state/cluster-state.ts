/**
 * The cluster state's shape (DESIGN.md "Writes, versions, replication"): the
 * indexes with their settings, schema, shard allocation and replication
 * state, the nodes the cluster has seen, named scripts, templates, aliases
 * and scoped API keys. Persisted by the state store (local-store.ts) and
 * changed only through the index registry's queue (indexes/registry.ts); read
 * by the replicator, the handlers, cluster information and the authorizer.
 */
import type { ShardRef } from '@tessera/rpc';
import type { Schema } from '@tessera/schema';
import type { IndexAlias } from '../admin/aliases.js';
import type { IndexTemplate } from '../admin/templates.js';
import type { StoredApiKey } from '../auth/keys.js';
import type { IdType } from '../documents/ids.js';
import type { IndexSettings } from '../indexes/settings.js';

export interface IndexMeta {
  path: string;
  uuid: string;
  createdAt: string;
  settings: IndexSettings;
  schema: Schema;
  idType?: IdType;
  /** `<index><id>` of the document holding this index's foreign schema (API.md §8.9). */
  foreign?: string;
  /** Node names holding each shard (index i = shard i+1), primary first. */
  allocation: string[][];
  /**
   * Per shard: its primary term and in-sync copies (replication/placement.ts).
   * Absent in state written before replication: term 1, every copy in sync.
   */
  replication?: ShardReplicationState[];
}

/** A shard node the cluster has seen (persisted, so a restarted coordinator knows whom to wait for). */
export interface NodeRecord {
  /** ISO time of its first join. */
  firstJoinedAt: string;
  /**
   * Shard copies of dropped indexes not yet deleted from the node (it was
   * down, or the call failed): deleted when it rejoins, and before a new copy
   * of the same shard is opened on it, so an old copy's documents never
   * resurface in a new index of the same name.
   */
  pendingDrops?: ShardRef[];
  /** ISO time it was lost, while it stays away: its copies are re-allocated a delay after (replication/reallocation.ts). */
  lostAt?: string;
  /**
   * It last joined keeping a registration under an etcd lease of its own
   * (`tessera node --etcd`): while that registration is gone, a coordinator
   * not connected to it counts it lost at once (cluster/node-leases.ts).
   */
  etcdLease?: true;
}

export interface ClusterState {
  version: 1;
  indexes: Record<string, IndexMeta>;
  /** By node name; absent in state written before the cluster existed. */
  nodes?: Record<string, NodeRecord>;
  /** Named scripts (API.md §11.2), oldest definition first (scripts/named-scripts.ts). */
  scripts?: NamedScript[];
  /** Index templates by name (API.md §16.1, admin/templates.ts). */
  templates?: Record<string, IndexTemplate>;
  /** Aliases by their index path (API.md §16.2, admin/aliases.ts). */
  aliases?: Record<string, IndexAlias>;
  /** Scoped API keys by name (API.md §16.3, auth/keys.ts): digests only, never secrets. */
  keys?: Record<string, StoredApiKey>;
  /** Schema growth of single writes sent but not yet settled (indexes/registry.ts `reserveGrowth`), by token. */
  growthReserved?: Record<string, GrowthReservation>;
}

/**
 * The schema a write grows its index to, recorded before the write is sent
 * and removed once it is settled (folded when accepted, dropped when
 * refused). One left behind by a coordinator that stopped in between is
 * folded by the next one to decide: its write may have been applied.
 */
export interface GrowthReservation {
  index: string;
  /** The index's uuid: a reservation outlives no drop and re-creation of its index. */
  uuid: string;
  schema: Schema;
}

/** A script remembered under its `_name`. */
export interface NamedScript {
  name: string;
  body: string;
}

export const EMPTY_CLUSTER_STATE: ClusterState = { version: 1, indexes: {} };

/** Per shard, persisted in the index's metadata. */
export interface ShardReplicationState {
  /** Primary term: 1 at creation, +1 at each promotion. Every write and relay carries it. */
  term: number;
  /** Copies holding every acknowledged write, the primary included. Only these are promoted or awaited. */
  inSync: string[];
}
