import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TesseraError } from '@tessera/errors';
import { SoloPlacements } from './solo-placements.js';
import { ShardNode } from './shard-node.js';

const WHERE = { index: '/solo/', shard: 1 };
const KEY = '/solo/#1';

describe('SoloPlacements', () => {
  it('admits a direct write only while placed solo in its term', () => {
    const placements = new SoloPlacements();
    expect(() => placements.admit(KEY, WHERE, 1)).toThrow(expect.objectContaining({ code: 'primary_not_solo', status: 503 }));
    void placements.place(KEY, { ...WHERE, term: 1, revision: 10, solo: true });
    placements.admit(KEY, WHERE, 1)();
    expect(() => placements.admit(KEY, WHERE, 2)).toThrow(TesseraError);
    placements.forget(KEY);
    expect(() => placements.admit(KEY, WHERE, 1)).toThrow(TesseraError);
  });

  it('keeps the word of the highest revision: an older push arriving late changes nothing', async () => {
    const placements = new SoloPlacements();
    await placements.place(KEY, { ...WHERE, term: 1, revision: 20, solo: false });
    await placements.place(KEY, { ...WHERE, term: 1, revision: 19, solo: true });
    expect(() => placements.admit(KEY, WHERE, 1)).toThrow(TesseraError);
    await placements.place(KEY, { ...WHERE, term: 1, revision: 21, solo: true });
    expect(typeof placements.admit(KEY, WHERE, 1)).toBe('function');
  });

  it('answers a push that ends solo once the direct writes running have finished, and admits none after it', async () => {
    const placements = new SoloPlacements();
    await placements.place(KEY, { ...WHERE, term: 1, revision: 1, solo: true });
    const first = placements.admit(KEY, WHERE, 1);
    const second = placements.admit(KEY, WHERE, 1);
    let answered = false;
    const push = placements.place(KEY, { ...WHERE, term: 1, revision: 2, solo: false }).then(() => { answered = true; });
    expect(() => placements.admit(KEY, WHERE, 1)).toThrow(TesseraError);
    first();
    first(); // twice counts once
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    second();
    await push;
    expect(answered).toBe(true);
  });
});

describe('a direct doc.write on a ShardNode', () => {
  let dataDir: string;
  let node: ShardNode;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tessera-node-solo-'));
    node = new ShardNode({ name: 'n1', dataDir });
  });
  afterEach(async () => {
    await node.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is refused before it runs until the copy is placed solo, then runs; a plain write never asks', async () => {
    const write = (id: string, direct: boolean) => node.handle('doc.write', { ...WHERE, op: 'index', id, body: { n: 1 }, term: 1, direct });
    await expect(write('a', true)).rejects.toMatchObject({ code: 'primary_not_solo' });
    await expect(write('b', false)).resolves.toMatchObject({ id: 'b', version: 1 });
    await node.handle('shard.placement', { ...WHERE, term: 1, revision: 5, solo: true });
    await expect(write('a', true)).resolves.toMatchObject({ id: 'a', version: 1 });
    await expect(node.handle('shard.placement', { ...WHERE, term: 1, revision: 'x', solo: true })).rejects.toMatchObject({ code: 'rpc_bad_params' });
    // Dropped and made again: unplaced.
    await node.handle('shard.drop', WHERE);
    await expect(write('c', true)).rejects.toMatchObject({ code: 'primary_not_solo' });
    expect(await node.handle('doc.get', { ...WHERE, id: 'a' })).toBeNull();
  });
});
