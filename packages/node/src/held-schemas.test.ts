import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ShardNode } from './shard-node.js';

let dataDir: string;
let node: ShardNode;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-node-schemas-'));
  node = new ShardNode({ name: 'n1', dataDir });
});

afterEach(async () => {
  await node.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const TAG_ONLY = { _dynamic: false, tag: { _type: 'keyword' } };
const WITH_TITLE = { _dynamic: false, tag: { _type: 'keyword' }, title: { _type: 'text' } };
const BODY = { tag: 'red', title: 'big dogs' };

/** The fields doc.info finds terms of (not the ID's, `Q…`): what the schema the call was given indexes. */
async function indexedFields(call: Record<string, unknown>): Promise<string[]> {
  const info = await node.handle('doc.info', { index: '/a/', shard: 1, id: 'x', ...call }) as { terms: Record<string, unknown> };
  return Object.keys(info.terms).filter((field) => !field.startsWith('Q')).sort();
}

describe('ShardNode: calls naming their schema (schemaId)', () => {
  it('refuses a schema it does not hold before running anything, and uses the one held under the same identity', async () => {
    const unknown = node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schemaId: 'tag-only' });
    await expect(unknown).rejects.toMatchObject({ code: 'schema_unknown', status: 409 });
    expect(await node.handle('doc.get', { index: '/a/', shard: 1, id: 'x' })).toBeNull();

    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schema: TAG_ONLY, schemaId: 'tag-only' });
    expect(await indexedFields({ schemaId: 'tag-only' })).toEqual(['tag']);
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'y', body: BODY, schemaId: 'tag-only' });
    expect(await node.handle('doc.get', { index: '/a/', shard: 1, id: 'y' })).toMatchObject({ version: 1 });
  });

  it('never uses a held schema for another identity: a grown schema is asked for, and then replaces the old one', async () => {
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schema: TAG_ONLY, schemaId: 'tag-only' });
    await expect(indexedFields({ schemaId: 'with-title' })).rejects.toMatchObject({ code: 'schema_unknown' });
    expect(await indexedFields({ schema: WITH_TITLE, schemaId: 'with-title' })).toEqual(['tag', 'title']);
    expect(await indexedFields({ schemaId: 'with-title' })).toEqual(['tag', 'title']);
    await expect(indexedFields({ schemaId: 'tag-only' })).rejects.toMatchObject({ code: 'schema_unknown' });
  });

  it('holds a schema per shard copy, and forgets it when the copy is dropped', async () => {
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schema: TAG_ONLY, schemaId: 'tag-only' });
    await expect(node.handle('doc.write', { index: '/a/', shard: 2, op: 'index', id: 'x', body: BODY, schemaId: 'tag-only' }))
      .rejects.toMatchObject({ code: 'schema_unknown' });
    await expect(node.handle('doc.write', { index: '/b/', shard: 1, op: 'index', id: 'x', body: BODY, schemaId: 'tag-only' }))
      .rejects.toMatchObject({ code: 'schema_unknown' });
    await node.handle('shard.drop', { index: '/a/', shard: 1 });
    await expect(node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schemaId: 'tag-only' }))
      .rejects.toMatchObject({ code: 'schema_unknown' });
  });

  it('forgets every schema when restarted', async () => {
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schema: TAG_ONLY, schemaId: 'tag-only' });
    await node.close();
    node = new ShardNode({ name: 'n1', dataDir });
    await expect(indexedFields({ schemaId: 'tag-only' })).rejects.toMatchObject({ code: 'schema_unknown' });
    expect(await indexedFields({ schema: TAG_ONLY, schemaId: 'tag-only' })).toEqual(['tag']);
  });

  it('refuses a malformed schemaId or schema', async () => {
    await expect(node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schemaId: 7 }))
      .rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 'x', body: BODY, schema: 'tag', schemaId: 'tag-only' }))
      .rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('doc.write', { index: 'a', shard: 1, op: 'index', id: 'x', body: BODY, schemaId: 'tag-only' }))
      .rejects.toMatchObject({ code: 'rpc_bad_params' });
  });
});
