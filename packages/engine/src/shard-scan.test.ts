/** Shard.scan: paging through the documents store in ID order (DUMP). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard, SCAN_PAGE_BYTES_MAX } from './shard.js';
import type { DocumentId } from './documents/types.js';

let dir: string;
let shard: Shard;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-scan-'));
  shard = await Shard.open({ path: join(dir, 'shard') });
});

afterEach(async () => {
  await shard.close();
  await rm(dir, { recursive: true, force: true });
});

/** Every ID, paging `limit` at a time; also the number of pages. */
async function pageThrough(limit: number): Promise<{ ids: DocumentId[]; pages: number }> {
  const ids: DocumentId[] = [];
  let after: DocumentId | undefined;
  let pages = 0;
  for (;;) {
    const page = await shard.scan(after, limit);
    pages++;
    for (const doc of page.documents) ids.push(doc.id);
    if (page.done) return { ids, pages };
    after = page.documents[page.documents.length - 1]?.id;
    expect(after).toBeDefined();
  }
}

it('pages through every live document in ID order (numbers first, numerically), each once', async () => {
  const ids: DocumentId[] = [];
  for (let i = 0; i < 25; i++) ids.push(i * 7 - 50, `k${i}`);
  await Promise.all(ids.map((id) => shard.write({ op: 'index', id, body: { id } })));
  await shard.write({ op: 'delete', id: 'k3' });
  const expected = [...ids.filter((id): id is number => typeof id === 'number').sort((a, b) => a - b),
    ...ids.filter((id): id is string => typeof id === 'string' && id !== 'k3').sort()];
  for (const limit of [1, 7, 49, 1000]) {
    const { ids: seen, pages } = await pageThrough(limit);
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.floor(49 / limit) + 1);
  }
  const first = await shard.scan(undefined, 1);
  expect(first.documents[0]).toMatchObject({ id: -50, version: 1, body: { id: -50 } });
});

it('a page after the last ID, or of an empty shard, is empty and done', async () => {
  expect(await shard.scan(undefined, 10)).toEqual({ documents: [], done: true });
  await shard.write({ op: 'index', id: 5, body: {} });
  expect(await shard.scan(5, 10)).toEqual({ documents: [], done: true });
  expect((await shard.scan(4.5, 10)).documents.map((d) => d.id)).toEqual([5]);
  // A string cursor sorts after every number.
  expect(await shard.scan('', 10)).toEqual({ documents: [], done: true });
});

it('ends a page early once it holds SCAN_PAGE_BYTES_MAX bytes of documents', async () => {
  const big = 'x'.repeat(512 * 1024);
  const count = Math.ceil((2 * SCAN_PAGE_BYTES_MAX) / big.length) + 2;
  for (let i = 0; i < count; i++) await shard.write({ op: 'index', id: i, body: { big } });
  const page = await shard.scan(undefined, 1000);
  expect(page.done).toBe(false);
  expect(page.documents.length).toBe(SCAN_PAGE_BYTES_MAX / big.length);
  const { ids } = await pageThrough(1000);
  expect(ids).toEqual(Array.from({ length: count }, (_, i) => i));
});

it('refuses a bad cursor and a closed shard', async () => {
  await expect(shard.scan(Number.NaN, 10)).rejects.toMatchObject({ code: 'invalid_document_id', status: 400 });
  await shard.close();
  await expect(shard.scan(undefined, 10)).rejects.toMatchObject({ code: 'shard_closed', status: 503 });
});

it('a snapshot pages the documents of one instant: later writes, overwrites and deletes are not in it', async () => {
  await Promise.all(Array.from({ length: 30 }, (_, i) => shard.write({ op: 'index', id: i, body: { n: i } })));
  const view = await shard.snapshot();
  try {
    expect({ seq: view.seq, documents: view.documents }).toEqual({ seq: 30, documents: 30 });
    await shard.write({ op: 'index', id: 100, body: { n: 100 } });
    await shard.write({ op: 'index', id: 5, body: { n: -5 } });
    await shard.write({ op: 'delete', id: 6 });
    const seen: Array<{ id: DocumentId; version: number; n: unknown }> = [];
    let after: DocumentId | undefined;
    for (;;) {
      const page = await view.scan(after, 7);
      for (const doc of page.documents) seen.push({ id: doc.id, version: doc.version, n: (doc.body as { n: unknown }).n });
      if (page.done) break;
      after = page.documents[page.documents.length - 1]?.id;
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => ({ id: i, version: 1, n: i })));
    // The copy itself has moved on.
    expect(shard.stats()).toMatchObject({ seq: 33, documents: 30 });
    expect((await shard.get(5))?.version).toBe(2);
  } finally {
    await view.close();
  }
});
