import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../shard.js';
import { COMMIT_SECONDS_BOUNDS, LatencyHistogram } from './latency-histogram.js';

it('puts each observation in the first bucket whose bound it does not exceed, the rest above every bound', () => {
  const h = new LatencyHistogram([0.001, 0.01, 0.1]);
  for (const seconds of [0, 0.001, 0.0011, 0.01, 0.05, 0.1, 0.2, 30]) h.observe(seconds);
  const s = h.snapshot();
  expect(s.bounds).toEqual([0.001, 0.01, 0.1]);
  expect(s.counts).toEqual([2, 2, 2, 2]);
  expect(s.count).toBe(8);
  expect(s.sum).toBeCloseTo(30.3621, 10);
});

it('bounds increase', () => {
  for (let i = 1; i < COMMIT_SECONDS_BOUNDS.length; i++) {
    expect(COMMIT_SECONDS_BOUNDS[i]).toBeGreaterThan(COMMIT_SECONDS_BOUNDS[i - 1] as number);
  }
});

describe('a shard times its LevelDB batch writes', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-commit-timing-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('buffered and synced (commit) batches apart, one observation per successful batch', async () => {
    const shard = await Shard.open({ path: join(dir, 'shard') });
    try {
      const before = shard.metrics();
      expect(before.commitSeconds.buffered.count).toBe(0);
      expect(before.commitSeconds.synced.count).toBe(0);
      await shard.write({ op: 'index', id: 'a', body: { n: 1 } });
      await shard.write({ op: 'index', id: 'b', body: { n: 2 } });
      await shard.write({ op: 'index', id: 'c', body: { n: 3 }, commit: true });
      const after = shard.metrics();
      const { buffered, synced } = after.commitSeconds;
      expect(buffered.count + synced.count).toBe(after.batchesWritten);
      expect(synced.count).toBe(after.batchesSynced);
      expect(synced.count).toBeGreaterThanOrEqual(1);
      expect(buffered.count).toBeGreaterThanOrEqual(1);
      for (const h of [buffered, synced]) {
        expect(h.bounds).toEqual(COMMIT_SECONDS_BOUNDS);
        expect(h.counts).toHaveLength(COMMIT_SECONDS_BOUNDS.length + 1);
        expect(h.counts.reduce((a, b) => a + b, 0)).toBe(h.count);
        expect(h.sum).toBeGreaterThan(0);
      }
    } finally {
      await shard.close();
    }
  });
});
