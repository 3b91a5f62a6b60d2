import type { RpcClient, ShardRef } from '@tessera/rpc';
import { pino } from 'pino';
import { NodeDirectory } from '../cluster/nodes.js';
import { Readiness } from './readiness.js';

const log = pino({ level: 'silent' });

function client(): RpcClient {
  return { closed: false, inFlight: 0, call: () => Promise.reject(new Error('unused')), close: async () => undefined };
}

function addNode(nodes: NodeDirectory, name: string): void {
  nodes.add({ name, client: client(), host: 'h', role: 'shard', local: false });
}

/** Opens that wait until the test settles them, by `node shard/index/`. */
function controlledOpens() {
  const pending = new Map<string, { resolve: () => void; reject: (err: Error) => void }>();
  const opened: string[] = [];
  const open = (node: string, copy: ShardRef) => new Promise<void>((resolve, reject) => {
    const key = `${node} ${copy.shard}${copy.index}`;
    opened.push(key);
    pending.set(key, { resolve, reject });
  });
  const settle = async (key: string, error?: Error) => {
    const p = pending.get(key);
    if (p === undefined) throw new Error(`no open pending for ${key}`);
    pending.delete(key);
    if (error === undefined) p.resolve();
    else p.reject(error);
    // Let the readiness bookkeeping run.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { open, opened, settle, pending };
}

const copies: Record<string, ShardRef[]> = {
  n1: [{ index: '/a/', shard: 1 }, { index: '/b/', shard: 1 }],
  n2: [{ index: '/a/', shard: 2 }],
};

it('not ready while shard copies open (the reason counts them), ready once all are open', async () => {
  const nodes = new NodeDirectory();
  addNode(nodes, 'n1');
  const opens = controlledOpens();
  const readiness = new Readiness(nodes, { copiesOn: (node) => copies[node] ?? [], open: opens.open }, log);
  readiness.start();
  expect(opens.opened).toEqual(['n1 1/a/', 'n1 1/b/']);
  expect(readiness.state()).toEqual({ ready: false, reason: 'opening shard copies (replaying their operation logs): 0 of 2 open' });
  await opens.settle('n1 1/a/');
  expect(readiness.state()).toEqual({ ready: false, reason: 'opening shard copies (replaying their operation logs): 1 of 2 open' });
  await opens.settle('n1 1/b/');
  expect(readiness.state()).toEqual({ ready: true });

  // A node joining opens its own copies; not ready until they are open.
  addNode(nodes, 'n2');
  expect(readiness.state()).toEqual({ ready: false, reason: 'opening shard copies (replaying their operation logs): 2 of 3 open' });
  await opens.settle('n2 2/a/');
  expect(readiness.state()).toEqual({ ready: true });

  readiness.beginShutdown();
  expect(readiness.state()).toEqual({ ready: false, reason: 'shutting down' });
});

it('no active node: not ready', () => {
  const readiness = new Readiness(new NodeDirectory(), { copiesOn: () => [], open: async () => undefined }, log);
  readiness.start();
  expect(readiness.state()).toEqual({ ready: false, reason: 'no shard node is active' });
});

it('a copy that fails to open keeps it not ready with the error; it is tried again later and then ready', async () => {
  let nowMs = 1_000_000;
  const nodes = new NodeDirectory();
  addNode(nodes, 'n1');
  const opens = controlledOpens();
  const readiness = new Readiness(nodes, { copiesOn: (node) => copies[node] ?? [], open: opens.open }, log, { retryMs: 5_000, now: () => nowMs });
  readiness.start();
  await opens.settle('n1 1/a/');
  await opens.settle('n1 1/b/', new Error('Shard format 9 is not supported'));
  expect(readiness.state()).toEqual({ ready: false, reason: 'shard copy /b/ #1 on node n1 could not be opened: Shard format 9 is not supported' });
  // Not retried at once (no loop on a broken copy)…
  nowMs += 4_999;
  expect(readiness.state().ready).toBe(false);
  expect(opens.opened).toEqual(['n1 1/a/', 'n1 1/b/']);
  // …but when readiness is asked after the retry interval.
  nowMs += 1;
  expect(readiness.state()).toEqual({ ready: false, reason: 'opening shard copies (replaying their operation logs): 2 of 3 open' });
  expect(opens.opened).toEqual(['n1 1/a/', 'n1 1/b/', 'n1 1/b/']);
  await opens.settle('n1 1/b/');
  expect(readiness.state()).toEqual({ ready: true });
});

it('a failed copy no longer allocated to the node (its index was deleted) is forgotten', async () => {
  const nodes = new NodeDirectory();
  addNode(nodes, 'n1');
  const opens = controlledOpens();
  let allocated = copies.n1 as ShardRef[];
  const readiness = new Readiness(nodes, { copiesOn: () => allocated, open: opens.open }, log);
  readiness.start();
  await opens.settle('n1 1/a/');
  await opens.settle('n1 1/b/', new Error('broken'));
  expect(readiness.state().ready).toBe(false);
  allocated = [{ index: '/a/', shard: 1 }];
  expect(readiness.state()).toEqual({ ready: true });
});

it('check: a shard copy whose flush keeps failing makes a ready coordinator not ready, with the failure as the reason', async () => {
  const nodes = new NodeDirectory();
  addNode(nodes, 'n1');
  const opens = controlledOpens();
  let failure: string | undefined;
  let asked = 0;
  const readiness = new Readiness(nodes, {
    copiesOn: (node) => copies[node] ?? [],
    open: opens.open,
    flushFailure: async () => {
      asked++;
      return failure;
    },
  }, log);
  readiness.start();
  // Not ready for another reason: the nodes are not asked.
  expect(await readiness.check()).toEqual({ ready: false, reason: 'opening shard copies (replaying their operation logs): 0 of 2 open' });
  expect(asked).toBe(0);
  await opens.settle('n1 1/a/');
  await opens.settle('n1 1/b/');
  expect(await readiness.check()).toEqual({ ready: true });
  failure = 'shard copy /a/ #1 on node n1 cannot flush its write buffer into a segment (3 failures since 2026-11-27T10:00:00.000Z): disk full';
  expect(await readiness.check()).toEqual({ ready: false, reason: failure });
  expect(readiness.state()).toEqual({ ready: true });
  failure = undefined;
  expect(await readiness.check()).toEqual({ ready: true });
  expect(asked).toBe(3);
});
