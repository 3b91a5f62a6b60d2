/**
 * The replication calls a shard node answers (DESIGN.md "Writes, versions,
 * replication"): `doc.replicate` applies a primary's changes to a replica
 * copy, `shard.changes` reads a primary's operation log for a catching-up
 * replica, `shard.follow` sets where a copy stands in a new term. The
 * coordinator relays between nodes; nodes never call each other.
 */
import { OPLOG_READ_ENTRIES_MAX, type OplogEntry, type Shard } from '@tessera/engine';
import type {
  ChangesCall, ChangesReply, FollowCall, ReplicateCall, ReplicateReply, ReplicatedChangeMessage, ReplicationPositionReply,
} from '@tessera/rpc';
import { nodeErrors } from '../errors.js';

export async function replicate(shard: Shard, call: ReplicateCall): Promise<ReplicateReply> {
  const outcome = await shard.applyReplicated(call.term, call.changes, { commit: call.commit === true, schema: call.schema });
  return { applied: outcome.applied, discarded: outcome.discarded, position: positionOf(shard) };
}

export async function changes(shard: Shard, call: ChangesCall): Promise<ChangesReply> {
  if (!Number.isInteger(call.limit) || call.limit < 1 || call.limit > OPLOG_READ_ENTRIES_MAX) {
    throw nodeErrors.badCall('shard.changes', `limit must be an integer from 1 to ${OPLOG_READ_ENTRIES_MAX}`);
  }
  // The seq first: every entry up to it is in the page or after it, never skipped.
  const seq = shard.stats().seq;
  const entries = await shard.readOplog(call.afterSeq, call.limit);
  return { changes: entries.map(changeOf), seq: Math.max(seq, entries.length > 0 ? (entries[entries.length - 1] as OplogEntry).seq : 0) };
}

export async function follow(shard: Shard, call: FollowCall): Promise<ReplicationPositionReply> {
  await shard.follow(call.term, call.checkpoint);
  return positionOf(shard);
}

export function positionOf(shard: Shard): ReplicationPositionReply {
  const state = shard.replicationState();
  return {
    term: state.term, checkpointTerm: state.checkpointTerm, checkpoint: state.checkpoint, seq: shard.stats().seq, oplogFirstSeq: state.oplogFirstSeq,
  };
}

/** An operation-log entry as a replicated change: the primary's seq, and the origin of the version it wrote. */
function changeOf(entry: OplogEntry): ReplicatedChangeMessage {
  const change: ReplicatedChangeMessage = {
    seq: entry.seq, id: entry.id, version: entry.version, deleted: entry.op === 'delete',
    originTerm: entry.term ?? 1, originSeq: entry.originSeq ?? entry.seq,
  };
  if (entry.body !== undefined) change.body = entry.body;
  return change;
}
