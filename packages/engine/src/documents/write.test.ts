import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TesseraError } from '@tessera/errors';
import { createSchema, foldDocument } from '@tessera/schema';
import { ScriptRunner } from '@tessera/scripting';
import { Shard } from '../shard.js';
import { decideWrite } from './write.js';
import type { StoredDocument, WriteRequest } from './types.js';

let scripts: ScriptRunner;

beforeAll(async () => {
  scripts = await ScriptRunner.create();
});

afterAll(async () => {
  await scripts.close();
});

const stored = (body: Record<string, unknown>, version = 1): StoredDocument => ({ id: 'a', docid: 1, version, seq: version, body });
/** A schema that knows the fields of `body` (as the coordinator's fold would leave it). */
const schemaOf = (body: Record<string, unknown>) => foldDocument(createSchema(), body).schema;

function thrown(work: () => unknown): TesseraError {
  try {
    work();
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    return err as TesseraError;
  }
  throw new Error('did not throw');
}

describe('decideWrite with a script', () => {
  const schema = schemaOf({ n: 1, title: 'x', total: 2 });

  it('runs after the UPDATE merge, with _old_doc and _method, and stores the result', () => {
    const req: WriteRequest = {
      op: 'update', id: 'a', body: { n: 5 }, schema,
      script: { body: '_doc.total = _doc.n + _old_doc.n; _doc.title = _method', method: 'UPDATE' },
    };
    expect(decideWrite(req, stored({ n: 1, title: 'old' }), { scripts, schema })).toEqual({ kind: 'put', body: { n: 5, title: 'UPDATE', total: 6 } });
  });

  it('checks the expected version before running the script', () => {
    const req: WriteRequest = { op: 'index', id: 'a', body: {}, expectedVersions: [3], script: { body: 'error("must not run")', method: 'PUT' } };
    expect(thrown(() => decideWrite(req, stored({}, 2), { scripts, schema })).code).toBe('version_conflict');
  });

  it('refuses a result with fields the schema lacks, carrying the result for the coordinator', () => {
    const req: WriteRequest = { op: 'index', id: 'a', body: { n: 1 }, script: { body: '_doc.added = "new"', method: 'PUT' } };
    const err = thrown(() => decideWrite(req, undefined, { scripts, schema }));
    expect(err.code).toBe('script_schema_change');
    expect(err.details).toEqual({ scriptResult: { n: 1, added: 'new' } });
    // Once the schema has the field, the same write passes.
    const grown = foldDocument(schema, { added: 'x' }).schema;
    expect(decideWrite(req, undefined, { scripts, schema: grown })).toEqual({ kind: 'put', body: { n: 1, added: 'new' } });
  });

  it('refuses a result whose field contradicts the schema (400)', () => {
    const req: WriteRequest = { op: 'index', id: 'a', body: { n: 1 }, script: { body: '_doc.n = "text"', method: 'PUT' } };
    expect(thrown(() => decideWrite(req, undefined, { scripts, schema })).status).toBe(400);
  });

  it('lets a delete script refuse the delete, or let it through', () => {
    const guard = { body: 'if _old_doc.locked then error("locked") end', method: 'DELETE' };
    expect(thrown(() => decideWrite({ op: 'delete', id: 'a', script: guard }, stored({ locked: true }), { scripts, schema })).message).toContain('locked');
    expect(decideWrite({ op: 'delete', id: 'a', script: guard }, stored({ locked: false }), { scripts, schema })).toEqual({ kind: 'delete' });
  });

  it('is a 503 on a shard without a script runner', () => {
    const req: WriteRequest = { op: 'index', id: 'a', body: {}, script: { body: '_doc.x = 1', method: 'PUT' } };
    const err = thrown(() => decideWrite(req, undefined, { schema }));
    expect(err.status).toBe(503);
    expect(err.code).toBe('scripts_unavailable');
  });
});

describe('Shard.write with a script', () => {
  let dir: string;
  let shard: Shard;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-write-script-'));
    shard = await Shard.open({ path: join(dir, 'shard'), scripts });
  });

  afterEach(async () => {
    await shard.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serialises concurrent scripted increments: none is lost', async () => {
    const schema = schemaOf({ n: 1 });
    await shard.write({ op: 'index', id: 'c', body: { n: 0 }, schema });
    const increment: WriteRequest = { op: 'update', id: 'c', body: {}, schema, script: { body: '_doc.n = _doc.n + 1', method: 'UPDATE' } };
    await Promise.all(Array.from({ length: 50 }, () => shard.write(increment)));
    expect((await shard.get('c'))?.body).toEqual({ n: 50 });
    expect((await shard.get('c'))?.version).toBe(51);
  });

  it('writes nothing when the script fails', async () => {
    const schema = schemaOf({ n: 1 });
    await shard.write({ op: 'index', id: 'd', body: { n: 1 }, schema });
    await expect(shard.write({ op: 'update', id: 'd', body: { n: 2 }, schema, script: { body: 'while true do end', method: 'UPDATE' } }))
      .rejects.toMatchObject({ code: 'script_limit_exceeded', status: 400 });
    expect(await shard.get('d')).toMatchObject({ version: 1, body: { n: 1 } });
  });

  it('refuses a malformed script in the request', async () => {
    const bad = { op: 'index', id: 'e', body: {}, script: { body: 5, method: 'PUT' } } as unknown as WriteRequest;
    await expect(shard.write(bad)).rejects.toMatchObject({ code: 'invalid_write', status: 400 });
  });
});
