import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStateStore } from './local-store.js';
import { describeStateStore } from './store.conformance.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-state-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
describeStateStore('local', (initial) => LocalStateStore.open(join(dir, `state-${++files}.json`), initial));

describe('local state store', () => {
  it('is durable: a reopened store reads the last state written, not the initial one', async () => {
    const file = join(dir, 'durable.json');
    const store = await LocalStateStore.open(file, { n: 0 });
    await store.compareAndSet(store.get(), { n: 7 });
    await store.close();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ n: 7 });
    const reopened = await LocalStateStore.open(file, { n: 0 });
    expect(reopened.get()).toEqual({ n: 7 });
    await reopened.close();
  });

  it('keeps leases in memory: a reopened store has none, and its old lease ids are dead', async () => {
    const file = join(dir, 'leases.json');
    const store = await LocalStateStore.open(file, { n: 0 });
    const lease = await store.grantLease(60_000);
    await store.putLeased('nodes/n1', 'up', lease);
    await store.close();
    const reopened = await LocalStateStore.open(file, { n: 0 });
    expect(reopened.listLeased('')).toEqual([]);
    expect(await reopened.keepAlive(lease)).toBe(false);
    await reopened.close();
  });

  it('bounds the leases and the leased values it holds (503), and frees room as they end', async () => {
    const store = await LocalStateStore.open(join(dir, 'bounded.json'), { n: 0 }, { leasesMax: 2, leasedValuesMax: 2 });
    const a = await store.grantLease(60_000);
    const b = await store.grantLease(60_000);
    await expect(store.grantLease(60_000)).rejects.toMatchObject({ code: 'leases_full', status: 503 });
    await store.putLeased('k1', 1, a);
    await store.putLeased('k2', 2, b);
    await expect(store.putLeased('k3', 3, a)).rejects.toMatchObject({ code: 'leased_values_full', status: 503 });
    expect(store.getLeased('k3')).toBeUndefined();
    // Replacing a value needs no room.
    expect(await store.putLeased('k1', 10, a)).toBe(true);
    await store.revokeLease(a);
    expect(await store.putLeased('k3', 3, b)).toBe(true);
    expect(typeof await store.grantLease(60_000)).toBe('string');
    await store.close();
  });
});
