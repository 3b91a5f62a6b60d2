/**
 * The contract between the coordinator and shard nodes: a client that calls a
 * named method with msgpack-able params and gets a result or a TesseraError
 * (code and status intact). Every transport (in-process, message port, WebSocket) offers the
 * same `RpcClient` and passes the same conformance suite.
 */
import type { NodeCalls } from './protocol.js';

export interface RpcCallOptions {
  /** Per-call deadline; defaults to the client's `callTimeoutMs`. */
  timeoutMs?: number;
}

/** What `callNow` returns when the call cannot be answered without waiting: make it with `call`. */
export const DEFERRED: unique symbol = Symbol('tessera.rpc.deferred');

/**
 * Method name → [params, result]: the calls one side makes of the other
 * (NodeCalls: a coordinator of a node). A client is typed by its map, so a
 * call's params and result are checked from the caller to the handler.
 */
export type CallMap<C> = { [M in keyof C]: [unknown, unknown] };

/** Any method, any params, an unknown result: for transport tests and tools that name no protocol. */
export type AnyCalls = Record<string, [unknown, unknown]>;

export interface RpcClient<C extends CallMap<C> = NodeCalls> {
  call<M extends keyof C & string>(method: M, params: C[M][0], options?: RpcCallOptions): Promise<C[M][1]>;
  /**
   * The same call answered synchronously, when the transport and the serving
   * side can (the in-process transport reaching a cached document): the
   * result, or a thrown TesseraError as `call` would reject with; DEFERRED
   * when it cannot, and the caller then uses `call`. A cached GET answered
   * here skips every promise between the HTTP parser and the socket write.
   * Optional: a transport without it (WebSocket) is always deferred.
   */
  callNow?<M extends keyof C & string>(method: M, params: C[M][0]): C[M][1] | typeof DEFERRED;
  close(): Promise<void>;
  readonly closed: boolean;
  /**
   * Params reach the serving side as the very objects passed (the
   * in-process transport): nothing is encoded or copied per call, so
   * naming what a call carries instead of sending it saves nothing.
   */
  readonly passesByReference?: boolean;
  /** Calls running now (for metrics and tests). */
  readonly inFlight: number;
}

/**
 * Server side: answers one call. Params are what the other side sent
 * (decoded, not yet checked): the handler checks what it relies on. Throw a
 * TesseraError to fail it.
 */
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
