import type { StateStore } from './store.js';

/**
 * Resolves true once `store`'s state is at `revision` or later (its watch
 * brought it), false if that takes longer than `timeoutMs`.
 */
export function reachedRevision<T>(store: StateStore<T>, revision: number, timeoutMs: number): Promise<boolean> {
  const there = (): boolean => (store.revision?.() ?? 0) >= revision;
  if (there()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const finish = (reached: boolean): void => {
      clearTimeout(timer);
      stop();
      resolve(reached);
    };
    const stop = store.watch(() => { if (there()) finish(true); });
    const timer = setTimeout(() => finish(false), timeoutMs);
  });
}
