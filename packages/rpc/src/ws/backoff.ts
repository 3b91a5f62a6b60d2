/**
 * Reconnect delays: exponential from `initialMs`, capped at `maxMs`, with
 * "equal jitter" (half the delay fixed, half random) so that nodes which lost
 * the coordinator together do not all redial in the same millisecond, while
 * none redials at once in a tight loop.
 */
export interface BackoffOptions {
  reconnectInitialMs: number;
  reconnectMaxMs: number;
}

export const BACKOFF_DEFAULTS: Readonly<BackoffOptions> = Object.freeze({ reconnectInitialMs: 100, reconnectMaxMs: 5000 });

/** Delay before redial number `attempt` (0 for the first after a loss). */
export function reconnectDelayMs(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const exponent = Math.min(attempt, 30);
  const ceiling = Math.min(options.reconnectMaxMs, options.reconnectInitialMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
