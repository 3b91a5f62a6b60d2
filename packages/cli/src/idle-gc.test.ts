import { collectWhenIdle } from './idle-gc.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('collects the heap once the event loop is idle after it grew, and not while it stays small', async () => {
  const collections: Array<[number, number]> = [];
  const stop = collectWhenIdle({ intervalMs: 100, idleUtilisationMax: 0.5, growthBytes: 16 * 1024 * 1024, slackCollectionsMax: 0, slackQuietMs: 0 },
    (c) => collections.push([c.heapUsedBefore, c.heapUsedAfter]));
  try {
    await sleep(350);
    expect(collections).toEqual([]);
    // ~40 MB of garbage the process no longer holds.
    let garbage: unknown[] | null = Array.from({ length: 400_000 }, (_, i) => ({ i, text: `value ${i} `.repeat(4) }));
    expect((garbage as unknown[]).length).toBe(400_000);
    garbage = null;
    for (let waited = 0; collections.length === 0 && waited < 3_000; waited += 100) await sleep(100);
    expect(collections.length).toBe(1);
    const [before, after] = collections[0]!;
    expect(after).toBeLessThan(before - 16 * 1024 * 1024);
  } finally {
    stop();
  }
});
