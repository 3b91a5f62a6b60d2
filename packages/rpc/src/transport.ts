/**
 * The contract between the coordinator and shard nodes: a client that calls a
 * named method with msgpack-able params and gets a result or a TesseraError
 * (code and status intact). Every transport (in-process, WebSocket) offers the
 * same `RpcClient` and passes the same conformance suite.
 */
export interface RpcCallOptions {
  /** Per-call deadline; defaults to the client's `callTimeoutMs`. */
  timeoutMs?: number;
}

/** What `callNow` returns when the call cannot be answered without waiting: make it with `call`. */
export const DEFERRED: unique symbol = Symbol('tessera.rpc.deferred');

export interface RpcClient {
  call<T = unknown>(method: string, params: unknown, options?: RpcCallOptions): Promise<T>;
  /**
   * The same call answered synchronously, when the transport and the serving
   * side can (the in-process transport reaching a cached document): the
   * result, or a thrown TesseraError as `call` would reject with; DEFERRED
   * when it cannot, and the caller then uses `call`. A cached GET answered
   * here skips every promise between the HTTP parser and the socket write.
   * Optional: a transport without it (WebSocket) is always deferred.
   */
  callNow?<T = unknown>(method: string, params: unknown): T | typeof DEFERRED;
  close(): Promise<void>;
  readonly closed: boolean;
  /** Calls running now (for metrics and tests). */
  readonly inFlight: number;
}

/** Server side: answers one call. Throw a TesseraError to fail it. */
export type RpcHandler = (method: string, params: unknown) => Promise<unknown>;

/** Server side of `callNow`: the result of a call it can answer at once, DEFERRED otherwise. Throw a TesseraError to fail it. */
export type RpcImmediateHandler = (method: string, params: unknown) => unknown;

export interface RpcClientOptions {
  /** Default per-call deadline. */
  callTimeoutMs: number;
  /** Calls running at once on one connection; more wait in a queue (backpressure). */
  inFlightMax: number;
  /** Calls allowed to wait for a slot; beyond → 503 rpc_overloaded. */
  queuedMax: number;
}

export const RPC_CLIENT_DEFAULTS: Readonly<RpcClientOptions> = Object.freeze({
  callTimeoutMs: 30_000,
  inFlightMax: 1024,
  queuedMax: 16_384,
});
