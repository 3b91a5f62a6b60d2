import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStateStore } from '../state/local-store.js';
import { CoordinatorGroup } from './coordinator-group.js';

const quiet = { info: () => undefined, warn: () => undefined };

async function until<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not met in 2 s');
}

describe('coordinators announcing the nodes they saw lost', () => {
  let dir: string;
  let store: LocalStateStore<unknown>;
  const groups: CoordinatorGroup[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-group-'));
    store = await LocalStateStore.open<unknown>(join(dir, 'state.json'), {});
  });

  afterEach(async () => {
    for (const group of groups.splice(0)) await group.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const join2 = async () => {
    for (const name of ['c1', 'c2']) groups.push(await CoordinatorGroup.join({ store, name, leaseMs: 60_000, log: quiet }));
    return groups as [CoordinatorGroup, CoordinatorGroup];
  };

  it('tells each coordinator what the others saw lost, and forgets a node reported back', async () => {
    const [c1, c2] = await join2();
    c2.reportLostNodes(new Map([['node2', 2_000], ['node3', 3_000]]));
    c1.reportLostNodes(new Map([['node2', 1_000]]));
    await until(() => (c1.lostElsewhere().size === 2 ? true : undefined));
    // Its own report is not "elsewhere".
    expect(c1.lostElsewhere()).toEqual(new Map([['node2', 2_000], ['node3', 3_000]]));
    await until(() => (c2.lostElsewhere().size === 1 ? true : undefined));
    expect(c2.lostElsewhere()).toEqual(new Map([['node2', 1_000]]));

    c2.reportLostNodes(new Map([['node3', 3_000]]));
    await until(() => (c1.lostElsewhere().size === 1 ? true : undefined));
    expect(c1.lostElsewhere()).toEqual(new Map([['node3', 3_000]]));
    // The list travels with the registration: where the coordinator listens stays announced beside it.
    await c2.advertise({ http: 'http://127.0.0.1:1' });
    expect(c1.members().find((m) => m.name === 'c2')).toMatchObject({ http: 'http://127.0.0.1:1', lostNodes: { node3: 3_000 } });
  });

  it('drops what a coordinator saw once it is gone: its registration ends with its lease', async () => {
    const [c1, c2] = await join2();
    c1.reportLostNodes(new Map([['node2', 1_000]]));
    await until(() => (c2.lostElsewhere().size === 1 ? true : undefined));
    await c1.close();
    groups.shift();
    expect(c2.lostElsewhere()).toEqual(new Map());
  });
});
