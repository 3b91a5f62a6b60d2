/**
 * The deadlines of one connection, as plain ms timestamps: one for the
 * current phase (headers, body, idle, linger) and one for a full write
 * buffer to drain. Nothing is armed per request: the server's one coarse
 * clock tick asks each connection what is due (`due`), and the connection
 * acts on the answer.
 */

// Deadline kinds (what `due` answers, with NONE and DRAIN).
export const NONE = 0;
export const HEADERS = 1;
export const BODY = 2;
export const IDLE = 3;
export const LINGER = 4;
/** The write buffer did not drain in time: the client stopped reading its responses. */
export const DRAIN = 5;

/**
 * After answering with `Connection: close`, input is still read (and
 * dropped) this long so the client sees the response rather than a reset.
 */
export const LINGER_MS = 2_000;

export class Deadlines {
  /** ms timestamp when the current deadline passes; 0 = none. */
  at = 0;
  kind = NONE;
  /** ms timestamp by which a full write buffer must have drained; 0 = none. */
  drainAt = 0;
  /** A headers deadline due before the next clock tick, timed exactly (see due). */
  private exactTimer: NodeJS.Timeout | null = null;
  /** Called when the exact timer fires (bound once per connection). */
  private readonly onExactTimer: () => void;

  constructor(onExactTimer: () => void) {
    this.onExactTimer = onExactTimer;
  }

  set(kind: number, ms: number): void {
    this.kind = kind;
    this.at = kind === NONE ? 0 : Date.now() + ms;
  }

  /** The exact timer fired: it is spent. */
  exactTimerFired(): void {
    this.exactTimer = null;
  }

  /** The connection closed: nothing is due any more. */
  clear(): void {
    this.at = 0;
    this.drainAt = 0;
    if (this.exactTimer !== null) clearTimeout(this.exactTimer);
    this.exactTimer = null;
  }

  /**
   * What has passed by `now`: DRAIN, the kind of the current deadline, or
   * NONE. Called by the server's clock tick (every `tickMs`). A headers
   * deadline due before the next tick gets a one-off timer of its own: the
   * head timeout is the bound against slow-header clients, kept to the
   * millisecond rather than up to a tick late. So does an idle one: a new
   * connection that sends nothing is bounded by the head timeout too
   * (connection.ts). Only connections about to time out pay for a timer.
   */
  due(now: number, tickMs: number): number {
    if (this.drainAt !== 0 && now >= this.drainAt) return DRAIN;
    if (this.at === 0) return NONE;
    if (now < this.at) {
      if ((this.kind === HEADERS || this.kind === IDLE) && this.at - now < tickMs && this.exactTimer === null) {
        this.exactTimer = setTimeout(this.onExactTimer, this.at - now);
        this.exactTimer.unref();
      }
      return NONE;
    }
    if (this.kind === NONE) this.at = 0;
    return this.kind;
  }
}
