/**
 * Memory given back after a burst. V8 collects its old generation when an
 * allocation needs room, and its memory reducer only after a mark-compact
 * that a quiet process may never reach: after a burst of large or hostile
 * bodies the server sat on 95 MB of old space and 25 MB of large objects it
 * no longer used (scripts/reliability/fuzz-bodies.mjs, settled figures). So
 * a long-running process checks, every `intervalMs`, whether its event loop
 * was idle over the interval and its heap grew by `growthBytes` since the
 * last collection; then it runs one full collection, at a time nobody waits
 * on it. `gc` comes from V8's own extension, enabled here
 * (`v8.setFlagsFromString('--expose-gc')` takes effect for new contexts).
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface IdleCollectorOptions {
  /** How often the process looks. */
  intervalMs: number;
  /** Event-loop utilisation over the interval at most, to count as idle (0–1). */
  idleUtilisationMax: number;
  /** Heap growth since the last collection that is worth a collection. */
  growthBytes: number;
}

export const IDLE_COLLECTOR_DEFAULTS: IdleCollectorOptions = Object.freeze({
  intervalMs: 5_000,
  idleUtilisationMax: 0.05,
  growthBytes: 32 * 1024 * 1024,
});

type GarbageCollector = () => void;

/** V8's `gc`, made available without a command-line flag. */
function exposedGc(): GarbageCollector {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as GarbageCollector;
}

/**
 * Start looking; the returned function stops. The timer is unref'd: it never
 * keeps a process alive. `onCollect` hears the heap before and after.
 */
export function collectWhenIdle(options: IdleCollectorOptions = IDLE_COLLECTOR_DEFAULTS,
  onCollect?: (before: number, after: number) => void): () => void {
  const gc = exposedGc();
  let baseline = process.memoryUsage().heapUsed;
  let utilisation = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const idle = performance.eventLoopUtilization(now, utilisation).utilization <= options.idleUtilisationMax;
    utilisation = now;
    const before = process.memoryUsage().heapUsed;
    // V8 collected on its own meanwhile: growth counts from the lower point.
    if (before < baseline) baseline = before;
    if (!idle || before - baseline < options.growthBytes) return;
    // A full collection. Not `gc({ type: 'major', execution: 'sync' })`: that form scans this stack conservatively and,
    // from a timer, kept a burst's garbage alive (measured: 68 MB before and after; `gc()` left 3 MB).
    gc();
    baseline = process.memoryUsage().heapUsed;
    onCollect?.(before, baseline);
  }, options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
