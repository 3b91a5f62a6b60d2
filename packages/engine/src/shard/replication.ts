/**
 * Replication on a shard copy (DESIGN.md "Writes, versions, replication"):
 * the primary term this copy has seen (older ones refused), the changes a
 * primary made applied on a replica only when newer by origin (term,
 * primary seq), with tombstones for deletions, and the copy's checkpoint,
 * persisted with the batches.
 */
import { documentIdKey } from '../documents/document-id.js';
import type { DocumentBody } from '../documents/types.js';
import { engineErrors } from '../errors.js';
import {
  isNewer, originOf, validateReplicatedChanges, validateTerm, type Origin, type ReplicatedChange, type ReplicateOutcome, type ReplicationState,
} from '../replication/index.js';
import { documentKey } from '../store/keys.js';
import { BARRIER, type Change, encodeDocument } from './change.js';
import { linkReplicatedContent } from './content.js';
import type { ShardState } from './state.js';
import { type MutateOptions, prepareTerms } from './writes.js';

/** A copy's replication position (replication/position.ts) and how far back its operation log reaches. */
export interface ShardReplicationState extends ReplicationState {
  /** Lowest seq the operation log may still hold: catch-up from below it needs a full copy. */
  oplogFirstSeq: number;
}

/**
 * Apply changes a primary made (DESIGN.md "Writes, versions, replication"):
 * each is stored only if its origin is newer than the version this copy
 * holds — or than the deletion it remembers — so a change arriving twice
 * or late changes nothing. Changes of one document apply in the order
 * given; the call resolves once every applied change is in LevelDB (sync
 * with `commit`), and each change's `seq` then counts towards the copy's
 * checkpoint. Refused as a whole when `term` is older than one seen.
 */
export async function applyReplicated(
  state: ShardState, term: number, changes: readonly ReplicatedChange[], options: Omit<MutateOptions, 'term'> = {},
): Promise<ReplicateOutcome> {
  validateTerm(term);
  validateReplicatedChanges(changes);
  if (state.closing) throw engineErrors.shardClosed();
  await acceptTerm(state, term);
  const commit = options.commit === true;
  const settled = await Promise.allSettled(changes.map((change) => {
    const key = documentIdKey(change.id);
    return state.locked(key, () => replicateLocked(state, term, change, key, commit, options.schema));
  }));
  const outcome: ReplicateOutcome = { applied: 0, discarded: 0 };
  for (const result of settled) {
    if (result.status === 'rejected') throw result.reason;
    if (result.value) outcome.applied++;
    else outcome.discarded++;
  }
  return outcome;
}

/**
 * The coordinator vouches that this copy holds every change the primary of
 * `term` numbered up to `checkpoint` (a promotion: the copies in sync hold
 * what the new primary holds; the end of a full copy). Persisted (sync)
 * before it resolves.
 */
export async function follow(state: ShardState, term: number, checkpoint: number): Promise<ShardReplicationState> {
  validateTerm(term);
  if (!Number.isSafeInteger(checkpoint) || checkpoint < 0) throw engineErrors.invalidWrite('checkpoint must be a non-negative integer');
  if (state.closing) throw engineErrors.shardClosed();
  if (term < state.position.term) throw engineErrors.stalePrimaryTerm(term, state.position.term);
  state.position.follow(term, checkpoint);
  await state.writer.submit(BARRIER, true);
  return replicationState(state);
}

/** The copy's replication position. */
export function replicationState(state: ShardState): ShardReplicationState {
  return { ...state.position.snapshot(), oplogFirstSeq: state.oplog.firstSeq };
}

/**
 * A call carries `term`: refuse it if older than the term seen, adopt it
 * (persisted, sync) if newer, before anything of the call is applied. A
 * restarted copy still refuses a demoted primary's term.
 */
export async function acceptTerm(state: ShardState, term: number): Promise<void> {
  if (term < state.position.term) throw engineErrors.stalePrimaryTerm(term, state.position.term);
  if (state.position.raiseTerm(term)) await state.writer.submit(BARRIER, true);
}

/** One replicated change, inside the document's lock: true if stored, false if older than what the copy holds. */
async function replicateLocked(state: ShardState, term: number, change: ReplicatedChange, key: string, commit: boolean,
  schema: Record<string, unknown> | undefined): Promise<boolean> {
  // Checked again under the lock: a newer term may have arrived while the change waited.
  if (term < state.position.term) throw engineErrors.stalePrimaryTerm(term, state.position.term);
  const epoch = state.stateEpoch;
  const current = await state.current(change.id, key);
  // And after the read: once a newer term is adopted (a promotion's fence), no change of an older one is submitted after its barrier.
  if (term < state.position.term) throw engineErrors.stalePrimaryTerm(term, state.position.term);
  const origin: Origin = { term: change.originTerm, seq: change.originSeq };
  const held = current !== undefined ? originOf(current) : state.tombstones.get(key, Date.now());
  if (held !== undefined && !isNewer(origin, held)) {
    observeReplicated(state, term, change);
    return false;
  }
  if (change.deleted) {
    if (current !== undefined) {
      await state.writer.submit({
        kind: 'delete', key, id: current.id, documentKey: documentKey(current.id), version: change.version, docid: current.docid,
        originTerm: origin.term, originSeq: origin.seq, body: undefined, bodyBytes: undefined, epoch,
      }, commit);
    }
    state.tombstones.set(key, origin, Date.now());
    observeReplicated(state, term, change);
    return true;
  }
  const body = change.body as DocumentBody;
  const bodyBytes = encodeDocument(body);
  const content = change.content === undefined ? undefined : await linkReplicatedContent(state, change, current, commit);
  const storedId = current?.id ?? (change.id === 0 ? 0 : change.id);
  const put: Change = {
    kind: 'put', key, id: storedId, documentKey: documentKey(storedId), version: change.version, docid: current?.docid ?? 0,
    originTerm: origin.term, originSeq: origin.seq, body, bodyBytes, content, indexed: change.indexed, epoch,
  };
  prepareTerms(state, put, schema);
  await state.writer.submit(put, commit);
  state.tombstones.delete(key);
  observeReplicated(state, term, change);
  return true;
}

function observeReplicated(state: ShardState, term: number, change: ReplicatedChange): void {
  if (change.seq !== undefined) state.position.observe(term, change.seq);
}

