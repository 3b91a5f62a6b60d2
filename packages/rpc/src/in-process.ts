/**
 * In-process transport: the embedded server's coordinator calls its own shard
 * node without a socket. Same contract as the WebSocket transport — deadlines,
 * bounded in-flight calls, errors normalised to TesseraError — but params and
 * results are passed by reference, not encoded: both sides must treat them as
 * immutable (measured: encoding every GET through msgpack would cost more than
 * the rest of the read path).
 */
import { toTesseraError } from '@tessera/errors';
import { rpcErrors } from './errors.js';
import { InFlightLimiter } from './limiter.js';
import { RPC_CLIENT_DEFAULTS, type RpcCallOptions, type RpcClient, type RpcClientOptions, type RpcHandler } from './transport.js';

export class InProcessClient implements RpcClient {
  private readonly options: RpcClientOptions;
  private readonly limiter: InFlightLimiter;
  private isClosed = false;

  constructor(private readonly handler: RpcHandler, options: Partial<RpcClientOptions> = {}) {
    this.options = { ...RPC_CLIENT_DEFAULTS, ...options };
    this.limiter = new InFlightLimiter(this.options.inFlightMax, this.options.queuedMax);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get inFlight(): number {
    return this.limiter.inFlight;
  }

  async call<T = unknown>(method: string, params: unknown, options?: RpcCallOptions): Promise<T> {
    if (this.isClosed) throw rpcErrors.closed();
    const waiting = this.limiter.acquire();
    if (waiting) await waiting;
    try {
      const timeoutMs = options?.timeoutMs ?? this.options.callTimeoutMs;
      return (await withDeadline(this.handler(method, params), method, timeoutMs)) as T;
    } catch (err) {
      throw toTesseraError(err);
    } finally {
      this.limiter.release();
    }
  }

  async close(): Promise<void> {
    this.isClosed = true;
  }
}

function withDeadline<T>(work: Promise<T>, method: string, timeoutMs: number): Promise<T> {
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) return work;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(rpcErrors.timeout(method, timeoutMs)), timeoutMs);
    work.then(
      (value) => { clearTimeout(timer); resolve(value); },
      (err: unknown) => { clearTimeout(timer); reject(err); },
    );
  });
}
