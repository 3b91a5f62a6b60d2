/**
 * Bounded in-flight calls with a bounded FIFO of waiters: the backpressure of
 * one RPC connection. A call past both bounds fails at once (503) instead of
 * growing memory without limit.
 */
import { rpcErrors } from './errors.js';

export class InFlightLimiter {
  private running = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly inFlightMax: number, private readonly queuedMax: number) {}

  get inFlight(): number {
    return this.running;
  }

  /** Every slot is taken: a call now would wait. */
  get saturated(): boolean {
    return this.running >= this.inFlightMax;
  }

  /** Resolves when a slot is taken; the caller must call `release()` once. */
  acquire(): Promise<void> | undefined {
    if (this.running < this.inFlightMax) {
      this.running++;
      return undefined;
    }
    if (this.waiters.length >= this.queuedMax) throw rpcErrors.overloaded(this.inFlightMax, this.queuedMax);
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next(); // the slot passes straight to the next waiter
    else this.running--;
  }
}
