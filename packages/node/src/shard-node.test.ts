import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineLogger } from '@tessera/engine';
import { bodyOf, DEFERRED, type DocumentReply } from '@tessera/rpc';
import { shardDirectory } from './shard-paths.js';
import { ShardNode } from './shard-node.js';

let dataDir: string;
let node: ShardNode;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-node-'));
  node = new ShardNode({ name: 'n1', dataDir });
});

afterEach(async () => {
  await node.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('ShardNode', () => {
  it('answers writes and reads of a shard copy through its RPC handler', async () => {
    await node.handle('shard.open', { index: '/a/b/', shard: 2 });
    const written = await node.handle('doc.write', { index: '/a/b/', shard: 2, op: 'index', id: 'x', body: { v: 1 } }) as { version: number };
    expect(written.version).toBe(1);
    const got = await node.handle('doc.get', { index: '/a/b/', shard: 2, id: 'x' }) as DocumentReply;
    expect(got).toMatchObject({ id: 'x', version: 1 });
    expect(bodyOf(got)).toEqual({ v: 1 });
    expect(await node.handle('doc.get', { index: '/a/b/', shard: 2, id: 'y' })).toBeNull();
    expect(await node.handle('shard.stats', { index: '/a/b/', shard: 2 })).toMatchObject({ documents: 1, lastDocid: 1 });
    const info = await node.handle('node.info', {}) as { name: string; shards: unknown[] };
    expect(info).toEqual({ name: 'n1', shards: [{ index: '/a/b/', shard: 2, seq: 1, documents: 1, checkpoint: 0 }] });
  });

  it('keeps nested indexes apart on disk and drops only the named one', async () => {
    await node.handle('doc.write', { index: '/a/', shard: 1, op: 'index', id: 1, body: {} });
    await node.handle('doc.write', { index: '/a/b/', shard: 1, op: 'index', id: 1, body: {} });
    expect(existsSync(shardDirectory(dataDir, '/a/', 1))).toBe(true);
    await node.handle('shard.drop', { index: '/a/', shard: 1 });
    expect(existsSync(shardDirectory(dataDir, '/a/', 1))).toBe(false);
    expect(await node.handle('doc.get', { index: '/a/b/', shard: 1, id: 1 })).toMatchObject({ version: 1 });
  });

  it('answers a search across a wire (bodiesAsJson) with the JSON of each body alone, unless JSON would change the body', async () => {
    await node.handle('doc.write', { index: '/j/', shard: 1, op: 'index', id: 'plain', body: { title: 'a', n: 1, tags: ['x', null], nested: { ok: true } } });
    await node.handle('doc.write', { index: '/j/', shard: 1, op: 'index', id: 'binary', body: { raw: new Uint8Array([1, 2, 3]) } });
    type Hit = { id: string; body?: unknown; bodyJson?: string };
    const search = async (bodiesAsJson: boolean) => {
      const reply = await node.handle('shard.search', { index: '/j/', shard: 1, k: 10, schema: {}, bodiesAsJson }) as { hits: Hit[] };
      return new Map(reply.hits.map((hit) => [hit.id, hit]));
    };
    const remote = await search(true);
    expect(remote.get('plain')?.body).toBeUndefined();
    expect(JSON.parse(remote.get('plain')?.bodyJson ?? 'null')).toEqual({ title: 'a', n: 1, tags: ['x', null], nested: { ok: true } });
    // JSON would make the bytes an object of indexes: the body itself travels.
    expect(remote.get('binary')?.body).toEqual({ raw: new Uint8Array([1, 2, 3]) });
    // In the same process too, a document the cache keeps as its text comes as that text alone, and binary as itself.
    const local = await search(false);
    expect(local.get('plain')?.body).toBeUndefined();
    expect(local.get('plain')?.bodyJson).toBe(remote.get('plain')?.bodyJson);
    expect(local.get('binary')?.body).toEqual({ raw: new Uint8Array([1, 2, 3]) });
    // doc.get likewise, from LevelDB and from the cache (handleNow).
    for (const get of [(p: object) => node.handle('doc.get', p), (p: object) => node.handleNow('doc.get', p)]) {
      const plain = await get({ index: '/j/', shard: 1, id: 'plain', bodiesAsJson: true }) as { body?: unknown; bodyJson?: string };
      expect(plain.body).toBeUndefined();
      expect(bodyOf(plain as DocumentReply)).toEqual({ title: 'a', n: 1, tags: ['x', null], nested: { ok: true } });
      expect(await get({ index: '/j/', shard: 1, id: 'binary', bodiesAsJson: true })).toMatchObject({ body: { raw: new Uint8Array([1, 2, 3]) } });
      expect(bodyOf(await get({ index: '/j/', shard: 1, id: 'plain' }) as DocumentReply)).toMatchObject({ title: 'a' });
    }
  });

  it('refuses malformed calls', async () => {
    await expect(node.handle('doc.get', { index: 'a', shard: 1, id: 'x' })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('doc.get', { index: '/a/', shard: 0, id: 'x' })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('doc.get', { index: '/a/', shard: 1, id: {} })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('nope', {})).rejects.toMatchObject({ code: 'rpc_bad_params' });
  });

  it('pages through a shard copy with shard.scan, and refuses a bad page size or cursor', async () => {
    for (const id of [3, 1, 2]) await node.handle('doc.write', { index: '/s/', shard: 1, op: 'index', id, body: { id } });
    const first = await node.handle('shard.scan', { index: '/s/', shard: 1, limit: 2 });
    expect(first).toEqual({ documents: [{ id: 1, version: 1, body: { id: 1 } }, { id: 2, version: 1, body: { id: 2 } }], done: false });
    expect(await node.handle('shard.scan', { index: '/s/', shard: 1, after: 2, limit: 2 })).toEqual({ documents: [{ id: 3, version: 1, body: { id: 3 } }], done: true });
    await expect(node.handle('shard.scan', { index: '/s/', shard: 1, limit: 0 })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('shard.scan', { index: '/s/', shard: 1, limit: 1e9 })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    await expect(node.handle('shard.scan', { index: '/s/', shard: 1, after: {}, limit: 1 })).rejects.toMatchObject({ code: 'rpc_bad_params' });
  });

  it('answers doc.get of a cached document at once (handleNow), the same reply as handle, and defers everything else', async () => {
    const ref = { index: '/n/', shard: 1 };
    expect(node.handleNow('doc.get', { ...ref, id: 'x' })).toBe(DEFERRED); // copy not open yet
    await node.handle('doc.write', { ...ref, op: 'index', id: 'x', body: { v: 1 } });
    const now = node.handleNow('doc.get', { ...ref, id: 'x' });
    expect(now).toEqual(await node.handle('doc.get', { ...ref, id: 'x' }));
    expect(now).toEqual({ id: 'x', version: 1, docid: 1, bodyJson: '{"v":1}' });
    expect(node.handleNow('doc.get', { ...ref, id: 'absent' })).toBe(DEFERRED); // a miss: the ordinary path reads it
    expect(node.handleNow('doc.info', { ...ref, id: 'x' })).toBe(DEFERRED);
    expect(() => node.handleNow('doc.get', { index: 'n', shard: 1, id: 'x' })).toThrow(expect.objectContaining({ code: 'rpc_bad_params' }));
    expect(() => node.handleNow('doc.get', { ...ref, id: {} })).toThrow(expect.objectContaining({ code: 'rpc_bad_params' }));
    await node.handle('doc.write', { ...ref, op: 'index', id: 'x', body: { v: 2 } });
    expect(node.handleNow('doc.get', { ...ref, id: 'x' })).toMatchObject({ version: 2, bodyJson: '{"v":2}' });
    await node.handle('shard.drop', ref);
    expect(node.handleNow('doc.get', { ...ref, id: 'x' })).toBe(DEFERRED);
    expect(await node.handle('doc.get', { ...ref, id: 'x' })).toBeNull();
  });

  it('defers every immediate call once closing', async () => {
    const ref = { index: '/n/', shard: 1 };
    await node.handle('doc.write', { ...ref, op: 'index', id: 'x', body: {} });
    expect(node.handleNow('doc.get', { ...ref, id: 'x' })).not.toBe(DEFERRED);
    await node.close();
    expect(node.handleNow('doc.get', { ...ref, id: 'x' })).toBe(DEFERRED);
  });

  it('refuses calls once closing', async () => {
    await node.close();
    await expect(node.handle('node.info', {})).rejects.toMatchObject({ code: 'node_closing', status: 503 });
  });

  it('logs through a child per shard copy and reports a copy whose flush keeps failing in node.stats', async () => {
    await node.close();
    const lines: Array<{ level: string; bindings: Record<string, unknown>; message: string }> = [];
    const logger = (bindings: Record<string, unknown>): EngineLogger => ({
      info: (_f, message) => lines.push({ level: 'info', bindings, message }),
      warn: (_f, message) => lines.push({ level: 'warn', bindings, message }),
      error: (_f, message) => lines.push({ level: 'error', bindings, message }),
      child: (more) => logger({ ...bindings, ...more }),
    });
    node = new ShardNode({ name: 'n1', dataDir, log: logger({ node: 'n1' }), index: { idleFlushMs: 100, retryMs: 5 } });
    const where = { index: '/a/', shard: 1 };
    const db = ((await node.open(where)) as unknown as { state: { db: { batch: unknown } } }).state.db;
    expect(lines).toContainEqual({ level: 'info', bindings: { node: 'n1', index: '/a/', shard: 1 }, message: 'shard copy opened' });
    let stats = await node.stats();
    expect(stats.shards[0]).toMatchObject({ index: '/a/', shard: 1, search: { flushes: 0, flushFailures: 0 } });
    expect(stats.shards[0]!.flushFailure).toBeUndefined();
    await node.handle('doc.write', { ...where, op: 'index', id: 1, body: { v: 1 } });
    // Before the idle flush starts: every batch the segment store begins throws.
    db.batch = () => {
      throw new Error('disk full');
    };
    const deadline = Date.now() + 5000;
    while ((stats = await node.stats()).shards[0]!.flushFailure === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(stats.shards[0]!.flushFailure).toMatchObject({ message: 'disk full' });
    expect(stats.shards[0]!.search!.flushFailures).toBeGreaterThanOrEqual(1);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', bindings: { node: 'n1', index: '/a/', shard: 1 } }));
    await node.close();
    node = new ShardNode({ name: 'n1', dataDir });
  });
});
