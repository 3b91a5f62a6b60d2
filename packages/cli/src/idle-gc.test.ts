import { spawnSync } from 'node:child_process';
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

it('gives the young generation back after a burst, once a collection finds the process quiet', () => {
  // A child process: the young generation's size is the process's own, and this one has the servers' semi-spaces.
  const probe = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { collectWhenIdle } from ${JSON.stringify(new URL('./idle-gc.js', import.meta.url).href)};
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const reasons = [];
    collectWhenIdle({ intervalMs: 500, idleUtilisationMax: 0.5, growthBytes: 16 << 20, slackCollectionsMax: 2, slackQuietMs: 6000 },
      (c) => reasons.push(c.reason));
    const kept = [];
    for (let round = 0; round < 40; round++) {
      const batch = [];
      for (let i = 0; i < 200000; i++) batch.push({ i, text: 'x' + i });
      kept.push(batch.length);
    }
    const burst = newSpace();
    setTimeout(() => { console.log(JSON.stringify({ burst, reasons, after: newSpace() })); }, 12000);
  `;
  const run = spawnSync(process.execPath, ['--max-semi-space-size=64', '--input-type=module', '-e', probe], { encoding: 'utf8', timeout: 30_000 });
  expect(run.stderr).toBe('');
  const { burst, reasons, after } = JSON.parse(run.stdout) as { burst: number; reasons: string[]; after: number };
  expect(burst).toBeGreaterThan(64 * 1024 * 1024);
  expect(reasons).toContain('slack');
  expect(after).toBeLessThan(8 * 1024 * 1024);
}, 40_000);
