/** Error catalogue of the rpc package. */
import { TesseraError } from '@tessera/errors';

export const rpcErrors = {
  timeout: (method: string, timeoutMs: number) =>
    new TesseraError('rpc_timeout', 504, `Shard call '${method}' timed out after ${timeoutMs} ms`),
  overloaded: (inFlightMax: number, queuedMax: number) =>
    new TesseraError('rpc_overloaded', 503, `Too many shard calls in flight (${inFlightMax} running, ${queuedMax} queued)`),
  closed: () => new TesseraError('rpc_closed', 502, 'Shard node connection is closed'),
  unknownMethod: (method: string) => new TesseraError('rpc_unknown_method', 500, `Unknown shard call '${method}'`),
};
