export type { RpcCallOptions, RpcClient, RpcClientOptions, RpcHandler } from './transport.js';
export { RPC_CLIENT_DEFAULTS } from './transport.js';
export { InProcessClient } from './in-process.js';
export { InFlightLimiter } from './limiter.js';
export { rpcErrors } from './errors.js';
export type * from './protocol.js';
export { describeTransport, type Connect } from './transport.conformance.js';
