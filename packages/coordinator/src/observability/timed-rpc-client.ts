/**
 * RPC latency as the coordinator sees it (queueing, transport and the node's
 * work): an RpcClient that times every call of the client it wraps, into a
 * histogram series per method. One wrapper serves every transport (in
 * process, WebSocket), so none of them knows about metrics.
 */
import { DEFERRED, type NodeCalls, type RpcCallOptions, type RpcClient } from '@tessera/rpc';
import type { HistogramSeries } from './fixed-histogram.js';

/** The series for a method (null: no series left for it; the call is not timed). */
export type RpcSeriesOf = (method: string) => HistogramSeries | null;

export class TimedRpcClient implements RpcClient {
  constructor(readonly inner: RpcClient, private readonly seriesOf: RpcSeriesOf) {}

  get closed(): boolean {
    return this.inner.closed;
  }

  get inFlight(): number {
    return this.inner.inFlight;
  }

  /** The inner transport's: whether what a call carries crosses a wire (RpcClient.passesByReference). */
  get passesByReference(): boolean {
    return this.inner.passesByReference === true;
  }

  /**
   * The inner call's own promise is returned, with the timing attached to it
   * beside the caller's reaction: no second promise for the caller to wait
   * on (an async wrapper measured ~40 ns more per call, on a cached GET's
   * path).
   */
  call<M extends keyof NodeCalls>(method: M, params: NodeCalls[M][0], options?: RpcCallOptions): Promise<NodeCalls[M][1]> {
    const startedMs = performance.now();
    const series = this.seriesOf(method);
    const call = this.inner.call(method, params, options);
    if (series !== null) {
      const observe = (): void => series.observe((performance.now() - startedMs) / 1000);
      call.then(observe, observe);
    }
    return call;
  }

  /** `callNow` of the inner client, timed like a call when answered (a deferred call is timed by its `call`). */
  callNow<M extends keyof NodeCalls>(method: M, params: NodeCalls[M][0]): NodeCalls[M][1] | typeof DEFERRED {
    const inner = this.inner;
    if (inner.callNow === undefined) return DEFERRED;
    const startedMs = performance.now();
    let result: NodeCalls[M][1] | typeof DEFERRED;
    try {
      result = inner.callNow(method, params);
    } catch (err) {
      this.observe(method, startedMs);
      throw err;
    }
    if (result !== DEFERRED) this.observe(method, startedMs);
    return result;
  }

  private observe(method: string, startedMs: number): void {
    const series = this.seriesOf(method);
    if (series !== null) series.observe((performance.now() - startedMs) / 1000);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
