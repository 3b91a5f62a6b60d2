/**
 * What the engine's worker threads (the analysis thread, the segment worker)
 * may hold, and when they give it back. Each thread is a V8 isolate of its
 * own: without limits V8 sizes its young generation as the main thread's
 * (the servers' `--max-semi-space-size`, up to 64 MiB when it was 32), and nothing
 * collects a thread that has gone quiet. Measured on the Debian corpus
 * through RESTORE (`--trace-gc`): each thread held ~42 MB committed over
 * 7–10 MB live, and kept it after the load (with the segments a merge was
 * handed, copied, until its next collection).
 */
import { setFlagsFromString } from 'node:v8';
import { Worker, type ResourceLimits, type WorkerOptions } from 'node:worker_threads';

/**
 * Heap limits of the engine's threads. Their allocations die young (tokens,
 * term strings, a flush's or a merge's scratch arrays) and what survives is
 * small, so a small young generation costs little scavenging.
 */
export const THREAD_RESOURCE_LIMITS: ResourceLimits = Object.freeze({ maxYoungGenerationSizeMb: 8 });

/** The process's `--max-semi-space-size` (command line or NODE_OPTIONS), 0 when not set (V8's own sizing). */
function semiSpaceFlag(): number {
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  let value = 0;
  args.forEach((arg, i) => {
    const flag = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/.exec(arg);
    if (flag !== null) value = Number(flag[1] ?? args[i + 1] ?? 0) || 0;
  });
  return value;
}

/**
 * A worker thread with THREAD_RESOURCE_LIMITS. V8's `--max-semi-space-size`
 * wins over a thread's `resourceLimits`, and the servers set it for the main
 * thread: it is unset while the thread's heap is set up (V8 reads it then,
 * on the thread), and set back once the thread runs. The main thread's heap
 * is set up already and keeps its size.
 */
export function startThread(entry: URL, options: WorkerOptions = {}): Worker {
  const semiSpace = semiSpaceFlag();
  if (semiSpace !== 0) setFlagsFromString('--max-semi-space-size=0');
  let thread: Worker;
  try {
    thread = new Worker(entry, { ...options, resourceLimits: THREAD_RESOURCE_LIMITS });
  } catch (err) {
    if (semiSpace !== 0) setFlagsFromString(`--max-semi-space-size=${semiSpace}`);
    throw err;
  }
  if (semiSpace !== 0) {
    const restore = (): void => setFlagsFromString(`--max-semi-space-size=${semiSpace}`);
    thread.once('online', restore);
    thread.once('exit', restore);
  }
  return thread;
}

/** A thread with nothing to do this long is ended (the next request starts another). */
export const THREAD_IDLE_MS = 10_000;

/**
 * Ends a thread once it has been idle for `idleMs`: `idle()` when its last
 * request is answered, `busy()` when one is sent. The timer never keeps the
 * process alive.
 */
export class IdleRelease {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly release: () => void, private readonly idleMs = THREAD_IDLE_MS) {}

  busy(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  idle(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.release, this.idleMs);
    this.timer.unref();
  }
}
