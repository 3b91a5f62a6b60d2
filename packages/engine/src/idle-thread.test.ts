import { setTimeout as sleep } from 'node:timers/promises';
import { IdleRelease, startThread, THREAD_RESOURCE_LIMITS } from './idle-thread.js';

describe('IdleRelease', () => {
  it('releases once idle for its time, and not while busy', async () => {
    let released = 0;
    const release = new IdleRelease(() => released++, 30);
    release.idle();
    await sleep(10);
    release.busy();
    await sleep(60);
    expect(released).toBe(0);
    release.idle();
    await sleep(100);
    expect(released).toBe(1);
  });
});

describe('startThread', () => {
  it('gives the thread a young generation within THREAD_RESOURCE_LIMITS', async () => {
    const code = `import { parentPort } from 'node:worker_threads'; import { getHeapSpaceStatistics } from 'node:v8';
      let keep = []; for (let i = 0; i < 1e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 50000) keep = []; }
      parentPort.postMessage(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);`;
    const thread = startThread(new URL(`data:text/javascript,${encodeURIComponent(code)}`));
    const newSpace = await new Promise<number>((resolve, reject) => {
      thread.once('message', resolve);
      thread.once('error', reject);
    });
    await thread.terminate();
    expect(newSpace).toBeLessThanOrEqual(THREAD_RESOURCE_LIMITS.maxYoungGenerationSizeMb! * 1024 * 1024);
  });
});
