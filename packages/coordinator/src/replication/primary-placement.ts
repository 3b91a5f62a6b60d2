/**
 * How each shard's primary is placed, and the writes sent straight to it
 * (docs/cluster.md "Writes through every coordinator"): the elected
 * coordinator tells a primary (`shard.placement`) whether it takes direct
 * writes from every coordinator and relays them to its replicas itself,
 * and `send` is such a write, from any coordinator. The replicator decides
 * when (reconcile, the write path); this module says what and sends it.
 */
import { toTesseraError } from '@tessera/errors';
import type { RelayTarget, RpcClient, WriteCall, WriteReply } from '@tessera/rpc';
import type { NodeDirectory } from '../cluster/nodes.js';
import { apiErrors } from '../errors.js';
import type { IndexMeta } from '../state/cluster-state.js';
import type { ReplicationOptions } from './options.js';
import type { Placement } from './placement.js';
import type { ShardGroup } from './shard-group.js';

/** Refusals of a direct write that come before anything ran: it goes through the elected coordinator instead. */
const REFUSED_BEFORE_RUNNING = new Set(['primary_not_placed', 'stale_primary_term', 'primary_lease_expired', 'shard_not_hosted']);
/** A direct write refused before it ran. */
export const REFUSED = Symbol('refused');
/** After a refusal, a coordinator that does not decide sends the shard's writes through the elected one for this long before it tries direct again. */
export const DIRECT_REFUSED_BACKOFF_MS = 200;
/** How long a failed `shard.placement` waits before it is made again. */
const PLACE_RETRY_MS = 2_000;

/** What placing primaries and sending them direct writes needs of the replicator. */
export interface PrimaryPlacementContext {
  readonly options: ReplicationOptions;
  readonly nodes: NodeDirectory;
  client(group: ShardGroup, node: string): RpcClient;
  /** The index's metadata now, if it is still there. */
  meta(group: ShardGroup): IndexMeta | undefined;
  /** An in-sync replica this coordinator has not checked against the primary yet (replicator.ts, the resync). */
  needsResync(group: ShardGroup, placement: Placement): boolean;
  reconcile(group: ShardGroup): void;
  /** Replicas that failed a direct write's relay leave the in-sync set (through the elected coordinator); rejects when the term changed. */
  relayFailed(meta: IndexMeta, shard: number, term: number, nodes: string[]): Promise<void>;
}

export class PrimaryPlacement {
  constructor(private readonly ctx: PrimaryPlacementContext) {}

  /**
   * A direct write on the shard's primary, which relays it to the replicas
   * of its placement before it answers; REFUSED when refused before it ran.
   * Replicas that failed the relay leave the in-sync set (through the
   * elected coordinator) before it resolves; if that cannot be made in the
   * write's term, it rejects: the write is not acknowledged.
   */
  async send(group: ShardGroup, placement: Placement & { primary: string }, call: WriteCall): Promise<WriteReply | typeof REFUSED> {
    let client: RpcClient;
    try {
      client = this.ctx.client(group, placement.primary);
    } catch {
      return REFUSED;
    }
    let reply: WriteReply;
    try {
      // Object.assign, not a spread with new keys (see replicator.ts throughPrimary).
      reply = await client.call('doc.write', Object.assign({}, call, { term: placement.term, direct: true }));
    } catch (err) {
      if (REFUSED_BEFORE_RUNNING.has(toTesseraError(err).code)) return REFUSED;
      // Anything else may have run on the primary (a version conflict did): it is not sent again.
      this.countDirect();
      throw err;
    }
    this.countDirect();
    if (reply.seq !== undefined && reply.seq > group.primarySeq) group.primarySeq = reply.seq;
    const failed = reply.relayFailed;
    if (failed === undefined) return reply;
    const meta = this.ctx.meta(group);
    if (meta === undefined || meta.uuid !== group.uuid) throw apiErrors.indexNotFound(group.index);
    await this.ctx.relayFailed(meta, group.shard, placement.term, failed);
    const { relayFailed: _failed, ...acknowledged } = reply;
    return acknowledged;
  }

  private countDirect(): void {
    if (!this.ctx.options.decides()) this.ctx.options.onRoutedWrite?.('primary');
  }

  /**
   * Whether the shard's primary holds this coordinator's word on it (only
   * with several coordinators, `stateRevision`): to take writes straight
   * from every coordinator and relay them itself (`direct`) while it can —
   * see `wanted` — and not otherwise. When it does not, the word is sent
   * (`shard.placement`, with the state's revision: a newer word is never
   * replaced by an older one); false meanwhile, and writes here wait. Before
   * the primary is placed `direct`, this coordinator's relays in flight
   * settle; a push that ends `direct` is answered once the direct writes
   * running have settled, their relays included. So a replica gets its
   * changes from one sender at a time, in the primary's order.
   */
  placed(group: ShardGroup, placement: Placement): boolean {
    const { stateRevision } = this.ctx.options;
    if (stateRevision === undefined) return true;
    const primary = placement.primary as string;
    const wanted = this.wanted(group, placement);
    const names = wanted.replicas.map((r) => r.node).join(',');
    const held = group.placed;
    if (held !== undefined && held.primary === primary && held.term === placement.term && held.direct === wanted.direct && held.replicas === names) return true;
    if (group.placing) return false;
    group.placing = true;
    const took = (): void => {
      group.placed = { primary, term: placement.term, direct: wanted.direct, replicas: names };
      group.placing = false;
      group.wake();
      this.ctx.reconcile(group);
    };
    const place = async (): Promise<void> => {
      if (wanted.direct) {
        // Writes this coordinator sent settle first: each one's relay registered, then every relay.
        await group.settleSending();
        await group.drain();
      }
      const call = { index: group.index, shard: group.shard, term: placement.term, revision: stateRevision(), ...wanted };
      const reply = await this.ctx.client(group, primary).call('shard.placement', call, { timeoutMs: this.ctx.options.controlTimeoutMs });
      // The node holds a newer word (this coordinator's state is behind the one it was placed from): tried again once it is not.
      if (reply.revision !== call.revision) throw new Error(`the primary holds a placement of revision ${reply.revision}, newer than this coordinator's ${call.revision}`);
    };
    place().then(took, (err: unknown) => {
      // A node that does not know the call (an older version, in a rolling upgrade) takes no direct write either.
      if (!wanted.direct && toTesseraError(err).code === 'rpc_bad_params') {
        took();
        return;
      }
      group.placing = false;
      group.wake();
      this.ctx.options.log.warn({ index: group.index, shard: group.shard, node: primary, direct: wanted.direct, err: describe(err) }, 'could not place the shard on its primary; trying again');
      setTimeout(() => this.ctx.reconcile(group), PLACE_RETRY_MS).unref();
    });
    return false;
  }

  /**
   * Resolves once every write of the shard after it reaches the copy: the
   * primary is placed relaying to it (it is `tracking`: PrimaryPlacement's
   * `wanted`), after the writes admitted before were answered, or the
   * primary is not placed direct and this coordinator relays every write.
   */
  async tracked(group: ShardGroup, node: string, term: number): Promise<void> {
    if (this.ctx.options.stateRevision === undefined) return;
    const deadline = Date.now() + this.ctx.options.failoverWaitMs;
    for (;;) {
      const held = group.placed;
      if (held !== undefined && !group.placing && held.term === term && (!held.direct || held.replicas.split(',').includes(node))) return;
      this.ctx.reconcile(group);
      if (Date.now() >= deadline) throw new Error('the primary was not placed to relay to the copy in time');
      await group.changed(deadline);
    }
  }

  /**
   * How the primary should be placed now: `direct`, relaying to the in-sync
   * replicas and to the copies whose recovery tracks the writes (its last
   * step: recovery.ts), when no RESTORE batch is relayed here, no takeover
   * check is due, and the primary and each of those copies has a relay
   * listener; not direct otherwise. A copy still copying gets no relay: its
   * recovery replays the primary's log up to the seq read once it is tracked.
   * A shard of one copy is always direct (nothing to relay).
   */
  private wanted(group: ShardGroup, placement: Placement): { direct: boolean; replicas: RelayTarget[] } {
    const primary = placement.primary as string;
    const notDirect = { direct: false, replicas: [] };
    if (placement.copies.length === 1) return { direct: true, replicas: [] };
    if (group.batches > 0 || this.ctx.nodes.get(primary)?.relay === undefined || this.ctx.needsResync(group, placement)) return notDirect;
    const replicas: RelayTarget[] = [];
    for (const node of placement.copies) {
      if (node === primary) continue;
      if (!placement.inSync.includes(node) && group.recoveries.get(node)?.tracking !== true) continue;
      const url = this.ctx.nodes.get(node)?.relay;
      if (url === undefined) return notDirect;
      replicas.push({ node, url });
    }
    return { direct: true, replicas };
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
