/**
 * In-process transport: the embedded server's coordinator calls its own shard
 * node without a socket. Same contract as the WebSocket transport — deadlines,
 * bounded in-flight calls, errors normalised to TesseraError — but params and
 * results are passed by reference, not encoded: both sides must treat them as
 * immutable (measured: encoding every GET through msgpack would cost more than
 * the rest of the read path). With an immediate handler it also offers
 * `callNow`, for the calls the node can answer without waiting.
 */
import { toTesseraError } from '@tessera/errors';
import { rpcErrors } from './errors.js';
import { InFlightLimiter } from './limiter.js';
import {
  DEFERRED, RPC_CLIENT_DEFAULTS, type CallMap, type RpcCallOptions, type RpcClient, type RpcClientOptions, type RpcHandler, type RpcImmediateHandler,
} from './transport.js';
import type { NodeCalls } from './protocol.js';

/**
 * Deadlines are checked by one coarse ticker per client instead of a
 * setTimeout per call, as the HTTP server does: arming and clearing a timer
 * for every call showed in the GET profile (timer insert/unenroll ~2–3 %).
 * A call's deadline may pass up to one tick late.
 */
export const DEADLINE_TICK_MS = 10;
/** Idle ticks before the ticker stops (it restarts with the next call). */
const IDLE_TICKS_MAX = 100;

interface PendingCall {
  deadline: number;
  method: string;
  timeoutMs: number;
  reject: (err: unknown) => void;
}

/**
 * The handlers answer with what the call map says (ShardNode's handler map
 * is checked against it): results are passed on as the map's types.
 */
export class InProcessClient<C extends CallMap<C> = NodeCalls> implements RpcClient<C> {
  readonly passesByReference: boolean = true;
  private readonly options: RpcClientOptions;
  private readonly limiter: InFlightLimiter;
  private isClosed = false;
  private readonly pending = new Map<number, PendingCall>();
  private nextCallId = 0;
  private ticker: NodeJS.Timeout | undefined;
  private idleTicks = 0;

  constructor(private readonly handler: RpcHandler, options: Partial<RpcClientOptions> = {},
    private readonly immediate?: RpcImmediateHandler) {
    this.options = { ...RPC_CLIENT_DEFAULTS, ...options };
    this.limiter = new InFlightLimiter(this.options.inFlightMax, this.options.queuedMax);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get inFlight(): number {
    return this.limiter.inFlight;
  }

  async call<M extends keyof C & string>(method: M, params: C[M][0], options?: RpcCallOptions): Promise<C[M][1]> {
    if (this.isClosed) throw rpcErrors.closed();
    const waiting = this.limiter.acquire();
    if (waiting) await waiting;
    try {
      const timeoutMs = options?.timeoutMs ?? this.options.callTimeoutMs;
      return (await this.withDeadline(this.handler(method, params), method, timeoutMs)) as C[M][1];
    } catch (err) {
      throw toTesseraError(err);
    } finally {
      this.limiter.release();
    }
  }

  /**
   * A call answered synchronously by the immediate handler. It holds no
   * in-flight slot (it ends before anything else runs), but defers while the
   * slots are all taken, so calls queued for one are not overtaken.
   */
  callNow<M extends keyof C & string>(method: M, params: C[M][0]): C[M][1] | typeof DEFERRED {
    if (this.immediate === undefined || this.isClosed || this.limiter.saturated) return DEFERRED;
    try {
      return this.immediate(method, params) as C[M][1] | typeof DEFERRED;
    } catch (err) {
      throw toTesseraError(err);
    }
  }

  async close(): Promise<void> {
    this.isClosed = true;
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.ticker = undefined;
  }

  private withDeadline<T>(work: Promise<T>, method: string, timeoutMs: number): Promise<T> {
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) return work;
    const id = ++this.nextCallId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { deadline: Date.now() + timeoutMs, method, timeoutMs, reject });
      this.startTicker();
      work.then(
        (value) => { if (this.pending.delete(id)) resolve(value); },
        (err: unknown) => { if (this.pending.delete(id)) reject(err); },
      );
    });
  }

  private startTicker(): void {
    this.idleTicks = 0;
    if (this.ticker !== undefined) return;
    this.ticker = setInterval(() => this.tick(), DEADLINE_TICK_MS);
    this.ticker.unref();
  }

  private tick(): void {
    if (this.pending.size === 0) {
      if (++this.idleTicks >= IDLE_TICKS_MAX && this.ticker !== undefined) {
        clearInterval(this.ticker);
        this.ticker = undefined;
      }
      return;
    }
    this.idleTicks = 0;
    const now = Date.now();
    for (const [id, call] of this.pending) {
      if (call.deadline > now) continue;
      this.pending.delete(id);
      call.reject(rpcErrors.timeout(call.method, call.timeoutMs));
    }
  }
}
