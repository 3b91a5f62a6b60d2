/**
 * The background thread of segment work (ENGINE.md, write path steps 3–4): a
 * flush encodes a frozen write buffer, a merge reads every posting of its
 * sources and writes them again, seconds of CPU for large segments, so they
 * run here instead of in slices on the event loop that serves queries and
 * writes. Started by background.ts; one request at a time, in order.
 *
 * Requests: `{ id, kind: 'merge', segments: [{ bytes, size, words }] }` (the
 * sources' bytes and deletion bitsets) or `{ id, kind: 'flush', buffer }`
 * (WriteBuffer.flushSnapshot), copies owned by this thread.
 * Answer: `{ id, bytes }` (the segment, transferred) or `{ id, error }`.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { Bitset } from '../values/bitset.js';
import { flushSourceOf, flushWriteBuffer } from './flush.js';
import { mergeSegments } from './merge.js';
import { SegmentReader } from './segment-reader.js';
import type { FlushSnapshot } from './write-buffer.js';
import { YieldBudget } from './yield-budget.js';

export interface MergeRequest {
  readonly id: number;
  readonly kind: 'merge';
  readonly segments: ReadonlyArray<{ readonly bytes: Uint8Array; readonly size: number; readonly words: Uint32Array }>;
}

export interface FlushRequest {
  readonly id: number;
  readonly kind: 'flush';
  readonly buffer: FlushSnapshot;
}

export type SegmentWorkerRequest = MergeRequest | FlushRequest;

export type SegmentWorkerAnswer = { readonly id: number; readonly bytes: Uint8Array } | { readonly id: number; readonly error: string };

/**
 * Nice value of this thread (Linux: the nice value is per thread, and
 * `setPriority` with no pid sets the calling one's). A flush or merge is
 * background work, and on a machine with fewer cores than busy threads it
 * took its CPU from the event loop: on 2 cores with the server pinned to one,
 * while five shards flushed their 10,000-change buffers one after the other
 * the PUT rate fell to a fifth for two seconds. At nice 10 it runs in what
 * the event loop leaves (a tenth of the core when that is saturated, all of
 * it when idle); a buffer that still falls behind is bounded as before by the
 * index's replay bound, which holds writes back until the flush lands.
 */
export const SEGMENT_WORKER_NICE = 10;

function lowerPriority(): void {
  try {
    setPriority(SEGMENT_WORKER_NICE);
  } catch {
    // A platform without per-thread priorities: the work runs as before, at the process's priority.
  }
}

/** Nothing else runs on this thread: no slices. */
const NEVER_YIELD = new YieldBudget(Number.POSITIVE_INFINITY);

async function handle(request: SegmentWorkerRequest): Promise<Uint8Array> {
  if (request.kind === 'flush') return flushWriteBuffer(flushSourceOf(request.buffer), NEVER_YIELD);
  const readers = request.segments.map((s, i) => new SegmentReader(i + 1, s.bytes));
  const deleted = request.segments.map((s) => new Bitset(s.size, s.words));
  return mergeSegments(readers, deleted, NEVER_YIELD);
}

const port = parentPort;
if (port !== null) {
  lowerPriority();
  let queue = Promise.resolve();
  port.on('message', (request: SegmentWorkerRequest) => {
    queue = queue.then(async () => {
      try {
        const bytes = await handle(request);
        port.postMessage({ id: request.id, bytes } satisfies SegmentWorkerAnswer, [bytes.buffer as ArrayBuffer]);
      } catch (err) {
        port.postMessage({ id: request.id, error: err instanceof Error ? err.stack ?? err.message : String(err) } satisfies SegmentWorkerAnswer);
      }
    });
  });
}
