import { LeaseTable } from './lease-table.js';
import type { LeaseEvent } from './store.js';

/** A table on a clock the test moves: expiry must not depend on its timer having fired. */
function tableAt(): { table: LeaseTable; clock: { now: number }; events: LeaseEvent[] } {
  const clock = { now: 1_000 };
  const table = new LeaseTable({ leasesMax: 100, leasedValuesMax: 100 }, () => clock.now);
  const events: LeaseEvent[] = [];
  table.watch((event) => events.push(event));
  return { table, clock, events };
}

it('ends a lease at its deadline on the next operation, even if its timer has not fired', () => {
  const { table, clock, events } = tableAt();
  const lease = table.grant(100);
  table.put('k', 'v', lease);
  clock.now += 99;
  expect(table.get('k')?.value).toBe('v');
  clock.now += 1;
  expect(table.get('k')).toBeUndefined();
  expect(events.slice(1)).toEqual([{ type: 'delete', key: 'k', lease, cause: 'expired' }, { type: 'ended', lease, cause: 'expired' }]);
  expect(table.keepAlive(lease)).toBe(false);
  table.close();
});

it('counts a keep-alive’s TTL from the keep-alive', () => {
  const { table, clock } = tableAt();
  const lease = table.grant(100);
  clock.now += 90;
  expect(table.keepAlive(lease)).toBe(true);
  clock.now += 90;
  expect(table.keepAlive(lease)).toBe(true);
  clock.now += 100;
  expect(table.keepAlive(lease)).toBe(false);
  table.close();
});

it('survives a watcher that calls back into the table while a lease ends', () => {
  const { table, clock } = tableAt();
  const a = table.grant(10);
  const b = table.grant(10);
  const c = table.grant(1_000);
  table.put('a', 1, a);
  table.put('b', 1, b);
  const ended: string[] = [];
  table.watch((event) => {
    if (event.type !== 'ended') return;
    ended.push(event.lease);
    const key = `after-${ended.length}`;
    // Re-entrant reads and writes: they must neither end a lease twice nor lose one.
    table.list('');
    table.put(key, 1, c);
  });
  clock.now += 10;
  expect(table.get('a')).toBeUndefined();
  expect(ended.sort()).toEqual([a, b].sort());
  expect(table.list('after-').map((e) => e.key)).toEqual(['after-1', 'after-2']);
  table.close();
});

it('refuses a TTL that is not a positive integer (a caller’s bug)', () => {
  const { table } = tableAt();
  expect(() => table.grant(0)).toThrow(/TTL/);
  expect(() => table.grant(1.5)).toThrow(/TTL/);
  table.close();
});
