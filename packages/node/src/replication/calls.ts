/**
 * The replication calls a shard node answers (DESIGN.md "Writes, versions,
 * replication"): `doc.replicate` applies a primary's changes to a replica
 * copy, `shard.changes` reads a primary's operation log for a catching-up
 * replica, `shard.follow` sets where a copy stands in a new term. The
 * coordinator relays between nodes; nodes never call each other.
 */
import { OPLOG_READ_ENTRIES_MAX, type ContentLink, type OplogEntry, type Shard } from '@tessera/engine';
import type {
  ChangesCall, ChangesReply, FollowCall, ReplicateCall, ReplicateReply, ReplicatedChange, ReplicatedContent, ReplicationPositionReply,
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
  const replicated = await Promise.all(entries.map(async (entry) => {
    const change = changeOf(entry);
    // A catching-up copy may hold none of the blobs: they travel with the change.
    if (entry.content !== undefined) change.content = await contentWithBlobs(shard, entry.content);
    return change;
  }));
  return { changes: replicated, seq: Math.max(seq, entries.length > 0 ? (entries[entries.length - 1] as OplogEntry).seq : 0) };
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

/** Content entries with their blobs' bytes, read (and checked) from the shard's volumes. */
export function contentWithBlobs(shard: Shard, links: readonly ContentLink[]): Promise<ReplicatedContent[]> {
  return Promise.all(links.map(async (link) => ({ type: link.type, size: link.size, crc: link.crc, bytes: await shard.readBlob(link) })));
}

/** An operation-log entry as a replicated change: the primary's seq, and the origin of the version it wrote. */
function changeOf(entry: OplogEntry): ReplicatedChange {
  const change: ReplicatedChange = {
    seq: entry.seq, id: entry.id, version: entry.version, deleted: entry.op === 'delete',
    originTerm: entry.term ?? 1, originSeq: entry.originSeq ?? entry.seq,
  };
  if (entry.body !== undefined) change.body = entry.body;
  if (entry.indexed !== undefined) change.indexed = entry.indexed;
  return change;
}
