import { reconnectDelayMs } from './backoff.js';

describe('reconnect backoff', () => {
  const options = { reconnectInitialMs: 100, reconnectMaxMs: 5000 };

  it('doubles from the initial delay up to the cap, with half of each delay random', () => {
    const ceilings = [100, 200, 400, 800, 1600, 3200, 5000, 5000];
    ceilings.forEach((ceiling, attempt) => {
      expect(reconnectDelayMs(attempt, options, () => 0)).toBe(ceiling / 2);
      expect(reconnectDelayMs(attempt, options, () => 0.999999)).toBe(Math.round(ceiling * 0.9999995));
    });
  });

  it('stays capped for any number of attempts', () => {
    expect(reconnectDelayMs(10_000, options, () => 1)).toBe(5000);
    expect(reconnectDelayMs(10_000, options, () => 0)).toBe(2500);
  });

  it('spreads the delays of peers redialing at the same attempt', () => {
    const delays = new Set(Array.from({ length: 50 }, () => reconnectDelayMs(3, options)));
    expect(delays.size).toBeGreaterThan(10);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(400);
  });
});
