import { spawnSync } from 'node:child_process';
import { SERVER_ENV } from './node-flags.js';

/**
 * Runs `body` (an ES module) in a fresh node process and parses the JSON it prints: a heap of its own, which a test
 * runner's (its other suites' garbage, its own collections) would otherwise decide for it.
 */
function probe(body: string, nodeArgs: string[] = [], env: Record<string, string> = {}): unknown {
  const script = `import { collectWhenIdle } from ${JSON.stringify(new URL('./idle-gc.js', import.meta.url).href)};\n${body}`;
  // A generous bound: on a loaded machine building a burst's objects alone took over 30 s.
  const run = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 90_000, env: { ...process.env, ...env } });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout);
}

// A large first old-space limit: V8 would otherwise start a collection of its own while the garbage is built (a fresh
// heap's limit is small), and there would be nothing left for the idle collector to do.
it('collects the heap once the event loop is idle after it grew, and not while it stays small', () => {
  const { early, collections } = probe(`
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    const collections = [];
    collectWhenIdle({ intervalMs: 100, idleUtilisationMax: 0.5, growthBytes: 16 << 20, slackCollectionsMax: 0, slackQuietMs: 0 },
      (c) => collections.push([c.heapUsedBefore, c.heapUsedAfter]));
    await sleep(350);
    const early = collections.length;
    // ~40 MB of garbage the process no longer holds.
    let garbage = Array.from({ length: 400_000 }, (_, i) => ({ i, text: \`value \${i} \`.repeat(4) }));
    if (garbage.length !== 400_000) throw new Error('not built');
    garbage = null;
    for (let waited = 0; collections.length === 0 && waited < 3_000; waited += 100) await sleep(100);
    console.log(JSON.stringify({ early, collections }));
  `, ['--initial-old-space-size=512']) as { early: number; collections: Array<[number, number]> };
  expect(early).toBe(0);
  expect(collections.length).toBe(1);
  const [before, after] = collections[0]!;
  expect(after).toBeLessThan(before - 16 * 1024 * 1024);
});

it('gives the young generation back after a burst, once a collection finds the process quiet', () => {
  // A young generation of 64 MiB: more than growthBytes.
  const { burst, reasons, after } = probe(`
    import { getHeapSpaceStatistics } from 'node:v8';
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
  `, ['--max-semi-space-size=32']) as { burst: number; reasons: string[]; after: number };
  expect(burst).toBeGreaterThan(32 * 1024 * 1024);
  expect(reasons).toContain('slack');
  expect(after).toBeLessThan(8 * 1024 * 1024);
}, 120_000);

// Native memory: 190 MB of 64 KiB buffers (from malloc's heap at the servers' settings), one in 20 kept so the top of
// the heap stays in use and malloc cannot give the rest back by itself; once the process is idle, the collector frees
// the buffers and has malloc's free pages given back.
const linuxGlibc = process.platform === 'linux' && (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } })
  ?.header?.glibcVersionRuntime !== undefined;
(linuxGlibc ? it : it.skip)('gives malloc\'s free memory back to the kernel once the process is idle', () => {
  const { resident, afterTrim, trims } = probe(`
    import { readFileSync } from 'node:fs';
    const rssMb = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    const trims = [];
    let buffers = Array.from({ length: 3000 }, () => Buffer.alloc(64 * 1024, 1));
    const kept = buffers.filter((_, i) => i % 20 === 19);
    buffers = null;
    const resident = rssMb();
    collectWhenIdle({ intervalMs: 300, idleUtilisationMax: 0.5, growthBytes: 16 << 20, slackCollectionsMax: 0, slackQuietMs: 0,
      busyTrimBytes: 1 << 40, busyTrimEveryMs: 0 }, undefined, (t) => trims.push(t));
    for (let waited = 0; trims.length === 0 && waited < 10_000; waited += 100) await sleep(100);
    await sleep(100);
    console.log(JSON.stringify({ resident, afterTrim: rssMb(), trims, kept: kept.length }));
  `, [], SERVER_ENV) as { resident: number; afterTrim: number; trims: Array<{ busy: boolean; freeBytesBefore: number }> };
  expect(resident).toBeGreaterThan(150);
  expect(trims.length).toBeGreaterThanOrEqual(1);
  expect(trims[0]!.busy).toBe(false);
  expect(trims[0]!.freeBytesBefore).toBeGreaterThan(100 * 1024 * 1024);
  // The kept twentieth (~10 MB) and the process itself stay.
  expect(afterTrim).toBeLessThan(resident - 100);
}, 120_000);
