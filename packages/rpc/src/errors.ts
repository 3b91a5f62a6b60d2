/** Error catalogue of the rpc package. */
import { TesseraError } from '@tessera/errors';

export const rpcErrors = {
  timeout: (method: string, timeoutMs: number) =>
    new TesseraError('rpc_timeout', 504, `Shard call '${method}' timed out after ${timeoutMs} ms`),
  overloaded: (inFlightMax: number, queuedMax: number) =>
    new TesseraError('rpc_overloaded', 503, `Too many shard calls in flight (${inFlightMax} running, ${queuedMax} queued)`),
  closed: () => new TesseraError('rpc_closed', 502, 'Shard node connection is closed'),
  unknownMethod: (method: string) => new TesseraError('rpc_unknown_method', 500, `Unknown shard call '${method}'`),
  unavailable: (reason: string) => new TesseraError('rpc_unavailable', 503, `Shard node connection lost: ${reason}`),
  callTooLarge: (method: string, bytes: number, bytesMax: number) =>
    new TesseraError('rpc_call_too_large', 413, `Shard call '${method}' is ${bytes} bytes, over the ${bytesMax}-byte message limit`),
  replyTooLarge: (method: string, bytes: number, bytesMax: number) =>
    new TesseraError('rpc_reply_too_large', 500, `Reply to shard call '${method}' is ${bytes} bytes, over the ${bytesMax}-byte message limit`),
  invalidUrl: (url: string) => new TesseraError('invalid_rpc_url', 400, `'${url}' is not a ws:// or wss:// URL`),
  unencodable: (method: string) => new TesseraError('rpc_unencodable', 500, `Shard call '${method}' carries a value MessagePack cannot encode`),
};
