/**
 * Segment work off the event loop: `flushInBackground` and
 * `mergeInBackground` hand a flush or a merge to the process's segment worker
 * (segment-worker.ts), one thread shared by every shard, started on first
 * use and not keeping the process alive while idle, and ended once idle for
 * THREAD_IDLE_MS (idle-thread.ts: what its heap holds goes back). If the
 * thread dies, the work it held fails (ShardIndex retries it) and the next
 * request starts a new thread.
 */
import type { Worker } from 'node:worker_threads';
import { IdleRelease, startThread } from '../idle-thread.js';
import type { Bitset } from '../values/bitset.js';
import type { SegmentReader } from './segment-reader.js';
import type { SegmentWorkerAnswer, SegmentWorkerRequest } from './segment-worker.js';
import type { WriteBuffer } from './write-buffer.js';

interface Pending {
  resolve: (bytes: Uint8Array) => void;
  reject: (error: Error) => void;
}

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, Pending>();
const release = new IdleRelease(() => {
  const thread = worker;
  if (thread === null || pending.size > 0) return;
  worker = null;
  // Its exit must not fail the work of the thread that follows it.
  thread.removeAllListeners();
  thread.on('error', () => undefined);
  void thread.terminate();
});

function failAll(error: Error): void {
  for (const p of pending.values()) p.reject(error);
  pending.clear();
}

function segmentWorker(): Worker {
  if (worker !== null) return worker;
  const started = startThread(new URL('./segment-worker.js', import.meta.url));
  started.on('message', (answer: SegmentWorkerAnswer) => {
    const p = pending.get(answer.id);
    if (p === undefined) return;
    pending.delete(answer.id);
    if ('error' in answer) p.reject(new Error(`segment worker: ${answer.error}`));
    else p.resolve(answer.bytes);
    // Idle: let the process exit even with the thread alive.
    if (pending.size === 0) {
      started.unref();
      release.idle();
    }
  });
  started.on('error', (err) => {
    if (worker === started) worker = null;
    failAll(err);
  });
  started.on('exit', (code) => {
    if (worker === started) worker = null;
    failAll(new Error(`segment worker exited with code ${code}`));
  });
  // After the listeners: adding a 'message' listener refs a worker again (text-analysis.ts).
  started.unref();
  worker = started;
  return started;
}

/**
 * The merge of `sources` without the ordinals of `deleted[i]`, encoded on the
 * segment worker: the same bytes `mergeSegments` gives. The sources' bytes
 * and bitsets are copied for the thread, so the readers stay usable here.
 */
export function mergeInBackground(sources: readonly SegmentReader[], deleted: readonly Bitset[]): Promise<Uint8Array> {
  const segments = sources.map((s, i) => ({ bytes: s.bytes.slice(), size: deleted[i]!.size, words: deleted[i]!.words.slice() }));
  return run({ id: nextId++, kind: 'merge', segments }, segments.flatMap((s) => [s.bytes.buffer as ArrayBuffer, s.words.buffer as ArrayBuffer]));
}

/**
 * The segment of a frozen write buffer, encoded on the segment worker: the
 * same bytes `flushWriteBuffer` gives. The buffer is copied (flushSnapshot)
 * and stays searchable here until its segment is adopted.
 */
export function flushInBackground(buffer: WriteBuffer): Promise<Uint8Array> {
  const snapshot = buffer.flushSnapshot();
  return run({ id: nextId++, kind: 'flush', buffer: snapshot }, buffersOf(snapshot));
}

/** The ArrayBuffers under a snapshot's typed arrays (its own copies: moved to the thread, not copied again), once each. */
function buffersOf(value: unknown, into = new Set<ArrayBuffer>()): ArrayBuffer[] {
  if (ArrayBuffer.isView(value)) into.add(value.buffer as ArrayBuffer);
  else if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null) buffersOf(item, into);
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) buffersOf(item, into);
  }
  return [...into];
}

function run(request: SegmentWorkerRequest, transfer: ArrayBuffer[] = []): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const thread = segmentWorker();
    release.busy();
    pending.set(request.id, { resolve, reject });
    // Busy: keep the process alive until the answer is in (a close waits for it).
    thread.ref();
    thread.postMessage(request, transfer);
  });
}
