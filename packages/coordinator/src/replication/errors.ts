/** Error catalogue of replication and failover (docs/cluster.md "Replication and failure"). */
import { TesseraError } from '@tessera/errors';

const e = (code: string, status: number, message: string) => new TesseraError(code, status, message);

export const replicationErrors = {
  /** A write or read waited for a primary switch longer than `failoverWaitMs`. */
  primarySwitching: (index: string, shard: number) =>
    e('primary_switching', 503, `Shard ${shard} of ${index} is switching to a new primary; retry`),
  /** The primary answered under a term that is no longer the shard's: the write was not relayed, nor acknowledged. */
  primarySwitched: (index: string, shard: number) =>
    e('primary_switched', 503, `Shard ${shard} of ${index} got a new primary while the write ran; it was not applied; retry`),
};
