import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStateStore, readLocalState } from './local-store.js';
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
    expect(readLocalState(file, { n: 0 })).toEqual({ n: 7 });
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

  describe('base and delta log', () => {
    interface Doc {
      version: number;
      indexes: Record<string, { schema: Record<string, string> }>;
      tags?: string[];
      reserved?: Record<string, number>;
    }
    const empty: Doc = { version: 1, indexes: {} };
    /** `count` changes as the registry makes them: one index's schema grows, reservations come and go, a list is replaced. */
    async function change(store: LocalStateStore<Doc>, count: number, fieldBytes = 1): Promise<void> {
      for (let i = 0; i < count; i++) {
        const state = store.get();
        const path = `/i${i % 3}/`;
        const schema = { ...state.indexes[path]?.schema, [`f${i}`]: 'x'.repeat(fieldBytes) };
        let next: Doc = { ...state, indexes: { ...state.indexes, [path]: { schema } }, tags: [...(state.tags ?? []), `t${i}`] };
        if (i % 2 === 0) next = { ...next, reserved: { ...next.reserved, [`r${i}`]: i } };
        else if (i % 5 === 0) next = { ...next, reserved: undefined };
        else if (next.reserved !== undefined) {
          const { [`r${i - 1}`]: _settled, ...rest } = next.reserved;
          next = { ...next, reserved: rest };
        }
        if (i === count - 1) {
          const { ['/i1/']: _dropped, ...indexes } = next.indexes;
          next = { ...next, indexes };
        }
        expect(await store.compareAndSet(state, next)).toBe(true);
      }
    }
    /** The state as JSON sees it (undefined values are absent). */
    const asJson = (state: unknown): unknown => JSON.parse(JSON.stringify(state));
    const logOf = (file: string): string => `${file}.log`;
    /** A store's file after `count` changes, closed, and its last state. */
    async function changedFile(name: string, count: number, fieldBytes = 1): Promise<{ file: string; last: Doc }> {
      const file = join(dir, name);
      const store = await LocalStateStore.open<Doc>(file, empty);
      await change(store, count, fieldBytes);
      const last = store.get();
      await store.close();
      return { file, last };
    }
    /** Reopened, the store holds `expected`; changed again and closed, its files hold the new state. */
    async function reopensAt(file: string, expected: Doc): Promise<void> {
      const reopened = await LocalStateStore.open<Doc>(file, empty);
      expect(reopened.get()).toEqual(asJson(expected));
      await change(reopened, 3);
      const later = reopened.get();
      await reopened.close();
      expect(readLocalState(file, empty)).toEqual(asJson(later));
    }

    it('appends each change to the log, and a reopened store replays the base and the log to the last state', async () => {
      const file = join(dir, 'replayed.json');
      const store = await LocalStateStore.open<Doc>(file, empty);
      await change(store, 200);
      const last = store.get();
      await store.close();
      // The base is still the initial state: every change is in the log.
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(empty);
      expect((await stat(logOf(file))).size).toBeGreaterThan(0);
      await reopensAt(file, last);
      // The caller's initial state is never changed by a replay.
      expect(empty).toEqual({ version: 1, indexes: {} });
    });

    it('writes a change of one index as that index, not the whole state', async () => {
      const file = join(dir, 'small-delta.json');
      const store = await LocalStateStore.open<Doc>(file, empty);
      const indexes: Doc['indexes'] = {};
      for (let i = 0; i < 100; i++) indexes[`/big${i}/`] = { schema: { field: 'y'.repeat(1000) } };
      await store.compareAndSet(store.get(), { ...store.get(), indexes });
      const before = (await stat(logOf(file))).size;
      const state = store.get();
      await store.compareAndSet(state, { ...state, indexes: { ...state.indexes, '/big7/': { schema: { field: 'y', more: 'z' } } } });
      const delta = (await stat(logOf(file))).size - before;
      expect(delta).toBeLessThan(200);
      await store.close();
    });

    it('drops a torn last record (a crash while appending), and appends after the records before it', async () => {
      const file = join(dir, 'torn.json');
      const store = await LocalStateStore.open<Doc>(file, empty);
      await change(store, 20);
      const beforeLast = store.get();
      const logBefore = (await stat(logOf(file))).size;
      await change(store, 1);
      await store.close();
      for (const cut of [1, 20, (await stat(logOf(file))).size - logBefore - 1]) {
        const torn = join(dir, `torn-${cut}.json`);
        await writeFile(torn, await readFile(file));
        const log = await readFile(logOf(file));
        await writeFile(logOf(torn), log.subarray(0, log.length - cut));
        await reopensAt(torn, beforeLast);
      }
    });

    it('refuses to open a log with a flipped byte before its last record, or in a length', async () => {
      const { file } = await changedFile('flipped.json', 20);
      const log = await readFile(logOf(file));
      // A byte of the first record's payload, of its length, then of the second record's length.
      const second = 12 + log.readUInt32LE(0);
      for (const at of [12 + 5, 1, second + 2]) {
        const flipped = join(dir, `flipped-${at}.json`);
        await writeFile(flipped, await readFile(file));
        const bytes = Buffer.from(log);
        bytes[at]! ^= 0x10;
        await writeFile(logOf(flipped), bytes);
        await expect(LocalStateStore.open<Doc>(flipped, empty)).rejects.toThrow(/is corrupted/);
        expect(() => readLocalState(flipped, empty)).toThrow(SyntaxError);
      }
      // A base that does not parse is refused the same way.
      const badBase = join(dir, 'bad-base.json');
      await writeFile(badBase, '{"version": 1, "ind');
      await expect(LocalStateStore.open<Doc>(badBase, empty)).rejects.toThrow(SyntaxError);
    });

    it('folds the log into the base once it outgrows its bound, keeping the state', async () => {
      // Enough for a log over its 1 MiB minimum: each change carries its index's whole schema.
      const { file, last } = await changedFile('compacted.json', 60, 2000);
      expect((await stat(logOf(file))).size).toBeLessThan(1024 * 1024);
      expect(JSON.parse(await readFile(file, 'utf8'))).not.toEqual(empty);
      const reopened = await LocalStateStore.open<Doc>(file, empty);
      expect(reopened.get()).toEqual(asJson(last));
      await reopened.close();
    });

    it('replays a log left beside a new base (a crash while it was emptied) to that same state', async () => {
      const { file, last } = await changedFile('stale-log.json', 50);
      // As a compaction would leave it had it stopped after the rename: the last state as the base, the old log beside it.
      await writeFile(file, JSON.stringify(last));
      expect(readLocalState(file, empty)).toEqual(asJson(last));
      await truncate(logOf(file), 0);
      expect(readLocalState(file, empty)).toEqual(asJson(last));
    });
  });
});
