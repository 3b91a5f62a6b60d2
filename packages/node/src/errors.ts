/** Error catalogue of the shard-node package. */
import { TesseraError } from '@tessera/errors';

export const nodeErrors = {
  badCall: (method: string, why: string) => new TesseraError('rpc_bad_params', 500, `Bad parameters for '${method}': ${why}`),
  shardNotHosted: (index: string, shard: number) =>
    new TesseraError('shard_not_hosted', 503, `Shard ${shard} of ${index} is not open on this node`),
  closing: () => new TesseraError('node_closing', 503, 'Shard node is shutting down'),
  /** primary-lease.ts: the coordinator has been silent for longer than the lease; retry once it is back. */
  primaryLeaseExpired: (index: string, shard: number, silentMs: number, leaseMs: number) =>
    new TesseraError('primary_lease_expired', 503, `Shard ${shard} of ${index} takes no writes as primary here: ${Number.isFinite(silentMs)
      ? `this node has not heard from the coordinator for ${silentMs} ms` : 'this node has not heard from the coordinator yet'} (lease ${leaseMs} ms)`),
};
