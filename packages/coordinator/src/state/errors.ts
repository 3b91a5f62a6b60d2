/** Error catalogue of the cluster-state store (docs/cluster.md "Leases"). */
import { TesseraError } from '@tessera/errors';

export const stateErrors = {
  /** More leases alive than the store keeps: a holder that grants without revoking (a bug), or far more nodes than planned. */
  leasesFull: (max: number) => new TesseraError('leases_full', 503, `The cluster state holds ${max} leases already`),
  leasedValuesFull: (max: number) => new TesseraError('leased_values_full', 503, `The cluster state holds ${max} leased values already`),
  /** etcd did not answer in time, or refused: the coordinator must not decide on a state it cannot read or write. */
  unavailable: (what: string, reason: string, cause: unknown) =>
    new TesseraError('state_store_unavailable', 503, `The cluster-state store (etcd) could not ${what}: ${reason}`, { cause }),
  /** A state document over the store's limit: etcd refuses requests over its --max-request-bytes. */
  stateTooLarge: (bytes: number, max: number) =>
    new TesseraError('cluster_state_too_large', 507, `The cluster state would take ${bytes} bytes, over the store's limit of ${max}`),
};
