/**
 * The suite every cluster-state store passes (the local store now, etcd
 * later; store.ts): the document's compare-and-set and watch, and leases —
 * expiry, keep-alive, revocation, values that vanish with their lease, and
 * the events watchers see. `make` opens a fresh, empty store on `initial`.
 *
 * Lease timings are real: `ttlMs` is the shortest TTL the store honours
 * (etcd counts in seconds: give it 2,000). Every expiry is waited for as an
 * event, with `ttlMs` of slack for the store's timer.
 *
 * Every expectation holds for one store's own leases. What a store sees of
 * another store's leases is the etcd store's own business (etcd tells a
 * watcher that a value was deleted, not why: etcd-store.ts, tested in
 * etcd-store.test.ts).
 */
import type { LeaseEvent, StateStore } from './store.js';

export interface StateStoreSuiteOptions {
  /** TTL of the suite's leases, ms (default 150). */
  ttlMs?: number;
}

interface Doc {
  n: number;
  tags: string[];
}

export type MakeStateStore = (initial: Doc) => Promise<StateStore<Doc>>;

export function describeStateStore(name: string, make: MakeStateStore, options: StateStoreSuiteOptions = {}): void {
  const ttlMs = options.ttlMs ?? 150;
  const initial: Doc = { n: 0, tags: [] };
  let store: StateStore<Doc>;

  describe(`${name} state store`, () => {
    beforeEach(async () => {
      store = await make(initial);
    });
    afterEach(async () => {
      await store.close();
    });

    /** Events seen from now on; `waitFor` resolves at the first matching one (or fails after ttlMs × 4). */
    function recordEvents(): { events: LeaseEvent[]; waitFor(match: (e: LeaseEvent) => boolean): Promise<number> } {
      const events: LeaseEvent[] = [];
      const waiters = new Set<() => void>();
      store.watchLeases((event) => {
        events.push(event);
        for (const waiter of [...waiters]) waiter();
      });
      return {
        events,
        waitFor(match) {
          return new Promise((resolve, reject) => {
            const check = (): void => {
              const at = events.findIndex(match);
              if (at < 0) return;
              waiters.delete(check);
              clearTimeout(timer);
              resolve(at);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              reject(new Error(`no matching lease event in ${ttlMs * 4} ms; saw ${JSON.stringify(events)}`));
            }, ttlMs * 4);
            waiters.add(check);
            check();
          });
        },
      };
    }

    describe('document', () => {
      it('starts from the initial state and replaces it by compare-and-set, telling watchers', async () => {
        expect(store.get()).toEqual(initial);
        const seen: Doc[] = [];
        store.watch((state) => seen.push(state));
        const first = store.get();
        expect(await store.compareAndSet(first, { n: 1, tags: ['a'] })).toBe(true);
        expect(store.get()).toEqual({ n: 1, tags: ['a'] });
        expect(seen).toEqual([{ n: 1, tags: ['a'] }]);
      });

      it('refuses a compare-and-set from a state that is no longer current, and changes nothing', async () => {
        const stale = store.get();
        expect(await store.compareAndSet(stale, { n: 1, tags: [] })).toBe(true);
        const seen: Doc[] = [];
        store.watch((state) => seen.push(state));
        expect(await store.compareAndSet(stale, { n: 99, tags: ['lost'] })).toBe(false);
        expect(store.get()).toEqual({ n: 1, tags: [] });
        expect(seen).toEqual([]);
      });

      it('lets exactly one of two racing writers from the same state win', async () => {
        const base = store.get();
        const results = await Promise.all([store.compareAndSet(base, { n: 1, tags: ['x'] }), store.compareAndSet(base, { n: 2, tags: ['y'] })]);
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(store.get()).toEqual(results[0] ? { n: 1, tags: ['x'] } : { n: 2, tags: ['y'] });
      });

      it('finds nothing newer on refresh when it made the last change itself', async () => {
        await store.compareAndSet(store.get(), { n: 1, tags: ['own'] });
        expect(await store.refresh()).toBe(false);
        expect(store.get()).toEqual({ n: 1, tags: ['own'] });
      });

      it('says it is connected once open', () => {
        expect(store.health()).toEqual({ connected: true });
      });

      it('stops telling a watcher once it unwatched', async () => {
        const seen: Doc[] = [];
        const stop = store.watch((state) => seen.push(state));
        await store.compareAndSet(store.get(), { n: 1, tags: [] });
        stop();
        await store.compareAndSet(store.get(), { n: 2, tags: [] });
        expect(seen).toEqual([{ n: 1, tags: [] }]);
      });
    });

    describe('leases', () => {
      it('keeps a leased value while the lease lives, and removes it when the lease expires, telling watchers', async () => {
        const { events, waitFor } = recordEvents();
        const lease = await store.grantLease(ttlMs);
        expect(await store.putLeased('nodes/n1', { host: 'a', port: 1 }, lease)).toBe(true);
        expect(store.getLeased('nodes/n1')).toEqual({ key: 'nodes/n1', value: { host: 'a', port: 1 }, lease });
        const started = Date.now();
        const ended = await waitFor((e) => e.type === 'ended' && e.lease === lease);
        expect(Date.now() - started).toBeGreaterThanOrEqual(ttlMs - 20);
        expect(store.getLeased('nodes/n1')).toBeUndefined();
        expect(events.slice(0, ended + 1)).toEqual([
          { type: 'put', key: 'nodes/n1', value: { host: 'a', port: 1 }, lease },
          { type: 'delete', key: 'nodes/n1', lease, cause: 'expired' },
          { type: 'ended', lease, cause: 'expired' },
        ]);
        // The document is not touched by leases.
        expect(store.get()).toEqual(initial);
      });

      it('keeps a lease alive past its TTL while kept alive, and lets it expire once the keep-alives stop', async () => {
        const { waitFor } = recordEvents();
        const lease = await store.grantLease(ttlMs);
        await store.putLeased('leader', 'c1', lease);
        const until = Date.now() + ttlMs * 3;
        while (Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, ttlMs / 4));
          expect(await store.keepAlive(lease)).toBe(true);
        }
        expect(store.getLeased('leader')?.value).toBe('c1');
        await waitFor((e) => e.type === 'ended' && e.lease === lease);
        expect(store.getLeased('leader')).toBeUndefined();
      });

      it('never revives an ended lease: keep-alive answers false and a put under it sets nothing', async () => {
        const { waitFor } = recordEvents();
        const lease = await store.grantLease(ttlMs);
        await waitFor((e) => e.type === 'ended' && e.lease === lease);
        expect(await store.keepAlive(lease)).toBe(false);
        expect(await store.putLeased('late', 1, lease)).toBe(false);
        expect(store.getLeased('late')).toBeUndefined();
        expect(store.listLeased('')).toEqual([]);
      });

      it('removes every value of a revoked lease at once, and only those', async () => {
        const { events, waitFor } = recordEvents();
        const revoked = await store.grantLease(ttlMs * 20);
        const other = await store.grantLease(ttlMs * 20);
        await store.putLeased('a/1', 1, revoked);
        await store.putLeased('a/2', 2, revoked);
        await store.putLeased('a/3', 3, other);
        await store.revokeLease(revoked);
        expect(store.listLeased('a/')).toEqual([{ key: 'a/3', value: 3, lease: other }]);
        await waitFor((e) => e.type === 'ended' && e.lease === revoked);
        const deletes = events.filter((e) => e.type === 'delete').map((e) => [e.type === 'delete' && e.key, e.type === 'delete' && e.cause]);
        expect(deletes.sort()).toEqual([['a/1', 'revoked'], ['a/2', 'revoked']]);
        expect(await store.keepAlive(revoked)).toBe(false);
        expect(await store.keepAlive(other)).toBe(true);
        // Revoking again, or an unknown lease, does nothing.
        await store.revokeLease(revoked);
        expect(store.listLeased('a/')).toHaveLength(1);
        await store.revokeLease(other);
      });

      it('elects with put-if-absent: the first holder wins, and the key is free again once its lease ends', async () => {
        const first = await store.grantLease(ttlMs);
        const second = await store.grantLease(ttlMs * 20);
        expect(await store.putLeased('leader', 'c1', first, { ifAbsent: true })).toBe(true);
        expect(await store.putLeased('leader', 'c2', second, { ifAbsent: true })).toBe(false);
        expect(store.getLeased('leader')).toEqual({ key: 'leader', value: 'c1', lease: first });
        const { waitFor } = recordEvents();
        await waitFor((e) => e.type === 'delete' && e.key === 'leader');
        expect(await store.putLeased('leader', 'c2', second, { ifAbsent: true })).toBe(true);
        expect(store.getLeased('leader')).toEqual({ key: 'leader', value: 'c2', lease: second });
        await store.revokeLease(second);
      });

      it('moves a key put again under another lease: the old lease ending no longer removes it', async () => {
        const short = await store.grantLease(ttlMs);
        const long = await store.grantLease(ttlMs * 20);
        await store.putLeased('k', 'old', short);
        await store.putLeased('k', 'new', long);
        const { waitFor } = recordEvents();
        await waitFor((e) => e.type === 'ended' && e.lease === short);
        expect(store.getLeased('k')).toEqual({ key: 'k', value: 'new', lease: long });
        await store.revokeLease(long);
      });

      it('deletes a leased value without ending its lease, and lists by prefix in key order', async () => {
        const { events } = recordEvents();
        const lease = await store.grantLease(ttlMs * 20);
        await store.putLeased('n/b', 'b', lease);
        await store.putLeased('n/a', 'a', lease);
        await store.putLeased('m/a', 'x', lease);
        expect(store.listLeased('n/').map((e) => e.key)).toEqual(['n/a', 'n/b']);
        expect(await store.deleteLeased('n/a')).toBe(true);
        expect(await store.deleteLeased('n/a')).toBe(false);
        expect(events.at(-1)).toEqual({ type: 'delete', key: 'n/a', lease, cause: 'deleted' });
        expect(store.listLeased('n/').map((e) => e.key)).toEqual(['n/b']);
        expect(await store.keepAlive(lease)).toBe(true);
        await store.revokeLease(lease);
      });

      it('stops telling a lease watcher once it unwatched', async () => {
        const seen: LeaseEvent[] = [];
        const stop = store.watchLeases((event) => seen.push(event));
        const lease = await store.grantLease(ttlMs * 20);
        await store.putLeased('k', 1, lease);
        stop();
        await store.putLeased('k', 2, lease);
        await store.revokeLease(lease);
        expect(seen).toEqual([{ type: 'put', key: 'k', value: 1, lease }]);
      });
    });
  });
}
