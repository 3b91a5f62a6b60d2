/**
 * The etcd store against a real etcd (scripts/etcd.mjs, started here on its
 * own data directory and loopback ports): the conformance suite, then what
 * only a shared, remote store has — two stores on one etcd, races and
 * elections between them, and etcd going away and coming back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Etcd3 } from 'etcd3';
import { EtcdStateStore } from './etcd-store.js';
import { describeStateStore } from './store.conformance.js';
import type { LeaseEvent, StateStore } from './store.js';

/** packages/coordinator/dist/state → the repository. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
/** Per etcd call: short, so the tests of an unreachable etcd stay short. */
const CALL_TIMEOUT_MS = 1500;

interface RunningEtcd {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

interface EtcdScript {
  startEtcd(options: { dataDir: string }): Promise<RunningEtcd>;
}

let script: EtcdScript;
let dataDir: string;
let etcd: RunningEtcd;

beforeAll(async () => {
  script = (await import(pathToFileURL(join(REPO_ROOT, 'scripts/etcd.mjs')).href)) as EtcdScript;
  dataDir = await mkdtemp(join(tmpdir(), 'tessera-etcd-'));
  etcd = await script.startEtcd({ dataDir });
}, 300_000); // the first run may install etcd-server with apt-get

afterAll(async () => {
  await etcd?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

let prefixes = 0;
function freshPrefix(): string {
  return `/tessera-test/${process.pid}-${Date.now()}/${++prefixes}`;
}

function openStore<T>(initial: T, prefix = freshPrefix(), stateBytesMax?: number): Promise<EtcdStateStore<T>> {
  return EtcdStateStore.open({ endpoints: etcd.endpoint, prefix, initial, callTimeoutMs: CALL_TIMEOUT_MS, ...(stateBytesMax === undefined ? {} : { stateBytesMax }) });
}

/** Resolves once `condition()` holds (checked every 20 ms: health has no event), failing after `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The first state `store` is told of that matches. */
function nextState<T>(store: StateStore<T>, match: (state: T) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const stop = store.watch((state) => {
      if (!match(state)) return;
      stop();
      resolve(state);
    });
  });
}

/** The first lease event `store` is told of that matches. */
function nextLeaseEvent(store: StateStore<unknown>, match: (event: LeaseEvent) => boolean): Promise<LeaseEvent> {
  return new Promise((resolve) => {
    const stop = store.watchLeases((event) => {
      if (!match(event)) return;
      stop();
      resolve(event);
    });
  });
}

interface Relay {
  endpoint: string;
  /** Drop every connection and refuse new ones: the store is cut off from an etcd that goes on. */
  cut(): Promise<void>;
  /** Accept connections again, on the same port. */
  mend(): Promise<void>;
}

/** A TCP relay to etcd: one store reaches etcd through it, and the test cuts it. */
async function startRelay(target: string): Promise<Relay> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(targetPort), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number): Promise<number> =>
    new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  const port = await listen(0);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    cut: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    mend: async () => {
      await listen(port);
    },
  };
}

/** Runs `test` with two stores on one prefix, closing both after. */
async function withTwoStores<T>(initial: T, test: (a: EtcdStateStore<T>, b: EtcdStateStore<T>, prefix: string) => Promise<void>): Promise<void> {
  const prefix = freshPrefix();
  const a = await openStore(initial, prefix);
  const b = await openStore(initial, prefix);
  try {
    await test(a, b, prefix);
  } finally {
    await a.close();
    await b.close();
  }
}

async function restartEtcd(): Promise<void> {
  etcd = await script.startEtcd({ dataDir });
}

describeStateStore('etcd', (initial) => openStore(initial), { ttlMs: 2000 });

describe('etcd state store', () => {
  interface Doc {
    n: number;
  }

  it('shares the state and the leased values between two stores on one etcd', async () => {
    await withTwoStores<Doc>({ n: 0 }, async (a, b, prefix) => {
      const seenByB = nextState(b, (state) => state.n === 1);
      expect(await a.compareAndSet(a.get(), { n: 1 })).toBe(true);
      expect(await seenByB).toEqual({ n: 1 });
      expect(b.get()).toEqual({ n: 1 });

      const lease = await a.grantLease(10_000);
      const putSeenByB = nextLeaseEvent(b, (event) => event.type === 'put');
      await a.putLeased('nodes/n1', { host: 'h', port: 1 }, lease);
      expect(await putSeenByB).toEqual({ type: 'put', key: 'nodes/n1', value: { host: 'h', port: 1 }, lease });
      expect(b.listLeased('nodes/')).toEqual([{ key: 'nodes/n1', value: { host: 'h', port: 1 }, lease }]);

      // A delete by another store: its lease still lives, so `deleted`.
      const deleteSeenByB = nextLeaseEvent(b, (event) => event.type === 'delete');
      expect(await a.deleteLeased('nodes/n1')).toBe(true);
      expect(await deleteSeenByB).toEqual({ type: 'delete', key: 'nodes/n1', lease, cause: 'deleted' });
      await a.revokeLease(lease);

      // A store opened later reads what is there.
      const c = await openStore<Doc>({ n: 0 }, prefix);
      expect(c.get()).toEqual({ n: 1 });
      await c.close();
    });
  });

  it('refresh reads another store\'s change from etcd at once, whether or not the watch brought it yet', async () => {
    await withTwoStores<Doc>({ n: 0 }, async (a, b) => {
      for (let n = 1; n <= 20; n++) {
        expect(await a.compareAndSet(a.get(), { n })).toBe(true);
        // Calls made together share reads; each sees the change.
        await Promise.all([b.refresh(), b.refresh(), b.refresh()]);
        expect(b.get()).toEqual({ n });
      }
      expect(await b.refresh()).toBe(false);
    });
  });

  it('lets exactly one of two stores racing from the same state win; the loser wins after re-reading', async () => {
    await withTwoStores<Doc>({ n: 0 }, async (a, b) => {
      // Both from the state as it is at the start (the key does not exist yet: the create race).
      for (let round = 0; round < 3; round++) {
        await until(() => a.get().n === b.get().n, 5000, 'in step');
        const base = a.get().n;
        const results = await Promise.all([a.compareAndSet(a.get(), { n: base + 1 }), b.compareAndSet(b.get(), { n: base + 100 })]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const loser = results[0] ? b : a;
        const winnerState = results[0] ? { n: base + 1 } : { n: base + 100 };
        // The lost race read the winner's state: a retry from get() goes through.
        expect(loser.get()).toEqual(winnerState);
        expect(await loser.compareAndSet(loser.get(), { n: loser.get().n + 1 })).toBe(true);
      }
    });
  });

  it('elects one of two stores with put-if-absent; once the winner revokes its lease the other takes the key', async () => {
    await withTwoStores<Doc>({ n: 0 }, async (a, b) => {
      const leaseA = await a.grantLease(10_000);
      const leaseB = await b.grantLease(10_000);
      const results = await Promise.all([a.putLeased('leader', 'a', leaseA, { ifAbsent: true }), b.putLeased('leader', 'b', leaseB, { ifAbsent: true })]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const [winner, winnerLease, loser, loserLease, loserName] = results[0] ? [a, leaseA, b, leaseB, 'b'] as const : [b, leaseB, a, leaseA, 'a'] as const;
      // The loser read the holder with its refusal.
      expect(loser.getLeased('leader')?.lease).toBe(winnerLease);

      const freed = nextLeaseEvent(loser, (event) => event.type === 'delete' && event.key === 'leader');
      const endedForWinner = nextLeaseEvent(winner, (event) => event.type === 'ended');
      await winner.revokeLease(winnerLease);
      expect(await endedForWinner).toEqual({ type: 'ended', lease: winnerLease, cause: 'revoked' });
      // Seen from another store a revoke reads as an expiry: etcd does not say which it was.
      expect(await freed).toEqual({ type: 'delete', key: 'leader', lease: winnerLease, cause: 'expired' });
      expect(await loser.putLeased('leader', loserName, loserLease, { ifAbsent: true })).toBe(true);
      await until(() => winner.getLeased('leader')?.lease === loserLease, 5000, 'seen by the old winner');
      await loser.revokeLease(loserLease);
    });
  });

  it('refuses a state over stateBytesMax before sending it (507)', async () => {
    const store = await openStore<{ text: string }>({ text: '' }, freshPrefix(), 1000);
    try {
      await expect(store.compareAndSet(store.get(), { text: 'x'.repeat(2000) })).rejects.toMatchObject({ code: 'cluster_state_too_large', status: 507 });
      expect(await store.compareAndSet(store.get(), { text: 'small' })).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('says it is not connected when a change in etcd is not its JSON (written by something else)', async () => {
    const prefix = freshPrefix();
    const store = await openStore<Doc>({ n: 0 }, prefix);
    const raw = new Etcd3({ hosts: etcd.endpoint });
    try {
      await raw.put(`${prefix}/leased/bad`).value('not json');
      await until(() => !store.health().connected, 5000, 'unhealthy');
      expect(store.health().reason).toMatch(/cannot apply a change from etcd/);
    } finally {
      raw.close();
      await store.close();
    }
  });

  it('rejects a compare-and-set within its timeout (503) while etcd is down, and says it is disconnected', async () => {
    const store = await openStore<Doc>({ n: 0 });
    try {
      expect(store.health()).toEqual({ connected: true });
      await etcd.stop();
      const started = Date.now();
      await expect(store.compareAndSet(store.get(), { n: 1 })).rejects.toMatchObject({ code: 'state_store_unavailable', status: 503 });
      expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_MS + 1000);
      const health = store.health();
      expect(health.connected).toBe(false);
      expect(health.reason).toEqual(expect.any(String));
      expect(store.get()).toEqual({ n: 0 });
    } finally {
      await restartEtcd();
      await store.close();
    }
  });

  it('stops deciding while cut off from etcd, and catches up on what it missed once reconnected', async () => {
    const prefix = freshPrefix();
    const relay = await startRelay(etcd.endpoint);
    const cutOff = await EtcdStateStore.open<Doc>({ endpoints: relay.endpoint, prefix, initial: { n: 0 }, callTimeoutMs: CALL_TIMEOUT_MS });
    const other = await openStore<Doc>({ n: 0 }, prefix);
    try {
      expect(await cutOff.compareAndSet(cutOff.get(), { n: 1 })).toBe(true);
      await until(() => other.get().n === 1, 5000, 'seen by the other store');
      const seenStates: Doc[] = [];
      cutOff.watch((state) => seenStates.push(state));
      const seenPut = nextLeaseEvent(cutOff, (event) => event.type === 'put');

      await relay.cut();
      await until(() => !cutOff.health().connected, 5000, 'disconnected');
      expect(await other.compareAndSet(other.get(), { n: 2 })).toBe(true);
      const lease = await other.grantLease(10_000);
      await other.putLeased('nodes/n2', 'up', lease);
      await expect(cutOff.compareAndSet(cutOff.get(), { n: 99 })).rejects.toMatchObject({ code: 'state_store_unavailable', status: 503 });
      await expect(cutOff.grantLease(10_000)).rejects.toMatchObject({ code: 'state_store_unavailable', status: 503 });
      expect(cutOff.get()).toEqual({ n: 1 });

      await relay.mend();
      await until(() => cutOff.health().connected && cutOff.get().n === 2, 10_000, 'reconnected and caught up');
      expect(seenStates).toEqual([{ n: 2 }]);
      expect(await seenPut).toEqual({ type: 'put', key: 'nodes/n2', value: 'up', lease });
      expect(await cutOff.compareAndSet(cutOff.get(), { n: 3 })).toBe(true);
      await other.revokeLease(lease);
    } finally {
      await cutOff.close();
      await other.close();
      await relay.cut();
    }
  });

  it('reconnects once etcd is back on the same data: the state is still there, and a compare-and-set goes through', async () => {
    const prefix = freshPrefix();
    const store = await openStore<Doc>({ n: 0 }, prefix);
    const other = await openStore<Doc>({ n: 0 }, prefix);
    try {
      expect(await store.compareAndSet(store.get(), { n: 5 })).toBe(true);
      await until(() => other.get().n === 5, 5000, 'seen by the other store');
      await etcd.stop();
      await until(() => !store.health().connected, 5000, 'disconnected');
      await restartEtcd();
      await until(() => store.health().connected && other.health().connected, 10_000, 'reconnected');
      expect(store.get()).toEqual({ n: 5 });
      // The other store, reconnected too, sees the change through its resumed watch.
      const seen = nextState(other, (state) => state.n === 6);
      expect(await store.compareAndSet(store.get(), { n: 6 })).toBe(true);
      expect(await seen).toEqual({ n: 6 });
      const reopened = await openStore<Doc>({ n: 0 }, prefix);
      expect(reopened.get()).toEqual({ n: 6 });
      await reopened.close();
    } finally {
      await store.close();
      await other.close();
    }
  });
});
