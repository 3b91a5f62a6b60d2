/**
 * The queue of changes for one replica copy, kept by whoever relays a
 * shard's writes (the elected coordinator, or the primary's node when it
 * relays its writes itself). One `doc.replicate` call is in
 * flight per copy at a time; changes that arrive meanwhile leave together in
 * the next call (natural batching, as group commit does on the node), so a
 * write load costs one call per copy per round trip, not one per write, and
 * a copy receives the changes in the order they were relayed.
 */
import type { ReplicateCall, ReplicateReply, ReplicatedChange } from '../protocol.js';
import type { RpcClient } from '../transport.js';

/** Changes per `doc.replicate` call at most (the node refuses more than 10,000). */
export const RELAY_CHANGES_MAX = 1_000;

interface Pending {
  term: number;
  changes: ReplicatedChange[];
  commit: boolean;
  schema: Record<string, unknown> | undefined;
  resolve: (reply: ReplicateReply) => void;
  reject: (err: unknown) => void;
}

export class CopyRelay {
  private queue: Pending[] = [];
  private sending = false;

  constructor(
    private readonly index: string,
    private readonly shard: number,
    /** The node's client now (throws when it is not active). */
    private readonly client: () => RpcClient,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves once the copy applied `changes` (durably with `commit`). */
  send(term: number, changes: ReplicatedChange[], commit: boolean, schema: Record<string, unknown> | undefined): Promise<ReplicateReply> {
    return new Promise((resolve, reject) => {
      this.queue.push({ term, changes, commit, schema, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.sending || this.queue.length === 0) return;
    const first = this.queue[0] as Pending;
    // One term per call: the node refuses the whole call if its term is stale.
    let count = 0;
    let taken = 0;
    while (taken < this.queue.length) {
      const next = this.queue[taken] as Pending;
      if (next.term !== first.term || (taken > 0 && count + next.changes.length > RELAY_CHANGES_MAX)) break;
      count += next.changes.length;
      taken++;
    }
    const batch = this.queue.splice(0, taken);
    const call: ReplicateCall = {
      index: this.index, shard: this.shard, term: first.term,
      changes: batch.length === 1 ? first.changes : batch.flatMap((p) => p.changes),
      commit: batch.some((p) => p.commit),
    };
    // Schemas only grow: the last one indexes every change of the batch.
    const schema = batch[batch.length - 1]?.schema;
    if (schema !== undefined) call.schema = schema;
    this.sending = true;
    let request: Promise<ReplicateReply>;
    try {
      request = this.client().call('doc.replicate', call, { timeoutMs: this.timeoutMs });
    } catch (err) {
      request = Promise.reject(err);
    }
    request.then(
      (reply) => batch.forEach((p) => p.resolve(reply)),
      (err: unknown) => batch.forEach((p) => p.reject(err)),
    ).finally(() => {
      this.sending = false;
      this.pump();
    });
  }
}
