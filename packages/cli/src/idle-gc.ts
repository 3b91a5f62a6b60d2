/**
 * Memory given back after a burst. V8 collects its old generation when an
 * allocation needs room, and its memory reducer only after a mark-compact
 * that a quiet process may never reach: after a burst of large or hostile
 * bodies the server sat on 95 MB of old space and 25 MB of large objects it
 * no longer used (scripts/reliability/fuzz-bodies.mjs, settled figures). So
 * a long-running process checks, every `intervalMs`, whether its event loop
 * was idle over the interval and its heap grew by `growthBytes` since the
 * last collection; then it runs one full collection, at a time nobody waits
 * on it.
 *
 * A collection frees objects but V8 keeps the pages it committed for them —
 * above all the young generation, which a burst grows to its maximum (two
 * semi-spaces of `--max-semi-space-size`, 32 MiB for the servers) and which
 * stays committed and resident, used or not. V8 shrinks it only at a
 * collection that finds the allocation rate low over its last 5 s (measured
 * by samples taken at collections: one right after a burst still sees the
 * burst). So once the heap commits `growthBytes` more than it uses, the
 * process runs up to `slackCollectionsMax` collections while idle, each at
 * least `slackQuietMs` after the previous one (measured: 128 MiB of young
 * generation down to 1 MiB, RSS 217 → 63 MB, at the second).
 *
 * Native memory the same way (malloc-trim.ts): on each look, once malloc
 * holds `growthBytes` more free than after the last trim (V8's compiler
 * threads, LevelDB and freed request buffers leave it there), an idle
 * process has it given back to the kernel;
 * a busy one only past `busyTrimBytes`, at most once per `busyTrimEveryMs`
 * (a trim walks every arena: a few milliseconds on a large heap).
 *
 * `gc` comes from V8's own extension, enabled here
 * (`v8.setFlagsFromString('--expose-gc')` takes effect for new contexts).
 */
import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { glibcHeap, type NativeHeap } from './malloc-trim.js';

export interface IdleCollectorOptions {
  /** How often the process looks. */
  intervalMs: number;
  /** Event-loop utilisation over the interval at most, to count as idle (0–1). */
  idleUtilisationMax: number;
  /** Heap growth since the last collection, or committed heap beyond what is used, that is worth a collection. */
  growthBytes: number;
  /** Collections that give committed memory back, after the heap committed `growthBytes` more. */
  slackCollectionsMax: number;
  /** Least time between a collection and a slack collection: more than V8's 5 s allocation-rate window. */
  slackQuietMs: number;
  /** Free bytes in malloc's arenas past which even a busy process has them given back. */
  busyTrimBytes: number;
  /** Least time between two trims of a busy process. */
  busyTrimEveryMs: number;
}

export const IDLE_COLLECTOR_DEFAULTS: IdleCollectorOptions = Object.freeze({
  intervalMs: 5_000,
  idleUtilisationMax: 0.05,
  growthBytes: 32 * 1024 * 1024,
  slackCollectionsMax: 2,
  slackQuietMs: 6_000,
  busyTrimBytes: 128 * 1024 * 1024,
  busyTrimEveryMs: 30_000,
});

/** What one idle collection did. */
export interface IdleCollection {
  /** `growth`: the heap grew; `slack`: V8 held committed memory it did not use. */
  reason: 'growth' | 'slack';
  heapUsedBefore: number;
  heapUsedAfter: number;
  heapCommittedBefore: number;
  heapCommittedAfter: number;
}

/** What one trim of malloc's free memory did. */
export interface NativeTrim {
  busy: boolean;
  freeBytesBefore: number;
  freeBytesAfter: number;
  ms: number;
}

type GarbageCollector = () => void;

/** V8's `gc`, made available without a command-line flag. */
function exposedGc(): GarbageCollector {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as GarbageCollector;
}

/**
 * Start looking; the returned function stops. The timer is unref'd: it never
 * keeps a process alive. `onCollect` hears what each collection did, `onTrim`
 * each trim; `heap` is malloc's (none: no trims).
 */
export function collectWhenIdle(options: IdleCollectorOptions = IDLE_COLLECTOR_DEFAULTS,
  onCollect?: (collection: IdleCollection) => void, onTrim?: (trim: NativeTrim) => void,
  heap: NativeHeap | undefined = glibcHeap()): () => void {
  const gc = exposedGc();
  let trimmedAt = -Infinity;
  // Free bytes when malloc last had nothing resident to give back: a trim releases the pages of free chunks but they
  // stay free chunks, so what counts is how much more is free since (following it down as malloc reuses them).
  let freeFloor = 0;
  const trimIfWorth = (idle: boolean): void => {
    if (heap === undefined) return;
    const freeBytesBefore = heap.freeBytes();
    freeFloor = Math.min(freeFloor, freeBytesBefore);
    const freed = freeBytesBefore - freeFloor;
    const worth = idle ? freed >= options.growthBytes
      : freed >= options.busyTrimBytes && performance.now() - trimmedAt >= options.busyTrimEveryMs;
    if (!worth) return;
    const started = performance.now();
    heap.trim();
    trimmedAt = performance.now();
    const freeBytesAfter = heap.freeBytes();
    freeFloor = freeBytesAfter;
    onTrim?.({ busy: !idle, freeBytesBefore, freeBytesAfter, ms: trimmedAt - started });
  };
  let baseline = process.memoryUsage().heapUsed;
  // Committed heap after the last collection, and when that was.
  let committedFloor = getHeapStatistics().total_heap_size;
  let collectedAt = performance.now();
  let slackCollectionsLeft = 0;
  let utilisation = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const idle = performance.eventLoopUtilization(now, utilisation).utilization <= options.idleUtilisationMax;
    utilisation = now;
    const before = getHeapStatistics();
    // V8 collected on its own meanwhile: growth counts from the lower point.
    if (before.used_heap_size < baseline) baseline = before.used_heap_size;
    if (before.total_heap_size - committedFloor >= options.growthBytes) slackCollectionsLeft = options.slackCollectionsMax;
    if (!idle) {
      trimIfWorth(false);
      return;
    }
    let reason: IdleCollection['reason'];
    if (before.used_heap_size - baseline >= options.growthBytes) {
      reason = 'growth';
    } else if (slackCollectionsLeft > 0 && before.total_heap_size - before.used_heap_size >= options.growthBytes
      && performance.now() - collectedAt >= options.slackQuietMs) {
      reason = 'slack';
      slackCollectionsLeft--;
    } else {
      trimIfWorth(true);
      return;
    }
    // A full collection. Not `gc({ type: 'major', execution: 'sync' })`: that form scans this stack conservatively and,
    // from a timer, kept a burst's garbage alive (measured: 68 MB before and after; `gc()` left 3 MB).
    gc();
    const after = getHeapStatistics();
    baseline = after.used_heap_size;
    committedFloor = after.total_heap_size;
    collectedAt = performance.now();
    onCollect?.({
      reason,
      heapUsedBefore: before.used_heap_size,
      heapUsedAfter: after.used_heap_size,
      heapCommittedBefore: before.total_heap_size,
      heapCommittedAfter: after.total_heap_size,
    });
    // What the collection freed of Buffers' and other native memory is malloc's now.
    trimIfWorth(true);
  }, options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
