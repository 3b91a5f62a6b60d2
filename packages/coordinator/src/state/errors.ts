/** Error catalogue of the cluster-state store (docs/cluster.md "Leases"). */
import { TesseraError } from '@tessera/errors';

export const stateErrors = {
  /** More leases alive than the store keeps: a holder that grants without revoking (a bug), or far more nodes than planned. */
  leasesFull: (max: number) => new TesseraError('leases_full', 503, `The cluster state holds ${max} leases already`),
  leasedValuesFull: (max: number) => new TesseraError('leased_values_full', 503, `The cluster state holds ${max} leased values already`),
};
