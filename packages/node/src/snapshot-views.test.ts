/** SnapshotViews: a view is read through its own copy only, released on demand, and closes itself once left unread. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '@tessera/engine';
import { SnapshotViews } from './snapshot-views.js';

let dir: string;
let shard: Shard;
const where = { index: '/i/', shard: 1 };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-views-'));
  shard = await Shard.open({ path: join(dir, 'shard') });
  await shard.write({ op: 'index', id: 'a', body: { n: 1 } });
});

afterEach(async () => {
  await shard.close();
  await rm(dir, { recursive: true, force: true });
});

it('opens a view with its seq and count, reads it through its copy only, and refuses it once released', async () => {
  const views = new SnapshotViews();
  const opened = await views.open(shard, '1/i/');
  expect(opened).toMatchObject({ seq: 1, documents: 1, snapshot: expect.any(String) });
  expect((await views.get(where, '1/i/', opened.snapshot).scan(undefined, 10)).documents.map((d) => d.id)).toEqual(['a']);
  expect(() => views.get({ index: '/j/', shard: 1 }, '1/j/', opened.snapshot)).toThrow(expect.objectContaining({ code: 'snapshot_expired', status: 410 }));
  await views.release(opened.snapshot);
  expect(() => views.get(where, '1/i/', opened.snapshot)).toThrow(expect.objectContaining({ code: 'snapshot_expired' }));
  // Releasing again is harmless.
  await views.release(opened.snapshot);
});

it('a view left unread closes itself after the idle time; reading it restarts the clock', async () => {
  // Generous margins (a loaded machine): read every 100 ms for longer than the idle time, then stay away for more than twice it.
  const views = new SnapshotViews(1500);
  const { snapshot } = await views.open(shard, '1/i/');
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    views.get(where, '1/i/', snapshot);
  }
  await new Promise((resolve) => setTimeout(resolve, 3500));
  expect(() => views.get(where, '1/i/', snapshot)).toThrow(expect.objectContaining({ code: 'snapshot_expired' }));
  await views.releaseAll();
}, 20_000);
