import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../shard.js';
import { StoreMemoryBudget, type StoreMemoryOptions } from './store-memory.js';

const MiB = 1024 * 1024;
let dir: string;
const open: Shard[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-store-memory-'));
});

afterEach(async () => {
  for (const shard of open.splice(0)) await shard.close();
  await rm(dir, { recursive: true, force: true });
});

/** `copies` shard copies under one budget, each with LevelDB's write buffer at 32 MiB (the default). */
async function openCopies(copies: number, options: Partial<StoreMemoryOptions>): Promise<{ budget: StoreMemoryBudget; shards: Shard[] }> {
  // Sampled by hand (sample()), so what is asserted does not depend on a timer.
  const budget = new StoreMemoryBudget({ sampleMs: 60_000, ...options });
  const shards: Shard[] = [];
  for (let i = 0; i < copies; i++) {
    const shard = await Shard.open({ path: join(dir, `copy${i}`), storeMemory: budget, storeWriteBufferBytes: 32 * MiB, analysisThread: false });
    open.push(shard);
    shards.push(shard);
  }
  return { budget, shards };
}

/** ~`mib` MiB of documents into each copy (64 KiB each, one word repeated: cheap to index). */
async function fill(shards: Shard[], mib: number, budget: StoreMemoryBudget, peaks: number[]): Promise<void> {
  const text = 'word '.repeat(64 * 1024 / 5);
  for (let i = 0; i < mib * 16; i++) {
    await Promise.all(shards.map((shard) => shard.write({ op: 'index', id: `d${i}`, body: { text } })));
    peaks.push(budget.stats().bytes);
    budget.sample();
    // The flushes asked for finish before the next round: what is asserted is the policy, not LevelDB's speed.
    await budget.settled();
  }
}

describe('StoreMemoryBudget: what the LevelDB databases of several copies hold in memory', () => {
  it('without a bound, three copies written 6 MiB each keep it in their write buffers (what the bound is for)', async () => {
    const { budget, shards } = await openCopies(3, { bytesMax: 1024 * MiB, idleFlushMs: 0, ageMsMax: 0 });
    const peaks: number[] = [];
    await fill(shards, 6, budget, peaks);
    expect(budget.stats().bytes).toBeGreaterThan(15 * MiB);
    expect(budget.stats().flushes).toBe(0);
  });

  it('keeps the copies together near the bound by writing the fullest write buffers out early; nothing written is lost', async () => {
    const { budget, shards } = await openCopies(3, { bytesMax: 8 * MiB, idleFlushMs: 0 });
    const peaks: number[] = [];
    // 36 MiB in all: without the bound the three write buffers would end near it.
    await fill(shards, 12, budget, peaks);
    await budget.settled();
    expect(budget.stats().flushes).toBeGreaterThan(0);
    // Sampled after every round of writes (3 × 64 KiB, twice: record and oplog entry, and the index's own writes).
    expect(Math.max(...peaks)).toBeLessThan(8 * MiB + 2 * MiB);
    for (const shard of shards) {
      expect(shard.stats().documents).toBe(192);
      expect((await shard.get('d191'))?.version).toBe(1);
    }
  });

  it('gives an idle copy\'s write buffer back, and the documents survive a reopen', async () => {
    const { budget, shards } = await openCopies(1, { bytesMax: 1024 * MiB, idleFlushMs: 50 });
    const peaks: number[] = [];
    await fill(shards, 4, budget, peaks);
    expect(budget.stats().bytes).toBeGreaterThan(3 * MiB);
    await new Promise((resolve) => setTimeout(resolve, 80));
    budget.sample();
    await budget.settled();
    expect(budget.stats().flushes).toBeGreaterThan(0);
    expect(budget.stats().bytes).toBeLessThan(MiB);
    const [shard] = shards;
    await shard.close();
    open.length = 0;
    const again = await Shard.open({ path: join(dir, 'copy0'), analysisThread: false });
    open.push(again);
    expect(again.stats().documents).toBe(64);
  });

  it('writes out a write buffer that has held writes for ageMsMax while it kept growing (a steady trickle never idles)', async () => {
    const { budget, shards } = await openCopies(1, { bytesMax: 1024 * MiB, idleFlushMs: 0, ageMsMax: 100 });
    const [shard] = shards;
    const text = 'word '.repeat(1000);
    let n = 0;
    const trickle = async (): Promise<void> => {
      await shard!.write({ op: 'index', id: `d${n++}`, body: { text } });
      budget.sample();
      await budget.settled();
    };
    await trickle();
    expect(budget.stats().flushes).toBe(0);
    const startedAt = Date.now();
    // Growing at every sample (never idle), for longer than ageMsMax: its writes are written out.
    while (Date.now() - startedAt < 150) await trickle();
    expect(budget.stats().flushes).toBeGreaterThan(0);
    await shard!.close();
    open.length = 0;
    const again = await Shard.open({ path: join(dir, 'copy0'), analysisThread: false });
    open.push(again);
    expect(again.stats().documents).toBe(n);
  });

  it('holds writes back while the databases are over the stall bound, and lets them go once memtables are written out', async () => {
    // Sampled by its own timer here: a held-back write is let go by a sample (or after stallMsMax).
    const { budget, shards } = await openCopies(2, { bytesMax: 2 * MiB, stallFactor: 1, stallMsMax: 2_000, sampleMs: 10, idleFlushMs: 0 });
    const text = 'word '.repeat(64 * 1024 / 5);
    for (let i = 0; i < 128; i++) await Promise.all(shards.map((shard) => shard.write({ op: 'index', id: `d${i}`, body: { text } })));
    await budget.settled();
    expect(budget.stats().stalls).toBeGreaterThan(0);
    for (const shard of shards) expect(shard.stats().documents).toBe(128);
  });
});
