/** Error catalogue of the shard-node package. */
import { TesseraError } from '@tessera/errors';

export const nodeErrors = {
  badCall: (method: string, why: string) => new TesseraError('rpc_bad_params', 500, `Bad parameters for '${method}': ${why}`),
  shardNotHosted: (index: string, shard: number) =>
    new TesseraError('shard_not_hosted', 503, `Shard ${shard} of ${index} is not open on this node`),
  /** snapshot-views.ts: the view was released, expired after SNAPSHOT_VIEW_IDLE_MS unread, or its copy closed. */
  snapshotExpired: (index: string, shard: number, id: string) =>
    new TesseraError('snapshot_expired', 410, `The point-in-time view ${id} of shard ${shard} of ${index} is gone (released, unread for too long, or the copy closed): start the snapshot again`),
  /** held-schemas.ts: a call named a schema the copy does not hold; the coordinator sends it again with the schema. */
  schemaUnknown: (index: string, shard: number, schemaId: string) =>
    new TesseraError('schema_unknown', 409, `Shard ${shard} of ${index} does not hold schema ${schemaId} here: send the call with it`),
  /** direct-writes.ts: a direct write (rpc `WriteCall.direct`) reached a copy not placed to take one in its term (or one whose relay failed since); nothing ran. */
  primaryNotPlaced: (index: string, shard: number, term: unknown) =>
    new TesseraError('primary_not_placed', 503, `Shard ${shard} of ${index} takes no direct write in term ${String(term)} here: the elected coordinator has not placed it to (or a relay failed since); send the write through the elected coordinator`),
  closing: () => new TesseraError('node_closing', 503, 'Shard node is shutting down'),
  /** primary-lease.ts: the coordinator has been silent for longer than the lease; retry once it is back. */
  primaryLeaseExpired: (index: string, shard: number, silentMs: number, leaseMs: number) =>
    new TesseraError('primary_lease_expired', 503, `Shard ${shard} of ${index} takes no writes as primary here: ${Number.isFinite(silentMs)
      ? `this node has not heard from the coordinator for ${silentMs} ms` : 'this node has not heard from the coordinator yet'} (lease ${leaseMs} ms)`),
};
