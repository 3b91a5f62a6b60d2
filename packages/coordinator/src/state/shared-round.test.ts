import { reachedRevision } from './reached.js';
import { SharedRound } from './shared-round.js';
import type { StateStore } from './store.js';

/** A call whose answers the test releases one at a time, counting the calls started. */
function gatedCall() {
  const pending: Array<{ resolve: (n: number) => void; reject: (err: Error) => void }> = [];
  let started = 0;
  return {
    run: () => new Promise<number>((resolve, reject) => { started++; pending.push({ resolve, reject }); }),
    get started() { return started; },
    release: (value: number) => pending.shift()!.resolve(value),
    fail: (err: Error) => pending.shift()!.reject(err),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('SharedRound', () => {
  it('runs one call at a time; the callers arriving during one share the next, which starts after it', async () => {
    const call = gatedCall();
    const round = new SharedRound(call.run);
    const first = round.join();
    expect(call.started).toBe(1);
    // A burst while the first is in flight: no call of its own, one shared next.
    const burst = Array.from({ length: 10 }, () => round.join());
    expect(call.started).toBe(1);
    call.release(1);
    expect(await first).toBe(1);
    await tick();
    expect(call.started).toBe(2);
    call.release(2);
    // Every caller of the burst got the answer of a call started after it asked.
    expect(await Promise.all(burst)).toEqual(Array(10).fill(2));
    // Idle again: the next caller starts a call at once.
    const later = round.join();
    expect(call.started).toBe(3);
    call.release(3);
    expect(await later).toBe(3);
  });

  it('a failed call fails its own callers only; the next round runs', async () => {
    const call = gatedCall();
    const round = new SharedRound(call.run);
    const failing = round.join();
    const next = round.join();
    call.fail(new Error('etcd down'));
    await expect(failing).rejects.toThrow('etcd down');
    await tick();
    call.release(5);
    expect(await next).toBe(5);
  });
});

describe('reachedRevision', () => {
  /** A store as reachedRevision sees it: a revision and a watch, moved by the test. */
  function storeAt(revision: number) {
    const listeners = new Set<(state: unknown) => void>();
    const store = {
      revision: () => revision,
      watch: (listener: (state: unknown) => void) => { listeners.add(listener); return () => listeners.delete(listener); },
      advance(to: number) { revision = to; for (const l of [...listeners]) l({}); },
      get listening() { return listeners.size; },
    };
    return store as typeof store & StateStore<unknown>;
  }

  it('is true at once when the store is there, once its watch brings the revision, and false past the wait', async () => {
    const store = storeAt(7);
    expect(await reachedRevision(store, 7, 1_000)).toBe(true);
    const waiting = reachedRevision(store, 9, 5_000);
    store.advance(8);
    expect(store.listening).toBe(1);
    store.advance(9);
    expect(await waiting).toBe(true);
    expect(store.listening).toBe(0);
    expect(await reachedRevision(store, 10, 20)).toBe(false);
    expect(store.listening).toBe(0);
  });
});
