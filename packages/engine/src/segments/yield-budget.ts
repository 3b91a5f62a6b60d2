/**
 * Cooperative chunking for CPU-bound segment work (flush, merge): callers
 * check `due()` every few hundred items, and `await pause()` when it says so,
 * so the event loop keeps serving queries and writes between chunks of at
 * most SLICE_MS.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest run of segment work between two event-loop turns, ms. */
export const SLICE_MS = 8;

export class YieldBudget {
  private sliceStart = performance.now();
  pauses = 0;

  constructor(readonly sliceMs = SLICE_MS) {}

  due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  async pause(): Promise<void> {
    this.pauses++;
    await nextTurn();
    this.sliceStart = performance.now();
  }
}
