/**
 * The schema a shard copy stores beside its documents (store/stored-schema.ts):
 * a growing schema is written as a base plus deltas, reads back as the schema
 * the shard indexed with (after a kill: shard-crash.test.ts), and a delta that
 * is corrupt fails the open.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { TesseraError } from '@tessera/errors';
import { parseQuery } from '@tessera/search-model';
import { Shard } from './shard.js';
import { META_SCHEMA, META_SCHEMA_DELTA, schemaDeltaKey, schemaDeltaRange } from './store/keys.js';
import type { ShardDatabase } from './store/oplog.js';
import { SCHEMA_DELTAS_MAX, type SchemaStorage } from './store/stored-schema.js';

let dir: string;
let path: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-schema-'));
  path = join(dir, 'shard');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The schema after `fields` writes that each bring one field. */
function grownSchema(fields: number): Record<string, unknown> {
  const schema: Record<string, unknown> = { _settings: { number_of_shards: 1 } };
  for (let i = 1; i <= fields; i++) schema[`f${i}`] = { _type: 'keyword' };
  return schema;
}

/** One write per field, each with the schema that has it: what a coordinator sends as an index grows. */
async function grow(shard: Shard, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) {
    await shard.write({ op: 'index', id: `d${i % 20}`, body: { [`f${i}`]: `word ${i}` }, schema: grownSchema(i) });
  }
}

function stateOf(shard: Shard): { db: ShardDatabase; schemaStorage: SchemaStorage } {
  return (shard as unknown as { state: { db: ShardDatabase; schemaStorage: SchemaStorage } }).state;
}

/** The schema the shard holds, as JSON (members in their stored order). */
const schemaJsonOf = (shard: Shard): string => JSON.stringify(shard.indexSchema);

/** What the closed shard's LevelDB holds of the schema: the base's bytes and each delta's. */
async function storedSchemaKeys(): Promise<{ base: Buffer | undefined; deltas: Buffer[] }> {
  const db = new ClassicLevel<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  try {
    const [base] = await db.getMany([META_SCHEMA]);
    return { base, deltas: await db.values(schemaDeltaRange()).all() };
  } finally {
    await db.close();
  }
}

async function editStore(edit: (db: ClassicLevel<Buffer, Buffer>) => Promise<void>): Promise<void> {
  const db = new ClassicLevel<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  try {
    await edit(db);
  } finally {
    await db.close();
  }
}

async function expectCorrupted(what: RegExp): Promise<void> {
  const err = await Shard.open({ path }).then(async (shard) => {
    await shard.close();
    return undefined;
  }, (e: unknown) => e);
  expect(err).toBeInstanceOf(TesseraError);
  expect((err as TesseraError).code).toBe('store_corrupted');
  expect((err as TesseraError).status).toBe(500);
  expect((err as TesseraError).message).toMatch(what);
}

describe('Shard: the stored schema', () => {
  it('a schema grown one field per write is stored as deltas and rewritten bases, O(size) bytes in all, and reads back the same', async () => {
    const shard = await Shard.open({ path });
    let schemaBytes = 0;
    let bases = 0;
    let deltas = 0;
    stateOf(shard).db.on('write', (ops: { type: string; key: Buffer; value?: Buffer }[]) => {
      for (const op of ops) {
        if (op.type !== 'put') continue;
        if (op.key.equals(META_SCHEMA)) bases++;
        else if (op.key.subarray(0, META_SCHEMA_DELTA.length).equals(META_SCHEMA_DELTA)) deltas++;
        else continue;
        schemaBytes += (op.value as Buffer).length;
      }
    });
    await grow(shard, 1, 300);
    const json = JSON.stringify(grownSchema(300));
    expect(schemaJsonOf(shard)).toBe(json);
    expect(shard.indexSchema).toEqual(grownSchema(300));
    await shard.close();

    // Every write changed the schema: a base or a delta each, the bases rewritten as the deltas outgrow them.
    expect(bases + deltas).toBe(300);
    expect(bases).toBeGreaterThanOrEqual(3);
    expect(bases).toBeLessThanOrEqual(30);
    // The whole schema per write, as before, was about 150 times the last one; deltas and doubling bases a few times.
    expect(schemaBytes).toBeLessThan(8 * json.length);

    const stored = await storedSchemaKeys();
    expect(stored.base).toBeDefined();
    const deltaBytes = stored.deltas.reduce((sum, delta) => sum + delta.length, 0);
    expect(stored.deltas.length).toBeLessThanOrEqual(SCHEMA_DELTAS_MAX);
    expect(deltaBytes).toBeLessThanOrEqual((stored.base as Buffer).length);

    const reopened = await Shard.open({ path });
    try {
      expect(schemaJsonOf(reopened)).toBe(json);
      expect(reopened.indexSchema).toEqual(grownSchema(300));
      expect(stateOf(reopened).schemaStorage).toEqual({ baseBytes: (stored.base as Buffer).length, deltas: stored.deltas.length, deltaBytes });
      // It goes on from there.
      await grow(reopened, 301, 320);
      expect((await reopened.search({ query: parseQuery({ f310: 'word 310' }), k: 1 })).total).toBe(1);
    } finally {
      await reopened.close();
    }
    const again = await Shard.open({ path });
    expect(schemaJsonOf(again)).toBe(JSON.stringify(grownSchema(320)));
    await again.close();
  });

  it("keeps the caller's schema object, not a copy of its own, and stores nothing for an equal schema in another object", async () => {
    const shard = await Shard.open({ path });
    try {
      let schemaPuts = 0;
      stateOf(shard).db.on('write', (ops: { type: string; key: Buffer }[]) => {
        for (const op of ops) if (op.type === 'put' && op.key.subarray(0, META_SCHEMA.length).equals(META_SCHEMA)) schemaPuts++;
      });
      const sent = grownSchema(2);
      await shard.write({ op: 'index', id: 'a', body: { f1: 'x', f2: 'y' }, schema: sent });
      expect(shard.indexSchema).toBe(sent);
      expect(schemaPuts).toBe(1);
      // The same schema decoded again (as over a wire): held from now on, nothing written.
      const equal = grownSchema(2);
      await shard.write({ op: 'index', id: 'b', body: { f1: 'z' }, schema: equal });
      expect(shard.indexSchema).toBe(equal);
      expect(schemaPuts).toBe(1);
    } finally {
      await shard.close();
    }
  });

  it('a shard holding only a base, as written before deltas, opens with it and adds deltas to it', async () => {
    const shard = await Shard.open({ path });
    await grow(shard, 1, 3);
    await shard.close();
    const base = JSON.stringify(grownSchema(50));
    await editStore(async (db) => {
      await db.clear(schemaDeltaRange());
      await db.put(META_SCHEMA, Buffer.from(base));
    });
    const reopened = await Shard.open({ path });
    expect(schemaJsonOf(reopened)).toBe(base);
    await grow(reopened, 51, 52);
    await reopened.close();
    expect((await storedSchemaKeys()).deltas.length).toBe(2);
    const again = await Shard.open({ path });
    expect(schemaJsonOf(again)).toBe(JSON.stringify(grownSchema(52)));
    await again.close();
  });

  describe('a corrupt delta fails the open with store_corrupted', () => {
    beforeEach(async () => {
      const shard = await Shard.open({ path });
      // Enough fields that the store holds at least two deltas.
      for (let to = 10; stateOf(shard).schemaStorage.deltas < 2; to += 10) await grow(shard, to - 9, to);
      await shard.close();
    });

    it('one that is not JSON', async () => {
      await editStore((db) => db.put(schemaDeltaKey(1), Buffer.from('{"set":[[["f1"')));
      await expectCorrupted(/schema delta 1 .*JSON/);
    });

    it('one that does not apply', async () => {
      await editStore((db) => db.put(schemaDeltaKey(2), Buffer.from('{"delete":[["no such field"]],"set":[]}')));
      await expectCorrupted(/schema delta 2 .*missing member/);
    });

    it('one missing from the sequence', async () => {
      await editStore((db) => db.del(schemaDeltaKey(1)));
      await expectCorrupted(/schema delta 2 .*expected delta 1/);
    });

    it('deltas without their base', async () => {
      await editStore((db) => db.del(META_SCHEMA));
      await expectCorrupted(/schema deltas .*no base schema/);
    });
  });
});
