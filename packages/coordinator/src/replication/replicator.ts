/**
 * Replication and failover, driven by the coordinator (docs/cluster.md
 * "Replication and failure"):
 *
 * - A write goes to the shard's primary with the shard's primary term. The
 *   primary runs it (version check, merge, indexing, seq) and answers with
 *   the result, which the coordinator relays (`doc.replicate`) to every
 *   in-sync replica — and to copies recovering — and answers the client
 *   once every in-sync replica applied it. A replica that fails a relay
 *   leaves the in-sync set (persisted) before the client is answered, and
 *   recovers. Relaying through the coordinator keeps nodes talking only to
 *   the coordinator; the latency is the same two hops as a primary that
 *   replicates itself.
 * - When the primary's node is lost, writes to the shard wait; the relays
 *   in flight settle; the in-sync replica with the highest checkpoint is
 *   promoted with term + 1, and the other in-sync replicas (which hold the
 *   same changes) are told where they stand in the new term. An answer from
 *   the old primary that arrives later is never relayed: the write is retried
 *   on the new primary, whose history never had it.
 * - A copy out of sync whose node is active recovers (recovery.ts) and joins
 *   the in-sync set once it holds every change.
 * - A coordinator that begins deciding (started, restarted, elected) does not
 *   know which relays its predecessor left undone: a primary may hold a
 *   change an in-sync replica never got. Before a shard's next write its
 *   in-sync replicas' checkpoints are checked against the primary's seq (the
 *   resync; writes wait meanwhile); a replica behind leaves the in-sync set
 *   and recovers from the primary's log. A primary lost before that check
 *   is replaced, but only replicas checked stay in sync with the promoted one.
 */
import assert from 'node:assert/strict';
import {
  changeOf, CopyRelay, DEFERRED, type ReplicatedChange, type ReplicateReply, type RpcClient, type ShardCallName, type ShardCalls, type WriteCall,
  type WriteManyCall, type WriteManyReply, type WriteReply,
} from '@tessera/rpc';
import type { NodeDirectory } from '../cluster/nodes.js';
import { apiErrors } from '../errors.js';
import type { IndexMeta } from '../state/cluster-state.js';
import { isPrimaryLost } from './connection-loss.js';
import { replicationErrors } from './errors.js';
import { placementOf, type Placement, type PlacementChange } from './placement.js';
import { Reallocator, type CopyReplacement, type ReallocationHost } from './reallocation.js';
import { REPLICATION_DEFAULTS, type ReplicationLog, type ReplicationOptions } from './options.js';
import { Recovery, type RecoveryContext } from './recovery.js';
import { DIRECT_REFUSED_BACKOFF_MS, PrimaryPlacement, REFUSED } from './primary-placement.js';
import { ShardGroup } from './shard-group.js';

/** What the replicator needs of the index registry. */
export interface ReplicationHost extends ReallocationHost {
  get(path: string): IndexMeta | undefined;
  list(): IndexMeta[];
  /** The client of an active node (503 otherwise). */
  client(index: string, node: string | undefined, shard: number): RpcClient;
  /**
   * Change one shard's allocation order, term and in-sync set, through the
   * registry's queue; `update` sees the placement current there and returns
   * undefined to change nothing. Resolves with the placement after.
   */
  updatePlacement(path: string, uuid: string, shard: number, update: (current: Placement) => PlacementChange | undefined): Promise<Placement | undefined>;
  /** Resolves once the registry's queued work (index changes, pending drops) is done. */
  settled(): Promise<void>;
}

/** What `/.nodes` shows of one shard copy. */
export interface CopyReplicationState {
  inSync: boolean;
  /** Seq applied: the primary's own; a replica's checkpoint in the primary's numbering, when known. */
  seq?: number;
  recovering: boolean;
}

export interface ReplicationLag {
  index: string;
  shard: number;
  node: string;
  /** Changes the copy is behind its primary (the primary's seq when the copy's position is not known). */
  operations: number;
}

export class Replicator implements RecoveryContext {
  readonly options: ReplicationOptions;
  private readonly groups = new Map<string, ShardGroup>();
  private readonly reallocator: Reallocator;
  /** How each primary is placed (direct or not), and the direct writes sent to it. */
  private readonly placements: PrimaryPlacement;
  /** Nodes this coordinator counted lost while deciding, until they join again: a shard whose primary one of them holds fails over when an in-sync copy joins. */
  private readonly countedLost = new Set<string>();
  private closed = false;

  constructor(private readonly host: ReplicationHost, private readonly nodes: NodeDirectory, options: Partial<ReplicationOptions> = {}) {
    this.options = { ...REPLICATION_DEFAULTS, ...options };
    for (const key of ['failoverWaitMs', 'relayTimeoutMs', 'catchUpPageChanges', 'copyPageDocuments', 'recoveryRetryMs', 'controlTimeoutMs', 'rejoinTimeoutMs'] as const) {
      const value = this.options[key];
      assert.ok(Number.isSafeInteger(value) && value >= 1, `replication option ${key} must be a positive integer`);
    }
    // A node takes at most 10,000 changes per doc.replicate and per shard.changes read, and 10,000 documents per scan page.
    assert.ok(this.options.catchUpPageChanges <= 10_000 && this.options.copyPageDocuments <= 10_000, 'catch-up and copy pages hold at most 10,000 entries');
    // A timer's longest delay: past it setTimeout fires at once.
    assert.ok(Number.isSafeInteger(this.options.nodeLeftDelayMs) && this.options.nodeLeftDelayMs >= 0 && this.options.nodeLeftDelayMs < 2 ** 31,
      'replication option nodeLeftDelayMs must be an integer from 0 to 2^31 − 1');
    nodes.on('nodeLost', (entry) => {
      if (this.options.decides()) this.nodeLost(entry.name);
      else for (const group of this.groups.values()) group.wake();
    });
    nodes.on('nodeJoined', (entry) => this.nodeJoined(entry.name));
    // After this replicator's own listeners: a loss is failed over before its copies are looked at.
    this.reallocator = new Reallocator(host, nodes, this, this.options);
    this.placements = new PrimaryPlacement({
      options: this.options, nodes,
      client: (group, node) => this.client(group, node),
      meta: (group) => this.host.get(group.index),
      needsResync: (group, placement) => this.needsResync(group, placement),
      reconcile: (group) => this.reconcile(group),
      relayFailed: (meta, shard, term, failed) => this.relayFailed(meta, shard, term, failed),
    });
    // Copies left out of sync before a coordinator restart recover once their nodes are here.
    setImmediate(() => this.reconcileAll());
  }

  get log(): ReplicationLog {
    return this.options.log;
  }

  /**
   * A document write on the shard's primary, relayed to its replicas;
   * resolves once every in-sync copy has it. On a coordinator that does not
   * decide, the elected one runs it (one coordinator relays, and knows every
   * copy recovering or being promoted), if the write was routed here from
   * the cluster state at revision `routedAt` (a request's document write).
   */
  write(meta: IndexMeta, shard: number, call: WriteCall, routedAt?: number): Promise<WriteReply> {
    if (!this.options.decides()) {
      const { leaderWrite } = this.options;
      if (leaderWrite === undefined) return Promise.reject(apiErrors.leaderRequired('writes are relayed by the elected coordinator'));
      // Anything but a request's routed document write is the elected coordinator's to run (its request is forwarded whole).
      if (routedAt === undefined) return Promise.reject(apiErrors.leaderRequired('not a routed document write'));
      if (this.options.fenceState !== undefined) return this.writeDirect(meta, shard, call, routedAt, leaderWrite);
      this.options.onRoutedWrite?.('elected');
      return leaderWrite(meta, call, routedAt);
    }
    return this.throughPrimary(meta, shard, 'doc.write', call, (reply, term) => [changeOf(reply, term, call.content)]);
  }

  /**
   * A document write on a coordinator that does not decide goes straight to
   * the shard's primary, which relays it to its replicas itself — once this
   * coordinator's state holds every change acknowledged before it, as a
   * read's does (an alias moved, an index dropped). It goes through the
   * elected coordinator instead when the state moved since the write was
   * routed (the elected one then judges the routing), when the primary is
   * not active here, or when the primary refuses it before running it (not
   * placed to take direct writes now: a copy recovering, a relay failed, a
   * node without a relay listener; writes of the shard then go through the
   * elected one for a moment before they try again).
   */
  private async writeDirect(meta: IndexMeta, shard: number, call: WriteCall, routedAt: number,
    leaderWrite: NonNullable<ReplicationOptions['leaderWrite']>): Promise<WriteReply> {
    const group = this.group(meta, shard);
    if (Date.now() >= group.directRefusedUntil) {
      await this.options.fenceState?.();
      const placement = this.placement(group);
      if (this.options.stateRevision?.() === routedAt && placement?.primary !== undefined && this.nodes.isActive(placement.primary)) {
        const sent = await this.placements.send(group, placement as Placement & { primary: string }, call);
        if (sent !== REFUSED) return sent;
        group.directRefusedUntil = Date.now() + DIRECT_REFUSED_BACKOFF_MS;
      }
    }
    this.options.onRoutedWrite?.('elected');
    return leaderWrite(meta, call, routedAt);
  }

  /**
   * Replicas that failed a direct write's relay in `term` leave the in-sync
   * set (on the elected coordinator; the others ask it), and the primary,
   * which takes no direct write since, is placed again. Rejects when the
   * shard is no longer in `term` (a promotion may have chosen a copy without
   * the write): the write must not be acknowledged.
   */
  async relayFailed(meta: IndexMeta, shard: number, term: number, nodes: string[]): Promise<void> {
    if (!this.options.decides()) {
      const report = this.options.leaderRelayFailed;
      if (report === undefined) throw apiErrors.leaderRequired('relay failures are judged by the elected coordinator');
      return report(meta, shard, term, nodes);
    }
    const group = this.group(meta, shard);
    await group.serial(async () => {
      const current = this.placement(group);
      if (current === undefined || current.term !== term) throw replicationErrors.primarySwitched(group.index, group.shard);
      // A copy the primary relayed to for its recovery: that attempt is void (before it could join the in-sync set).
      for (const node of nodes) {
        if (!current.inSync.includes(node)) group.recoveries.get(node)?.relayFailed(new Error(`a relay from the primary ${current.primary ?? ''} failed`));
      }
      const leaving = nodes.filter((node) => node !== current.primary && current.inSync.includes(node));
      if (leaving.length === 0) return;
      await this.takeOutOfSync(group, term, leaving);
      const after = this.placement(group);
      if (after === undefined || after.term !== term || leaving.some((node) => after.inSync.includes(node))) {
        throw replicationErrors.primarySwitched(group.index, group.shard);
      }
      this.log.warn({ index: group.index, shard: group.shard, nodes: leaving, term }, 'replica failed a relay from its primary; it leaves the in-sync set');
    });
    if (group.placed?.term === term) group.placed = undefined;
    this.reconcile(group);
  }

  /** Many writes to one shard (RESTORE): one call to the primary, one relay per replica; on the elected coordinator only. */
  async writeMany(meta: IndexMeta, shard: number, call: WriteManyCall): Promise<WriteManyReply> {
    if (!this.options.decides()) throw apiErrors.leaderRequired('RESTORE runs on the elected coordinator');
    // Relayed by this coordinator: the primary takes no direct write meanwhile (placed so before the batch runs).
    const group = this.group(meta, shard);
    group.batches++;
    try {
      return await this.throughPrimary(meta, shard, 'doc.writeMany', call, (replies, term) =>
        replies.flatMap((reply) => ('error' in reply ? [] : [changeOf(reply, term)])));
    } finally {
      group.batches--;
      this.reconcile(group);
    }
  }

  /**
   * A read on the shard's primary (read-your-writes). While the primary is
   * lost and being replaced, the read waits for the new one; a read cut off
   * by the loss of its node is asked again there (reads change nothing).
   */
  read<M extends ShardCallName>(meta: IndexMeta, shard: number, method: M, params: ShardCalls[M][0]): Promise<ShardCalls[M][1]> {
    const primary = meta.allocation[shard - 1]?.[0];
    // The common case without a wait: the primary is active (during a switch it is not).
    if (primary === undefined || !this.nodes.isActive(primary)) return this.readWaiting(meta, shard, method, params);
    return this.host.client(meta.path, primary, shard).call(method, params).catch((err: unknown) => {
      if (!isPrimaryLost(err)) throw err;
      return this.readWaiting(meta, shard, method, params);
    });
  }

  /**
   * `read` answered synchronously when the primary is active and its
   * transport can (`RpcClient.callNow`: a cached document in the embedded
   * server); DEFERRED otherwise — and after a connection loss, which `read`
   * then handles as it does.
   */
  readNow<M extends ShardCallName>(meta: IndexMeta, shard: number, method: M, params: ShardCalls[M][0]): ShardCalls[M][1] | typeof DEFERRED {
    const primary = meta.allocation[shard - 1]?.[0];
    if (primary === undefined || !this.nodes.isActive(primary)) return DEFERRED;
    const client = this.host.client(meta.path, primary, shard);
    if (client.callNow === undefined) return DEFERRED;
    try {
      return client.callNow(method, params);
    } catch (err) {
      if (isPrimaryLost(err)) return DEFERRED;
      throw err;
    }
  }

  private async readWaiting<M extends ShardCallName>(meta: IndexMeta, shard: number, method: M, params: ShardCalls[M][0]): Promise<ShardCalls[M][1]> {
    const group = this.group(meta, shard);
    const deadline = Date.now() + this.options.failoverWaitMs;
    for (;;) {
      const placement = await this.activePrimary(group, deadline);
      try {
        return await this.host.client(meta.path, placement.primary, shard).call(method, params);
      } catch (err) {
        if (isPrimaryLost(err) && this.canFailOver(placement) &&
            await this.waitFor(group, deadline, (now) => now.term !== placement.term || this.nodes.isActive(placement.primary))) continue;
        throw err;
      }
    }
  }

  /** The placement once no switch runs and its primary is active (waiting for a promotion if one can happen). */
  private async activePrimary(group: ShardGroup, deadline: number): Promise<Placement & { primary: string }> {
    for (;;) {
      if (!(await group.waitForSwitch(deadline))) throw replicationErrors.primarySwitching(group.index, group.shard);
      const placement = this.placement(group);
      if (placement === undefined) throw apiErrors.indexNotFound(group.index);
      const { primary, term } = placement;
      if (primary !== undefined && this.nodes.isActive(primary)) return placement as Placement & { primary: string };
      // Nothing was sent: wait for a new primary, or for this one to come back.
      if (!this.canFailOver(placement) ||
          !(await this.waitFor(group, deadline, (now) => now.term !== term || this.nodes.isActive(primary as string)))) {
        throw primary === undefined ? apiErrors.noShardNode(group.index, group.shard) : apiErrors.nodeUnavailable(group.index, group.shard, primary);
      }
    }
  }

  /** For `/.nodes`. */
  copyState(index: string, shard: number, node: string): CopyReplicationState {
    const meta = this.host.get(index);
    if (meta === undefined) return { inSync: false, recovering: false };
    const placement = placementOf(meta, shard);
    const group = this.groups.get(groupKey(meta.uuid, shard));
    const state: CopyReplicationState = { inSync: placement.inSync.includes(node), recovering: group?.recoveries.has(node) === true };
    // Direct writes pass by this coordinator: the copies' own reports say where they stand.
    if (group?.placed?.direct === true) return state;
    if (node === placement.primary) {
      if (group !== undefined && group.primarySeq > 0) state.seq = group.primarySeq;
    } else {
      const position = group?.positions.get(node);
      if (position !== undefined && position.checkpointTerm === placement.term) state.seq = position.checkpoint;
    }
    return state;
  }

  /** Replication lag of every replica copy on an active node, asked of the nodes now (for the metrics scrape). */
  async lag(): Promise<ReplicationLag[]> {
    const out: ReplicationLag[] = [];
    await Promise.all(this.host.list().flatMap((meta) => meta.allocation.map(async (_copies, i) => {
      const placement = placementOf(meta, i + 1);
      const { primary } = placement;
      if (primary === undefined || !this.nodes.isActive(primary)) return;
      const stats = (node: string) => this.host.client(meta.path, node, i + 1)
        .call('shard.stats', { index: meta.path, shard: i + 1 }, { timeoutMs: this.options.controlTimeoutMs })
        .catch(() => undefined);
      const replicas = placement.copies.slice(1).filter((node) => this.nodes.isActive(node));
      const [primaryStats, ...replicaStats] = await Promise.all([stats(primary), ...replicas.map(stats)]);
      if (primaryStats === undefined) return;
      replicas.forEach((node, r) => {
        const position = replicaStats[r]?.replication;
        if (position === undefined) return;
        const behind = position.checkpointTerm === placement.term ? Math.max(0, primaryStats.seq - position.checkpoint) : primaryStats.seq;
        out.push({ index: meta.path, shard: i + 1, node, operations: behind });
      });
    })));
    return out;
  }

  /** Forget a dropped index's shards (their recoveries stop). */
  forgetIndex(uuid: string): void {
    for (const [key, group] of this.groups) {
      if (group.uuid !== uuid) continue;
      for (const recovery of group.recoveries.values()) recovery.cancel();
      this.groups.delete(key);
    }
  }

  /**
   * This coordinator was elected to decide: what a restarted coordinator
   * does — nodes of the cluster state that are not here count as lost, at
   * once if this coordinator saw them lost, another one did or etcd says so
   * (`lostElsewhere`: name → Date.now() of the loss, or of finding the node's
   * etcd lease gone), after the rejoin timeout otherwise
   * (reallocation.ts); copies out of sync recover.
   */
  takeOver(lostElsewhere: ReadonlyMap<string, number> = new Map()): void {
    for (const group of this.groups.values()) {
      group.resynced.clear();
      group.placed = undefined;
    }
    this.reallocator.takeOver(lostElsewhere);
    this.reconcileAll();
  }

  /** A node still given the rejoin timeout is known gone (its etcd lease ended): lost now (reallocation.ts `gone`). */
  nodeGone(name: string): void {
    this.reallocator.gone(name);
  }

  /** Stop every recovery and re-allocation timer (shutdown). */
  close(): void {
    this.closed = true;
    this.reallocator.close();
    for (const group of this.groups.values()) for (const recovery of group.recoveries.values()) recovery.cancel();
  }

  /** A node was lost: shards whose primary it held fail over; its in-sync copies leave the in-sync set. */
  nodeLost(name: string): void {
    this.countedLost.add(name);
    for (const meta of this.host.list()) {
      for (let shard = 1; shard <= meta.allocation.length; shard++) {
        const placement = placementOf(meta, shard);
        if (!placement.copies.includes(name)) continue;
        const group = this.group(meta, shard);
        group.recoveries.get(name)?.cancel();
        if (placement.primary === name) {
          this.beginFailover(group, name);
        } else if (placement.inSync.includes(name)) {
          void this.leaveInSync(group, placement.term, [name], 'node lost').catch((err: unknown) =>
            this.log.error({ index: meta.path, shard, node: name, err: describe(err) }, 'could not take a lost copy out of the in-sync set'));
        }
      }
    }
    for (const group of this.groups.values()) group.wake();
  }

  /**
   * A node joined: its copies out of sync recover (after the registry
   * handled the join: pending drops first). A shard whose primary is lost
   * and had no in-sync copy here to promote then (a coordinator that took
   * over before the replicas rejoined it) fails over now if this node holds
   * one.
   */
  nodeJoined(name: string): void {
    this.countedLost.delete(name);
    // A node that joins again may have restarted: it holds no placement until placed again.
    for (const group of this.groups.values()) if (group.placed?.primary === name) group.placed = undefined;
    if (this.options.decides()) {
      for (const meta of this.host.list()) {
        for (let shard = 1; shard <= meta.allocation.length; shard++) {
          const { primary, inSync } = placementOf(meta, shard);
          if (primary === undefined || !this.countedLost.has(primary) || this.nodes.isActive(primary) || !inSync.includes(name)) continue;
          const group = this.group(meta, shard);
          if (!group.switching) this.beginFailover(group, primary);
        }
      }
    }
    for (const group of this.groups.values()) group.wake();
    setImmediate(() => {
      void this.host.settled().then(() => this.reconcileAll());
    });
  }

  /** Fail the shard over from its lost primary, in the background. */
  private beginFailover(group: ShardGroup, lost: string): void {
    // Synchronously: from now on a write waits, and an answer of the lost primary is not relayed.
    const endSwitch = group.beginSwitch();
    void this.failover(group, lost).catch((err: unknown) =>
      this.log.error({ index: group.index, shard: group.shard, node: lost, err: describe(err) }, 'shard failover failed'))
      .finally(() => {
        endSwitch();
        this.reconcile(group);
      });
  }

  /**
   * Replace `lost`'s copy of the shard with a new one on the node `choose`
   * names (reallocation.ts). Runs after any primary switch, in the shard's
   * serial queue, so a promotion never works from copies changed under it.
   * The new copy is out of sync: it recovers from the primary.
   */
  async replaceCopy(meta: IndexMeta, shard: number, lost: string, choose: (current: Placement) => string | undefined): Promise<CopyReplacement> {
    const group = this.group(meta, shard);
    await group.waitForSwitch(Date.now() + this.options.failoverWaitMs);
    let outcome = { status: 'unchanged' } as CopyReplacement;
    await group.serial(() => this.host.updatePlacement(group.index, group.uuid, shard, (current) => {
      if (!current.copies.includes(lost) || this.nodes.isActive(lost)) return undefined;
      if (current.primary === lost) {
        outcome = { status: 'primary' };
        return undefined;
      }
      const node = choose(current);
      if (node === undefined) {
        outcome = { status: 'no-node' };
        return undefined;
      }
      assert.ok(!current.copies.includes(node) && this.nodes.isActive(node), 'a replacement copy goes to an active node holding no copy of the shard');
      outcome = { status: 'replaced', node, term: current.term };
      return { copies: current.copies.map((copy) => (copy === lost ? node : copy)), term: current.term, inSync: current.inSync.filter((copy) => copy !== lost) };
    }));
    if (outcome.status === 'replaced') {
      group.relays.delete(lost);
      group.positions.delete(lost);
      this.reconcile(group);
    }
    return outcome;
  }

  // RecoveryContext

  placement(group: ShardGroup): Placement | undefined {
    const meta = this.host.get(group.index);
    return meta === undefined || meta.uuid !== group.uuid ? undefined : placementOf(meta, group.shard);
  }

  client(group: ShardGroup, node: string): RpcClient {
    return this.host.client(group.index, node, group.shard);
  }

  schema(group: ShardGroup): Record<string, unknown> | undefined {
    return this.host.get(group.index)?.schema;
  }

  isActive(node: string): boolean {
    return this.nodes.isActive(node);
  }

  tracked(group: ShardGroup, node: string, term: number): Promise<void> {
    return this.placements.tracked(group, node, term);
  }

  markInSync(group: ShardGroup, node: string, term: number, recovery: Recovery): Promise<boolean> {
    // Serial with the judging of failed relays: a relay the copy failed is seen before it joins, or takes it out after.
    return group.serial(async () => {
      if (recovery.isCancelled || recovery.failure !== undefined) return false;
      const after = await this.host.updatePlacement(group.index, group.uuid, group.shard, (current) => {
        if (current.term !== term || !current.copies.includes(node) || current.inSync.includes(node)) return undefined;
        return { copies: current.copies, term, inSync: [...current.inSync, node] };
      });
      const joined = after !== undefined && after.term === term && after.inSync.includes(node);
      // The recovery brought it to the primary's seq: nothing to check.
      if (joined) {
        group.resynced.add(node);
        // Once the recovery has ended: the primary may be placed to take direct writes again.
        setImmediate(() => this.reconcile(group));
      }
      return joined;
    });
  }

  private group(meta: IndexMeta, shard: number): ShardGroup {
    const key = groupKey(meta.uuid, shard);
    let group = this.groups.get(key);
    if (group === undefined) this.groups.set(key, group = new ShardGroup(meta.uuid, meta.path, shard));
    return group;
  }

  private async throughPrimary<M extends 'doc.write' | 'doc.writeMany'>(meta: IndexMeta, shard: number, method: M,
    params: ShardCalls[M][0], changesOf: (reply: ShardCalls[M][1], term: number) => ReplicatedChange[]): Promise<ShardCalls[M][1]> {
    const group = this.group(meta, shard);
    const deadline = Date.now() + this.options.failoverWaitMs;
    for (;;) {
      const placement = await this.activePrimary(group, deadline);
      const { primary, term } = placement;
      if (this.options.stateRevision !== undefined) {
        // Direct writes and this coordinator's relays never interleave on a replica: each write goes the way the primary is placed.
        const held = group.placed;
        const placed = held !== undefined && !group.placing && held.primary === primary && held.term === term;
        if (placed && held.direct && method === 'doc.write') {
          const sent = await this.placements.send(group, placement, params as WriteCall);
          if (sent !== REFUSED) return sent as ShardCalls[M][1];
          // Refused before it ran: its placement changed meanwhile (a relay failed); placed again, then sent again.
          if (group.placed === held) group.placed = undefined;
        }
        if (!placed || held.direct) {
          this.reconcile(group);
          if (Date.now() >= deadline) throw replicationErrors.primarySwitching(meta.path, shard);
          await group.changed(deadline);
          continue;
        }
      }
      // After the placement: the check runs once no direct write moves the primary's seq under it.
      if (this.needsResync(group, placement)) {
        if (await this.resync(group)) continue;
        // The check could not be made (the primary did not answer): asked again after the next change, within the deadline.
        if (Date.now() >= deadline) throw replicationErrors.primarySwitching(meta.path, shard);
        await group.changed(deadline);
        continue;
      }
      // Until its relay is registered, the write counts as sent: the primary is not placed direct before (`placed`).
      const sent = this.options.stateRevision === undefined ? undefined : group.beginSending();
      let reply: ShardCalls[M][1];
      let relayed: Promise<void> | undefined;
      try {
        try {
          // Object.assign, not `{ ...params, term }`: a spread with a key the source lacks costs ~2 µs on Node 20's V8, ~0.1 µs so.
          reply = await this.host.client(meta.path, primary, shard).call(method, Object.assign({}, params, { term }));
        } catch (err) {
          // The write may have run on a primary now lost: retried only under a new primary, whose history never had it.
          if (isPrimaryLost(err) && this.canFailOver(placement) &&
              await this.waitFor(group, deadline, (now) => now.term !== term)) continue;
          throw err;
        }
        // An answer that arrives while the primary is being replaced waits for the outcome: relayed if it stays
        // primary; if a replica took over, the write was never relayed nor acknowledged, and is made again there.
        // Without a switch, nothing is awaited from here to the relay's registration (a failover drains the relays).
        if (group.switching && !(await group.waitForSwitch(deadline))) throw replicationErrors.primarySwitching(meta.path, shard);
        const now = this.placement(group);
        if (now === undefined) throw apiErrors.indexNotFound(meta.path);
        if (now.term !== term) {
          if (Date.now() < deadline) continue;
          throw replicationErrors.primarySwitched(meta.path, shard);
        }
        const changes = changesOf(reply, term);
        for (const change of changes) if (change.seq !== undefined && change.seq > group.primarySeq) group.primarySeq = change.seq;
        // The in-sync set and the recoveries as they are now: a copy that joined while the primary ran the write gets it too.
        if (changes.length > 0) relayed = this.relay(group, now, changes, params.commit === true, meta.schema);
      } finally {
        sent?.();
      }
      if (relayed !== undefined) await relayed;
      return reply;
    }
  }

  /** Some in-sync copy other than the primary is active: a promotion can happen. */
  private canFailOver(placement: Placement): boolean {
    return placement.inSync.some((node) => node !== placement.primary && this.nodes.isActive(node));
  }

  private async waitFor(group: ShardGroup, deadline: number, ready: (placement: Placement) => boolean): Promise<boolean> {
    for (;;) {
      if (!(await group.waitForSwitch(deadline))) return false;
      const placement = this.placement(group);
      if (placement === undefined) return false;
      if (ready(placement)) return true;
      if (Date.now() >= deadline) return false;
      await group.changed(deadline);
    }
  }

  /**
   * Relay changes to the replicas: awaited for in-sync copies and copies
   * finishing a recovery, in the background for copies still copying. An
   * in-sync copy that fails leaves the in-sync set before this resolves.
   */
  private relay(group: ShardGroup, placement: Placement, changes: ReplicatedChange[], commit: boolean,
    schema: Record<string, unknown>): Promise<void> {
    const awaited: string[] = [];
    for (const node of placement.inSync) if (node !== placement.primary) awaited.push(node);
    for (const [node, recovery] of group.recoveries) {
      if (awaited.includes(node) || node === placement.primary) continue;
      if (recovery.tracking) {
        awaited.push(node);
      } else {
        // A copy still copying catches up from the log anyway: a failure here is not a failure of the write.
        this.relayTo(group, node, placement.term, changes, commit, schema).catch(() => undefined);
      }
    }
    if (awaited.length === 0) return Promise.resolve();
    const phase = (async () => {
      const results = await Promise.allSettled(awaited.map((node) => this.relayTo(group, node, placement.term, changes, commit, schema)));
      const failed: Array<{ node: string; err: unknown }> = [];
      results.forEach((result, i) => {
        if (result.status === 'rejected') failed.push({ node: awaited[i] as string, err: result.reason });
      });
      if (failed.length === 0) return;
      await group.serial(async () => {
        const current = this.placement(group);
        if (current === undefined) return;
        const leaving: string[] = [];
        for (const { node, err } of failed) {
          if (current.inSync.includes(node)) leaving.push(node);
          else group.recoveries.get(node)?.relayFailed(err);
        }
        if (leaving.length > 0) {
          await this.takeOutOfSync(group, current.term, leaving);
          this.log.warn({ index: group.index, shard: group.shard, nodes: leaving, term: current.term,
            err: describe(failed.find((f) => leaving.includes(f.node))?.err) }, 'replica failed a relay; it leaves the in-sync set');
        }
      });
      this.reconcile(group);
    })();
    group.track(phase);
    return phase;
  }

  private relayTo(group: ShardGroup, node: string, term: number, changes: ReplicatedChange[], commit: boolean,
    schema: Record<string, unknown>): Promise<ReplicateReply> {
    let relay = group.relays.get(node);
    if (relay === undefined) {
      relay = new CopyRelay(group.index, group.shard, () => this.host.client(group.index, node, group.shard), this.options.relayTimeoutMs);
      group.relays.set(node, relay);
    }
    return relay.send(term, changes, commit, schema).then((reply) => {
      group.positions.set(node, reply.position);
      return reply;
    });
  }

  /** Copies leave the in-sync set (lost node, failed relay); each recovers once its node is active. */
  private async leaveInSync(group: ShardGroup, term: number, nodes: string[], why: string): Promise<void> {
    await group.serial(() => this.takeOutOfSync(group, term, nodes));
    this.log.warn({ index: group.index, shard: group.shard, nodes, term }, `shard copies leave the in-sync set: ${why}`);
    this.reconcile(group);
  }

  private async takeOutOfSync(group: ShardGroup, term: number, nodes: string[]): Promise<void> {
    await this.host.updatePlacement(group.index, group.uuid, group.shard, (current) => {
      if (current.term !== term) return undefined;
      const inSync = current.inSync.filter((node) => node === current.primary || !nodes.includes(node));
      return inSync.length === current.inSync.length ? undefined : { copies: current.copies, term, inSync };
    });
  }

  /**
   * Replace a lost primary. Writes already wait (the switch began when the
   * loss was seen); relays in flight settle first, so the in-sync copies that
   * remain hold the same changes. The one with the highest checkpoint is
   * promoted under term + 1; the others that report the same checkpoint stay
   * in sync, told the new primary's seq as their checkpoint in the new term.
   */
  private async failover(group: ShardGroup, lost: string): Promise<void> {
    for (const recovery of group.recoveries.values()) recovery.cancel();
    await group.drain();
    await group.serial(async () => {
      const placement = this.placement(group);
      if (placement === undefined || placement.primary !== lost) return;
      const ref = { index: group.index, shard: group.shard };
      let candidates = placement.inSync.filter((node) => node !== lost && this.nodes.isActive(node));
      if (this.options.stateRevision !== undefined) {
        // The lost primary may have relayed its direct writes itself: a relay still on the wire could land after the positions
        // are read. Each candidate first adopts the next term (an empty doc.replicate), and refuses the lost one's from then on.
        const fenced = await Promise.all(candidates.map((node) => this.client(group, node)
          .call('doc.replicate', { ...ref, term: placement.term + 1, changes: [] }, { timeoutMs: this.options.controlTimeoutMs })
          .then(() => node, () => undefined)));
        candidates = fenced.filter((node) => node !== undefined);
      }
      const answers = await Promise.all(candidates.map(async (node) => {
        try {
          const stats = await this.client(group, node).call('shard.stats', ref, { timeoutMs: this.options.controlTimeoutMs });
          return stats.replication === undefined ? undefined : { node, position: stats.replication };
        } catch {
          return undefined;
        }
      }));
      const answered = answers.filter((a) => a !== undefined);
      if (answered.length === 0) {
        this.log.error({ ...ref, lost, term: placement.term, inSync: placement.inSync },
          'shard primary lost with no copy in sync to promote; writes wait for it to return');
        return;
      }
      const inTerm = answered.filter((a) => a.position.checkpointTerm === placement.term);
      // Highest checkpoint first; ties keep the allocation order.
      const chosen = [...(inTerm.length > 0 ? inTerm : answered)].sort((a, b) => b.position.checkpoint - a.position.checkpoint)[0] as typeof answered[number];
      // A follower must also have been checked by this coordinator (resynced): relays a coordinator before left half done may have
      // applied different changes above the same checkpoint on two replicas, which the follow below would hide. The others recover.
      const followers = inTerm.filter((a) => a !== chosen && a.position.checkpoint === chosen.position.checkpoint && group.resynced.has(a.node))
        .map((a) => a.node);
      const term = placement.term + 1;
      const copies = [chosen.node, ...placement.copies.filter((node) => node !== chosen.node)];
      // The term is persisted before any node hears of it: the cluster state is never behind a node.
      await this.host.updatePlacement(group.index, group.uuid, group.shard, (current) =>
        (current.term === placement.term && current.primary === lost ? { copies, term, inSync: [chosen.node, ...followers] } : undefined));
      if (this.placement(group)?.term !== term) return;
      const base = chosen.position.seq;
      const told = await Promise.all([chosen.node, ...followers].map((node) =>
        this.client(group, node).call('shard.follow', { ...ref, term, checkpoint: base }, { timeoutMs: this.options.controlTimeoutMs })
          .then(() => undefined, (err: unknown) => ({ node, err }))));
      const untold = told.filter((t) => t !== undefined && t.node !== chosen.node).map((t) => (t as { node: string }).node);
      if (untold.length > 0) await this.takeOutOfSync(group, term, untold);
      group.positions.clear();
      group.primarySeq = base;
      group.placed = undefined;
      this.log.warn({ ...ref, lost, promoted: chosen.node, term, checkpoint: chosen.position.checkpoint, seq: base, inSync: [chosen.node, ...followers].filter((n) => !untold.includes(n)) },
        'shard primary promoted');
    });
  }

  /** An active in-sync replica was not checked against the primary yet (only the deciding coordinator checks). */
  private needsResync(group: ShardGroup, placement: Placement): boolean {
    return this.options.decides() &&
      placement.inSync.some((node) => node !== placement.primary && !group.resynced.has(node) && this.nodes.isActive(node));
  }

  /** The shard's resync (see the header), once for concurrent callers; resolves false if it could not be made now. */
  private resync(group: ShardGroup): Promise<boolean> {
    group.resyncing ??= this.checkInSyncReplicas(group).finally(() => {
      group.resyncing = undefined;
    }).then((checked) => {
      // Replicas taken out recover; so do copies out of sync that waited for the check.
      if (checked) this.reconcile(group);
      return checked;
    }, (err: unknown) => {
      this.log.error({ index: group.index, shard: group.shard, err: describe(err) }, 'could not check the in-sync replicas against the primary');
      return false;
    });
    return group.resyncing;
  }

  /**
   * Writes wait and relays in flight settle; then each active in-sync
   * replica not checked yet whose checkpoint is not the primary's seq in the
   * primary's term leaves the in-sync set (it recovers from the primary's
   * log, reconcile). A replica whose node is not active is left to its loss
   * (a relay to it fails, or it is declared lost) and checked if it returns.
   */
  private async checkInSyncReplicas(group: ShardGroup): Promise<boolean> {
    const endSwitch = group.beginSwitch();
    try {
      await group.drain();
      return await group.serial(async () => {
        const placement = this.placement(group);
        if (placement === undefined) return false;
        const { primary, term } = placement;
        if (primary === undefined || !this.nodes.isActive(primary)) return false;
        const ref = { index: group.index, shard: group.shard };
        const position = (node: string) => this.client(group, node).call('shard.stats', ref, { timeoutMs: this.options.controlTimeoutMs })
          .then((stats) => stats.replication, () => undefined);
        const replicas = placement.inSync.filter((node) => node !== primary && !group.resynced.has(node) && this.nodes.isActive(node));
        const [primaryPosition, ...positions] = await Promise.all([position(primary), ...replicas.map(position)]);
        if (primaryPosition === undefined) return false;
        const behind: string[] = [];
        replicas.forEach((node, i) => {
          const replica = positions[i];
          if (replica !== undefined) group.positions.set(node, replica);
          // A primary with no change yet (a new index: its replicas may not be open yet) has nothing a replica could lack.
          if (primaryPosition.seq === 0) group.resynced.add(node);
          else if (replica === undefined || replica.checkpointTerm !== term || replica.checkpoint !== primaryPosition.seq) behind.push(node);
          else group.resynced.add(node);
        });
        if (behind.length > 0) {
          await this.takeOutOfSync(group, term, behind);
          this.log.warn({ ...ref, term, seq: primaryPosition.seq, nodes: behind,
            checkpoints: behind.map((node) => group.positions.get(node)?.checkpoint ?? null) },
          'in-sync replicas not at their primary\'s seq (relays left undone before a takeover or a promotion); they leave the in-sync set');
        }
        group.primarySeq = primaryPosition.seq;
        return true;
      });
    } finally {
      endSwitch();
    }
  }

  private reconcileAll(): void {
    if (this.closed || !this.options.decides()) return;
    for (const meta of this.host.list()) {
      for (let shard = 1; shard <= meta.allocation.length; shard++) this.reconcile(this.group(meta, shard));
    }
  }

  /** Start a recovery for every copy out of sync whose node and primary are active. */
  private reconcile(group: ShardGroup): void {
    if (this.closed || !this.options.decides()) return;
    const placement = this.placement(group);
    if (placement === undefined) return;
    const { primary } = placement;
    if (primary === undefined || !this.nodes.isActive(primary) || group.switching) return;
    // The primary is placed first (not direct while a takeover check is due, so no direct write runs under it; a copy
    // recovering gets the primary's relays once its recovery tracks the writes: PrimaryPlacement.tracked).
    if (!this.placements.placed(group, placement)) return;
    if (this.needsResync(group, placement)) {
      // Reconciles once done.
      void this.resync(group);
      return;
    }
    for (const node of placement.copies) {
      if (node === primary || placement.inSync.includes(node) || !this.nodes.isActive(node)) continue;
      if (group.recoveries.has(node)) continue;
      new Recovery(this, group, node).start();
    }
  }
}

function groupKey(uuid: string, shard: number): string {
  return `${uuid}#${shard}`;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
