/**
 * Index metadata — settings, schema, `_id` type, shard allocation — kept in
 * the cluster state. Every change goes through one queue, so two requests
 * creating the same index, or fixing its `_id` type, never race.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { withSchemaReferences, type RpcClient, type ShardRef, type ShardStatsReply } from '@tessera/rpc';
import { allocateShards, type NodeDirectory } from '../cluster/nodes.js';
import { apiErrors } from '../errors.js';
import type { IdType } from '../documents/ids.js';
import type { StateStore } from '../state/local-store.js';
import type { ClusterState, GrowthReservation, IndexMeta, NamedScript, NodeRecord } from '../state/cluster-state.js';
import { createSchema, mergeSchema, type Schema } from '@tessera/schema';
import type { IndexSettings } from './settings.js';
import { SchemaPolicy, schemaPolicyErrors, type NewSchema } from './schema-policy.js';
import { placementOf, withPlacement, type Placement, type PlacementChange } from '../replication/placement.js';
import { matchingTemplates, withTemplates } from '../admin/templates.js';
import type { IndexAlias } from '../admin/aliases.js';
import { isReservedIndex } from '../admin/reserved.js';

/** The largest numeric document ID of an index (shared and raised in place). */
interface LargestId {
  value: number;
}

export interface IndexChange {
  settings?: Partial<IndexSettings>;
  schema?: unknown;
  idType?: IdType;
}

export class IndexRegistry {
  private queue: Promise<unknown> = Promise.resolve();
  /** Largest numeric document ID per index, learnt from the shards once and kept up to date. */
  private readonly largestIds = new Map<string, LargestId | Promise<LargestId>>();

  /** Each node client as handed out by `client()`: wrapped once (calls name their schema once the node holds it; metrics time every call). */
  private readonly wrappedClients = new WeakMap<RpcClient, RpcClient>();
  /** `--strict` and foreign schemas (schema-policy.ts); set once by the coordinator. */
  private policy = new SchemaPolicy({ strict: false });
  /** Growth reservations of this coordinator's writes in flight (`reserveGrowth`): never folded as left behind. */
  private readonly ownReservations = new Set<string>();
  /** Told the uuid of each index dropped (the replicator forgets its shards); set once by the coordinator. */
  private indexDropped: (uuid: string) => void = () => undefined;
  /** Whether this coordinator decides (the elected one of several); only then does it change the cluster state. */
  private decides: () => boolean = () => true;

  constructor(
    private readonly store: StateStore<ClusterState>,
    private readonly nodes: NodeDirectory,
    private readonly defaults: IndexSettings,
    private readonly wrapClient: (client: RpcClient) => RpcClient = (client) => client,
  ) {}

  useSchemaPolicy(policy: SchemaPolicy): void {
    this.policy = policy;
  }

  /**
   * Changes of the cluster state made on a coordinator that `decides` says
   * is not elected are refused with `leader_required` before anything is
   * done (cluster/leader-link.ts): its request goes to the elected one.
   */
  decideOnlyWhen(decides: () => boolean): void {
    this.decides = decides;
  }

  /** `listener` runs when an index is dropped, once it is out of the cluster state and before its copies are deleted. */
  onIndexDropped(listener: (uuid: string) => void): void {
    this.indexDropped = listener;
  }

  get(path: string): IndexMeta | undefined {
    const meta = this.store.get().indexes[path];
    return meta;
  }

  /** The index when it exists and `change` would not change it (what `ensure` resolves to at once), else undefined. */
  unchanged(path: string, change: IndexChange): IndexMeta | undefined {
    const existing = this.get(path);
    return existing && isNoop(existing, change) ? existing : undefined;
  }

  list(): IndexMeta[] {
    return Object.values(this.store.get().indexes);
  }

  /**
   * Create the index if missing and fold `change` into it. Resolves once the
   * state is durable and every shard copy is open on its node.
   */
  ensure(path: string, change: IndexChange = {}): Promise<IndexMeta> {
    const same = this.unchanged(path, change);
    if (same) return Promise.resolve(same);
    // Before a foreign schema is prepared (which may write its document).
    if (!this.decides()) return Promise.reject(this.notDecidingHere('an index created or changed'));
    const existing = this.get(path);
    let applied: IndexChange | undefined;
    if (!existing) {
      try {
        applied = this.creation(this.store.get(), path, change);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    // A new index's schema is prepared outside the queue: a foreign one may read or create its document through it.
    const preparing = applied === undefined ? Promise.resolve(undefined)
      : this.policy.prepareNewSchema(path, applied.schema, applied.settings !== undefined);
    return preparing.then((prepared) => this.serialised(async () => {
      const state = this.store.get();
      const current = state.indexes[path];
      let next: IndexMeta;
      if (!current) {
        // The templates and aliases of now, in the queue: a template or alias changed meanwhile counts.
        const creation = this.creation(state, path, change);
        // Created and dropped meanwhile, or templates changed: prepare here, which a foreign schema cannot (it would wait on this queue).
        const fresh: NewSchema = prepared !== undefined && isDeepStrictEqual(creation, applied) ? prepared : this.preparedInQueue(path, creation);
        const settings: IndexSettings = { ...this.defaults, ...creation.settings };
        // A new index is placed on the nodes active now; it waits for nobody.
        const active = this.nodes.activeNames();
        if (active.length === 0) throw apiErrors.noActiveNodes();
        next = {
          path,
          uuid: randomUUID(),
          createdAt: new Date().toISOString(),
          settings,
          schema: fresh.foreign === undefined ? fresh.schema : sharedForeignSchema(state, fresh),
          allocation: allocateShards(active, settings.number_of_shards, settings.number_of_replicas,
            Object.keys(state.indexes).length),
        };
        if (fresh.foreign !== undefined) next.foreign = fresh.foreign;
        if (change.idType) setIdType(next, change.idType);
        // An old copy of this path still pending on a chosen node goes first, or its documents would resurface.
        const allocation = next.allocation;
        const nodes = await this.settleDrops(state.nodes ?? {},
          (ref, node) => ref.index === path && allocation[ref.shard - 1]?.includes(node) === true, true);
        await this.openShards(next);
        const ok = await this.store.compareAndSet(state, { ...state, nodes, indexes: { ...state.indexes, [path]: next } });
        if (!ok) throw new Error('cluster state changed outside the registry queue');
        return next;
      } else {
        if (change.settings?.number_of_shards !== undefined &&
            change.settings.number_of_shards !== current.settings.number_of_shards) {
          throw apiErrors.shardsImmutable();
        }
        next = {
          ...current,
          settings: { ...current.settings, ...change.settings },
          schema: change.schema === undefined ? current.schema
            : mergeSchema(current.schema, this.policy.existingSchemaChange(path, current.foreign, change.schema)),
        };
        if (change.idType && !current.idType) setIdType(next, change.idType);
        if (isDeepEqualMeta(current, next)) return current;
      }
      const ok = await this.store.compareAndSet(state, { ...state, indexes: { ...state.indexes, [path]: next } });
      if (!ok) throw new Error('cluster state changed outside the registry queue');
      return next;
    }));
  }

  /**
   * What creating `path` in `state` applies: the change with the matching
   * templates under it (API.md §16.1). 400 for a reserved name, 409 for an
   * alias's.
   */
  private creation(state: ClusterState, path: string, change: IndexChange): IndexChange {
    if (isReservedIndex(path)) throw apiErrors.reservedIndexName(path);
    if (state.aliases !== undefined && Object.hasOwn(state.aliases, path)) throw apiErrors.indexNamesAlias(path);
    if (state.templates === undefined) return change;
    const templates = matchingTemplates(state.templates, path);
    if (templates.length === 0) return change;
    const { settings, schema } = withTemplates(templates, change.settings, change.schema);
    const out: IndexChange = { ...change };
    if (settings !== undefined) out.settings = settings;
    if (schema !== undefined) out.schema = schema;
    return out;
  }

  private preparedInQueue(path: string, change: IndexChange): NewSchema {
    if (this.policy.strict && change.settings === undefined) throw schemaPolicyErrors.strictSettings(path);
    if (foreignTarget(change.schema)) throw apiErrors.badBody(`Index ${path} changed while it was being created; retry`);
    const schema = createSchema(change.schema);
    return { schema: this.policy.strict && schema._strict === undefined ? { _strict: true, ...schema } : schema };
  }

  /**
   * Grow an index's schema with the fields a document brings. `fold` runs on
   * the schema current inside the queue, so two writes adding fields at once
   * both land, and a second write giving the same new field another type
   * fails (400) instead of overwriting the first.
   */
  updateSchema<T>(path: string, fold: (schema: Schema) => { schema: Schema; changed: boolean; result: T }, settles?: string): Promise<T> {
    let grownForeign: { foreign: string; schema: Schema } | undefined;
    const done = this.serialised(async () => {
      const state = this.store.get();
      const current = state.indexes[path];
      if (!current) throw apiErrors.indexNotFound(path);
      const folded = fold(current.schema);
      const settled = settles !== undefined && state.growthReserved?.[settles] !== undefined;
      if (folded.changed || settled) {
        let next = settled ? withoutReservations(state, [settles]) : state;
        if (folded.changed) ({ state: next, grownForeign } = withSchema(next, path, folded.schema));
        const ok = await this.store.compareAndSet(state, next);
        if (!ok) throw new Error('cluster state changed outside the registry queue');
      }
      if (settles !== undefined) this.ownReservations.delete(settles);
      return folded.result;
    });
    return done.then(async (result) => {
      if (grownForeign !== undefined) await this.policy.foreignSchemaChanged(grownForeign.foreign, grownForeign.schema);
      return result;
    });
  }

  /**
   * Record, durably, the schema a single write grows `meta`'s index to
   * before the write is sent (documents/handlers.ts): a coordinator stopped
   * between the shard's acceptance and the fold leaves it here, and the next
   * coordinator to decide folds it (`foldLeftReservations`), so an applied
   * document is never left with fields its index's schema lacks. Settled by
   * `updateSchema(…, token)` once accepted, or `releaseGrowth` once refused.
   */
  async reserveGrowth(meta: IndexMeta, schema: Schema): Promise<string> {
    const token = randomUUID();
    this.ownReservations.add(token);
    try {
      await this.updateState((state) => ({
        ...state, growthReserved: { ...state.growthReserved, [token]: { index: meta.path, uuid: meta.uuid, schema } },
      }));
    } catch (err) {
      this.ownReservations.delete(token);
      throw err;
    }
    return token;
  }

  /** Drop a reservation whose write was refused: the schema stays as it was. */
  async releaseGrowth(token: string): Promise<void> {
    try {
      await this.updateState((state) => (state.growthReserved?.[token] === undefined ? undefined : withoutReservations(state, [token])));
    } finally {
      this.ownReservations.delete(token);
    }
  }

  /**
   * Fold every reservation another coordinator (or this one before a
   * restart) left behind into its index's schema, and drop them: their
   * writes may have been applied. One that no longer fits (its index
   * dropped, or a field since grown to another type) is dropped and told to
   * `log`. Run by a coordinator when it begins deciding, before it serves.
   */
  async foldLeftReservations(log: (reservation: GrowthReservation, err: unknown) => void): Promise<void> {
    const grown: Array<{ foreign: string; schema: Schema }> = [];
    await this.updateState((state) => {
      const left = Object.entries(state.growthReserved ?? {}).filter(([token]) => !this.ownReservations.has(token));
      if (left.length === 0) return undefined;
      let next = withoutReservations(state, left.map(([token]) => token));
      for (const [, reservation] of left) {
        const meta = next.indexes[reservation.index];
        if (meta === undefined || meta.uuid !== reservation.uuid) continue;
        try {
          const merged = mergeSchema(meta.schema, reservation.schema);
          if (merged === meta.schema) continue;
          const changed = withSchema(next, reservation.index, merged);
          next = changed.state;
          if (changed.grownForeign !== undefined) grown.push(changed.grownForeign);
        } catch (err) {
          log(reservation, err);
        }
      }
      return next;
    });
    for (const { foreign, schema } of grown) await this.policy.foreignSchemaChanged(foreign, schema);
  }

  /**
   * Remove an index and every shard copy of it. Copies on nodes that are
   * down (or fail the call) are remembered and deleted when their node rejoins.
   */
  drop(path: string): Promise<void> {
    return this.serialised(async () => {
      const state = this.store.get();
      const meta = state.indexes[path];
      if (!meta) throw apiErrors.indexNotFound(path);
      const indexes = { ...state.indexes };
      delete indexes[path];
      // Forget the index and record its copies as pending drops in one step: a
      // crash in between leaves copies to delete, never a half-deleted live index.
      const nodes = { ...state.nodes };
      for (const { node, shard } of this.copies(meta)) {
        const record = nodes[node] ?? { firstJoinedAt: new Date().toISOString() };
        nodes[node] = { ...record, pendingDrops: [...(record.pendingDrops ?? []), { index: path, shard }] };
      }
      const forgotten: ClusterState = { ...state, indexes, nodes };
      await this.store.compareAndSet(state, forgotten);
      this.largestIds.delete(path);
      this.indexDropped(meta.uuid);
      const settled = await this.settleDrops(nodes, (ref) => ref.index === path, false);
      await this.store.compareAndSet(forgotten, { ...forgotten, nodes: settled });
    });
  }

  /** Node names the cluster state knows: every node that ever joined, and every node holding a copy. */
  knownNodes(): string[] {
    const state = this.store.get();
    const names = new Set(Object.keys(state.nodes ?? {}));
    for (const meta of Object.values(state.indexes)) for (const copies of meta.allocation) for (const node of copies) names.add(node);
    return [...names].sort();
  }

  /**
   * A node joined: remember it in the cluster state, whether it keeps an
   * etcd lease (NodeRecord.etcdLease), and delete the copies of indexes
   * dropped while it was away.
   */
  nodeJoined(name: string, etcdLease = false): Promise<void> {
    return this.serialised(async () => {
      const state = this.store.get();
      const record = state.nodes?.[name];
      if (record !== undefined && record.pendingDrops === undefined && (record.etcdLease === true) === etcdLease) return;
      const settled = record?.pendingDrops === undefined ? state.nodes ?? {} : await this.settleDrops(state.nodes ?? {}, (_ref, node) => node === name, false);
      const { etcdLease: _previous, ...rest } = settled[name] ?? { firstJoinedAt: new Date().toISOString() };
      const nodes = { ...settled, [name]: etcdLease ? { ...rest, etcdLease: true as const } : rest };
      const ok = await this.store.compareAndSet(state, { ...state, nodes });
      if (!ok) throw new Error('cluster state changed outside the registry queue');
    });
  }

  /** A shard's copies (primary first), primary term and in-sync set. */
  placement(meta: IndexMeta, shard: number): Placement {
    return placementOf(meta, shard);
  }

  /**
   * Change one shard's allocation order, primary term and in-sync set, in the
   * registry's queue (replication/replicator.ts). `update` sees the shard as it
   * is there and returns undefined to leave it; nothing changes if the index
   * was dropped (or re-created: another uuid) meanwhile.
   */
  updatePlacement(path: string, uuid: string, shard: number, update: (current: Placement) => PlacementChange | undefined): Promise<Placement | undefined> {
    return this.serialised(async () => {
      const state = this.store.get();
      const current = state.indexes[path];
      if (current === undefined || current.uuid !== uuid) return undefined;
      const before = placementOf(current, shard);
      const change = update(before);
      if (change === undefined) return before;
      const next = withPlacement(current, shard, change);
      const nodes = await this.movedCopies(state.nodes ?? {}, { index: path, shard }, before.copies, change.copies);
      const ok = await this.store.compareAndSet(state, { ...state, ...(nodes === undefined ? {} : { nodes }), indexes: { ...state.indexes, [path]: next } });
      if (!ok) throw new Error('cluster state changed outside the registry queue');
      return placementOf(next, shard);
    });
  }

  /** Date.now() of the node's loss, as recorded in the cluster state while it stays away. */
  lostSince(name: string): number | undefined {
    const lostAt = this.store.get().nodes?.[name]?.lostAt;
    return lostAt === undefined ? undefined : Date.parse(lostAt);
  }

  /** Record when a node was lost (undefined: it is back). */
  recordNodeLoss(name: string, lostAt: number | undefined): Promise<void> {
    return this.serialised(async () => {
      const state = this.store.get();
      const record = state.nodes?.[name];
      const next = lostAt === undefined ? undefined : new Date(lostAt).toISOString();
      if (record?.lostAt === next) return;
      const { lostAt: _previous, ...rest } = record ?? { firstJoinedAt: new Date().toISOString() };
      const ok = await this.store.compareAndSet(state, { ...state, nodes: { ...state.nodes, [name]: next === undefined ? rest : { ...rest, lostAt: next } } });
      if (!ok) throw new Error('cluster state changed outside the registry queue');
    });
  }

  /** The named scripts, oldest definition first. */
  namedScripts(): readonly NamedScript[] {
    return this.store.get().scripts ?? [];
  }

  /**
   * Change the named scripts in the registry's queue: `update` sees them as
   * they are there and returns the new list, or undefined to leave them.
   */
  updateNamedScripts(update: (current: readonly NamedScript[]) => NamedScript[] | undefined): Promise<void> {
    return this.updateState((state) => {
      const next = update(state.scripts ?? []);
      return next === undefined ? undefined : { ...state, scripts: next };
    });
  }

  /** The cluster state as it is now (never changed in place: every update replaces it). */
  snapshot(): Readonly<ClusterState> {
    return this.store.get();
  }

  /** The aliases by index path (API.md §16.2): one snapshot, replaced (never changed) by every update. */
  aliases(): Readonly<Record<string, IndexAlias>> | undefined {
    return this.store.get().aliases;
  }

  /**
   * Change the cluster state in the registry's queue (templates, aliases, named scripts): `update` sees
   * the state as it is there (throws to refuse) and returns the new state,
   * or undefined to leave it. Resolves once the new state is durable.
   */
  updateState(update: (state: ClusterState) => ClusterState | undefined): Promise<void> {
    return this.serialised(async () => {
      const state = this.store.get();
      const next = update(state);
      if (next === undefined) return;
      const ok = await this.store.compareAndSet(state, next);
      if (!ok) throw new Error('cluster state changed outside the registry queue');
    });
  }

  /** Resolves once the changes queued so far are done. */
  settled(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  /** Stats of every shard (primary copies). */
  async shardStats(meta: IndexMeta, options: { lengths?: boolean } = {}): Promise<ShardStatsReply[]> {
    return Promise.all(meta.allocation.map((copies, i) =>
      this.client(meta.path, copies[0], i + 1).call('shard.stats', { index: meta.path, shard: i + 1, lengths: options.lengths === true })));
  }

  /** The RPC client of the node holding a shard copy: 503 when no node holds it or its node is not active. */
  client(index: string, node: string | undefined, shard: number): RpcClient {
    const entry = node === undefined ? undefined : this.nodes.get(node);
    if (node === undefined || !entry) throw apiErrors.noShardNode(index, shard);
    if (!this.nodes.isActive(node)) throw apiErrors.nodeUnavailable(index, shard, node);
    let client = this.wrappedClients.get(entry.client);
    if (client === undefined) this.wrappedClients.set(entry.client, client = this.wrapClient(withSchemaReferences(entry.client)));
    return client;
  }

  /** Next generated numeric ID (1 + the largest ever used). */
  nextNumericId(meta: IndexMeta): number | Promise<number> {
    // The largest ID is kept by the coordinator that decides: two generating IDs would give the same one twice.
    if (!this.decides()) throw this.notDecidingHere('a numeric _id generated');
    const next = (largest: LargestId): number => (largest.value = Math.floor(largest.value) + 1);
    const largest = this.largestId(meta);
    return largest instanceof Promise ? largest.then(next) : next(largest);
  }

  /** Record a numeric ID written by a client, so generated IDs never reuse it (at once once the shards were asked). */
  noteNumericId(meta: IndexMeta, id: number): void | Promise<void> {
    if (!this.decides()) throw this.notDecidingHere('a numeric _id noted');
    const note = (largest: LargestId): void => {
      if (id > largest.value) largest.value = id;
    };
    const largest = this.largestId(meta);
    return largest instanceof Promise ? largest.then(note) : note(largest);
  }

  /** The index's largest numeric ID: asked of its shards the first time, then kept here. */
  private largestId(meta: IndexMeta): LargestId | Promise<LargestId> {
    const known = this.largestIds.get(meta.path);
    if (known !== undefined) return known;
    const asked = this.shardStats(meta).then((stats) => {
      const largest = { value: Math.max(0, ...stats.map((s) => s.maxNumericId)) };
      if (this.largestIds.get(meta.path) === asked) this.largestIds.set(meta.path, largest);
      return largest;
    });
    this.largestIds.set(meta.path, asked);
    asked.catch(() => {
      if (this.largestIds.get(meta.path) === asked) this.largestIds.delete(meta.path);
    });
    return asked;
  }

  private copies(meta: IndexMeta): Array<{ node: string; shard: number }> {
    return meta.allocation.flatMap((nodes, i) => nodes.map((node) => ({ node, shard: i + 1 })));
  }

  /**
   * Delete the pending drops that `which` selects from their nodes, when
   * active; resolves with the node records less the drops that succeeded.
   * A failed drop stays pending, or with `strict` (a new copy is about to be
   * opened in its place) fails the caller.
   */
  private async settleDrops(records: Record<string, NodeRecord>, which: (ref: ShardRef, node: string) => boolean,
    strict: boolean): Promise<Record<string, NodeRecord>> {
    const out: Record<string, NodeRecord> = {};
    await Promise.all(Object.entries(records).map(async ([node, record]) => {
      const pending = record.pendingDrops ?? [];
      const kept: ShardRef[] = [];
      for (const ref of pending) {
        if (!which(ref, node) || !this.nodes.isActive(node)) {
          kept.push(ref);
          continue;
        }
        try {
          await this.client(ref.index, node, ref.shard).call('shard.drop', ref);
        } catch (err) {
          if (strict) throw err;
          kept.push(ref);
        }
      }
      const { pendingDrops: _settled, ...rest } = record;
      out[node] = kept.length === 0 ? rest : { ...rest, pendingDrops: kept };
    }));
    return out;
  }

  /**
   * The node records after a shard's copies moved (`before` → `after`), or
   * undefined if none did: a copy leaving the allocation becomes a pending
   * drop of its node (deleted when it rejoins); a node taking a copy first
   * loses an old copy of that shard still pending there, or its documents
   * would resurface.
   */
  private async movedCopies(records: Record<string, NodeRecord>, ref: ShardRef, before: string[], after: string[]): Promise<Record<string, NodeRecord> | undefined> {
    const added = after.filter((node) => !before.includes(node));
    const removed = before.filter((node) => !after.includes(node));
    if (added.length === 0 && removed.length === 0) return undefined;
    const nodes = added.length === 0 ? { ...records }
      : await this.settleDrops(records, (pending, node) => pending.index === ref.index && pending.shard === ref.shard && added.includes(node), true);
    for (const node of removed) {
      const record = nodes[node] ?? { firstJoinedAt: new Date().toISOString() };
      nodes[node] = { ...record, pendingDrops: [...(record.pendingDrops ?? []), { ...ref }] };
    }
    return nodes;
  }

  private async openShards(meta: IndexMeta): Promise<void> {
    await Promise.all(this.copies(meta).map(({ node, shard }) =>
      this.client(meta.path, node, shard).call('shard.open', { index: meta.path, shard })));
  }

  /** A change of the cluster state, in the queue: only where this coordinator decides. */
  private notDecidingHere(what: string): Error {
    return apiErrors.leaderRequired(`${what} is decided by the elected coordinator`);
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    if (!this.decides()) return Promise.reject(this.notDecidingHere('a change of the cluster state'));
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

/** A new index naming a foreign schema that other indexes already share takes theirs (the cluster state is ahead of the document). */
function sharedForeignSchema(state: ClusterState, fresh: NewSchema): Schema {
  const sibling = Object.values(state.indexes).find((meta) => meta.foreign === fresh.foreign);
  return sibling === undefined ? fresh.schema : withoutId(sibling.schema);
}

function withoutId(schema: Schema): Schema {
  if (schema._id === undefined) return schema;
  const { _id: _dropped, ...rest } = schema;
  return rest;
}

function withIdOf(schema: Schema, own: Schema): Schema {
  return own._id === undefined ? schema : { ...schema, _id: own._id };
}

function foreignTarget(body: unknown): boolean {
  return body !== null && typeof body === 'object' && typeof (body as Record<string, unknown>)._foreign === 'string';
}

function isNoop(meta: IndexMeta, change: IndexChange): boolean {
  return change.settings === undefined && change.schema === undefined && (change.idType === undefined || meta.idType !== undefined);
}

function isDeepEqualMeta(a: IndexMeta, b: IndexMeta): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `state` with `path`'s schema replaced; indexes sharing its foreign schema grow with it (each keeps its own `_id` type). */
function withSchema(state: ClusterState, path: string, schema: Schema): { state: ClusterState; grownForeign?: { foreign: string; schema: Schema } } {
  const current = state.indexes[path] as IndexMeta;
  const indexes = { ...state.indexes, [path]: { ...current, schema } };
  if (current.foreign === undefined) return { state: { ...state, indexes } };
  const shared = withoutId(schema);
  for (const meta of Object.values(state.indexes)) {
    if (meta.path !== path && meta.foreign === current.foreign) indexes[meta.path] = { ...meta, schema: withIdOf(shared, meta.schema) };
  }
  return { state: { ...state, indexes }, grownForeign: { foreign: current.foreign, schema: shared } };
}

/** `state` without the growth reservations `tokens` (the key gone once none is left). */
function withoutReservations(state: ClusterState, tokens: readonly string[]): ClusterState {
  const { growthReserved, ...rest } = state;
  const left = { ...growthReserved };
  for (const token of tokens) delete left[token];
  return Object.keys(left).length === 0 ? rest : { ...rest, growthReserved: left };
}
