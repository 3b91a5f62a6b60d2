/**
 * Index metadata — settings, schema, `_id` type, shard allocation — kept in
 * the cluster state. Every change goes through one queue, so two requests
 * creating the same index, or fixing its `_id` type, never race.
 */
import { randomUUID } from 'node:crypto';
import type { ShardStatsReply } from '@tessera/rpc';
import { allocateShards, type NodeDirectory } from '../cluster/nodes.js';
import { apiErrors } from '../errors.js';
import type { IdType } from '../documents/ids.js';
import type { StateStore } from '../state/local-store.js';
import { createSchema, mergeSchema, type Schema } from '@tessera/schema';
import type { IndexSettings } from './settings.js';

export interface IndexMeta {
  path: string;
  uuid: string;
  createdAt: string;
  settings: IndexSettings;
  schema: Schema;
  idType?: IdType;
  /** Node names holding each shard (index i = shard i+1), primary first. */
  allocation: string[][];
}

export interface ClusterState {
  version: 1;
  indexes: Record<string, IndexMeta>;
}

export const EMPTY_CLUSTER_STATE: ClusterState = { version: 1, indexes: {} };

export interface IndexChange {
  settings?: Partial<IndexSettings>;
  schema?: unknown;
  idType?: IdType;
}

export class IndexRegistry {
  private queue: Promise<unknown> = Promise.resolve();
  /** Largest numeric document ID per index, learnt from the shards once and kept up to date. */
  private readonly largestIds = new Map<string, Promise<{ value: number }>>();

  constructor(
    private readonly store: StateStore<ClusterState>,
    private readonly nodes: NodeDirectory,
    private readonly defaults: IndexSettings,
  ) {}

  get(path: string): IndexMeta | undefined {
    const meta = this.store.get().indexes[path];
    return meta;
  }

  list(): IndexMeta[] {
    return Object.values(this.store.get().indexes);
  }

  /**
   * Create the index if missing and fold `change` into it. Resolves once the
   * state is durable and every shard copy is open on its node.
   */
  ensure(path: string, change: IndexChange = {}): Promise<IndexMeta> {
    const existing = this.get(path);
    if (existing && isNoop(existing, change)) return Promise.resolve(existing);
    return this.serialised(async () => {
      const state = this.store.get();
      const current = state.indexes[path];
      let next: IndexMeta;
      if (!current) {
        const settings: IndexSettings = { ...this.defaults, ...change.settings };
        next = {
          path,
          uuid: randomUUID(),
          createdAt: new Date().toISOString(),
          settings,
          schema: createSchema(change.schema),
          allocation: allocateShards(this.nodes.names(), settings.number_of_shards, settings.number_of_replicas,
            Object.keys(state.indexes).length),
        };
        if (change.idType) setIdType(next, change.idType);
        await this.openShards(next);
      } else {
        if (change.settings?.number_of_shards !== undefined &&
            change.settings.number_of_shards !== current.settings.number_of_shards) {
          throw apiErrors.shardsImmutable();
        }
        next = {
          ...current,
          settings: { ...current.settings, ...change.settings },
          schema: change.schema === undefined ? current.schema : mergeSchema(current.schema, change.schema),
        };
        if (change.idType && !current.idType) setIdType(next, change.idType);
        if (isDeepEqualMeta(current, next)) return current;
      }
      const ok = await this.store.compareAndSet(state, { ...state, indexes: { ...state.indexes, [path]: next } });
      if (!ok) throw new Error('cluster state changed outside the registry queue');
      return next;
    });
  }

  /**
   * Grow an index's schema with the fields a document brings. `fold` runs on
   * the schema current inside the queue, so two writes adding fields at once
   * both land, and a second write giving the same new field another type
   * fails (400) instead of overwriting the first.
   */
  updateSchema<T>(path: string, fold: (schema: Schema) => { schema: Schema; changed: boolean; result: T }): Promise<T> {
    return this.serialised(async () => {
      const state = this.store.get();
      const current = state.indexes[path];
      if (!current) throw apiErrors.indexNotFound(path);
      const folded = fold(current.schema);
      if (folded.changed) {
        const next: IndexMeta = { ...current, schema: folded.schema };
        const ok = await this.store.compareAndSet(state, { ...state, indexes: { ...state.indexes, [path]: next } });
        if (!ok) throw new Error('cluster state changed outside the registry queue');
      }
      return folded.result;
    });
  }

  /** Remove an index and every shard copy of it. */
  drop(path: string): Promise<void> {
    return this.serialised(async () => {
      const state = this.store.get();
      const meta = state.indexes[path];
      if (!meta) throw apiErrors.indexNotFound(path);
      const indexes = { ...state.indexes };
      delete indexes[path];
      // Forget the index first: a crash in between leaves orphan files, never a half-deleted live index.
      await this.store.compareAndSet(state, { ...state, indexes });
      this.largestIds.delete(path);
      await Promise.all(this.copies(meta).map(({ node, shard }) =>
        this.client(meta.path, node, shard).call('shard.drop', { index: meta.path, shard })));
    });
  }

  /** Stats of every shard (primary copies). */
  async shardStats(meta: IndexMeta): Promise<ShardStatsReply[]> {
    return Promise.all(meta.allocation.map((copies, i) =>
      this.client(meta.path, copies[0], i + 1).call<ShardStatsReply>('shard.stats', { index: meta.path, shard: i + 1 })));
  }

  /** The RPC client of the node holding a shard copy. */
  client(index: string, node: string | undefined, shard: number) {
    const entry = node === undefined ? undefined : this.nodes.get(node);
    if (!entry) throw apiErrors.noShardNode(index, shard);
    return entry.client;
  }

  /** Next generated numeric ID (1 + the largest ever used). */
  async nextNumericId(meta: IndexMeta): Promise<number> {
    const largest = await this.largestId(meta);
    largest.value = Math.floor(largest.value) + 1;
    return largest.value;
  }

  /** Record a numeric ID written by a client, so generated IDs never reuse it. */
  async noteNumericId(meta: IndexMeta, id: number): Promise<void> {
    const largest = await this.largestId(meta);
    if (id > largest.value) largest.value = id;
  }

  private largestId(meta: IndexMeta): Promise<{ value: number }> {
    let largest = this.largestIds.get(meta.path);
    if (!largest) {
      largest = this.shardStats(meta).then((stats) => ({ value: Math.max(0, ...stats.map((s) => s.maxNumericId)) }));
      this.largestIds.set(meta.path, largest);
      largest.catch(() => this.largestIds.delete(meta.path));
    }
    return largest;
  }

  private copies(meta: IndexMeta): Array<{ node: string; shard: number }> {
    return meta.allocation.flatMap((nodes, i) => nodes.map((node) => ({ node, shard: i + 1 })));
  }

  private async openShards(meta: IndexMeta): Promise<void> {
    await Promise.all(this.copies(meta).map(({ node, shard }) =>
      this.client(meta.path, node, shard).call('shard.open', { index: meta.path, shard })));
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/**
 * Fix the index's `_id` type, in the metadata and in the schema the shards
 * receive: they name ID terms from it (`QN…` for integers, `QK…` for keywords).
 */
function setIdType(meta: IndexMeta, idType: IdType): void {
  meta.idType = idType;
  // UUIDs are canonical strings by then: exact keyword terms name them.
  const schemaType = idType === 'float' ? 'floating' : idType === 'uuid' ? 'keyword' : idType;
  meta.schema = { ...meta.schema, _id: { _type: schemaType } };
}

function isNoop(meta: IndexMeta, change: IndexChange): boolean {
  return change.settings === undefined && change.schema === undefined && (change.idType === undefined || meta.idType !== undefined);
}

function isDeepEqualMeta(a: IndexMeta, b: IndexMeta): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
