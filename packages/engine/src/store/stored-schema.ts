/**
 * The index schema a shard copy stores beside its documents, as a base plus
 * deltas: a batch that changes the schema writes only what changed (a delta,
 * store/schema-delta.ts) under the next META_SCHEMA_DELTA key, not the whole
 * schema, which with one new field per write cost O(fields²) bytes through
 * LevelDB (docs/reliability.md, R8). Once the deltas hold more bytes than the
 * base, or SCHEMA_DELTAS_MAX of them, the batch writes the whole schema as the
 * new base and deletes the deltas instead: each change costs amortised bytes
 * in proportion to its own size, and an open reads at most twice the base.
 * A shard with a base and no deltas is what the format always stored.
 */
import type { ShardDatabase } from './oplog.js';
import { engineErrors } from '../errors.js';
import { META_SCHEMA, schemaDeltaKey, schemaDeltaNumber, schemaDeltaRange } from './keys.js';
import { applySchemaDelta, decodeSchemaDelta, diffSchema, encodeSchemaDelta } from './schema-delta.js';

/** The deltas a base is rewritten after, however small they are (bounds the keys an open reads). */
export const SCHEMA_DELTAS_MAX = 1000;

/** What the store holds of the schema: the base's bytes (0: no schema stored yet), the number of deltas and their bytes. */
export interface SchemaStorage {
  readonly baseBytes: number;
  readonly deltas: number;
  readonly deltaBytes: number;
}

export const NO_STORED_SCHEMA: SchemaStorage = { baseBytes: 0, deltas: 0, deltaBytes: 0 };

export interface StoredSchema {
  readonly schema: Record<string, unknown>;
  readonly storage: SchemaStorage;
}

/**
 * The stored schema: the base with every delta applied in order. A base that
 * is not JSON, deltas without a base or with a gap in their numbers, and a
 * delta that does not parse or apply fail with 500 store_corrupted.
 */
export async function readStoredSchema(db: ShardDatabase): Promise<StoredSchema> {
  const [base] = await db.getMany([META_SCHEMA]);
  const deltas = await db.iterator(schemaDeltaRange()).all();
  if (base === undefined) {
    if (deltas.length > 0) throw corrupted(`${deltas.length} schema deltas`, 'they have no base schema');
    return { schema: {}, storage: NO_STORED_SCHEMA };
  }
  let schema: Record<string, unknown>;
  try {
    schema = JSON.parse(base.toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw corrupted('the base schema', (err as Error).message);
  }
  let deltaBytes = 0;
  for (const [i, [key, value]] of deltas.entries()) {
    const n = schemaDeltaNumber(key);
    if (n !== i + 1) throw corrupted(`schema delta ${n}`, `expected delta ${i + 1} (deltas are numbered from 1 without gaps)`);
    try {
      schema = applySchemaDelta(schema, decodeSchemaDelta(value));
    } catch (err) {
      throw corrupted(`schema delta ${n}`, (err as Error).message);
    }
    deltaBytes += value.length;
  }
  return { schema, storage: { baseBytes: base.length, deltas: deltas.length, deltaBytes } };
}

function corrupted(what: string, why: string): Error {
  return engineErrors.storeCorrupted(`${what} (in the shard's LevelDB tables)`, why);
}

/** What a schema change is put into: a LevelDB batch, or shard/batch.ts's recording of one. */
export interface BatchWriter {
  put(key: Buffer, value: Buffer): unknown;
  del(key: Buffer): unknown;
}

/**
 * Put the change from the stored schema `from` to `to` into `batch`: a
 * delta, or a new base (`to` as JSON) and the deltas deleted. Returns what
 * the store holds once the batch is written.
 */
export function writeSchemaChange(batch: BatchWriter, storage: SchemaStorage,
  from: Record<string, unknown>, to: Record<string, unknown>): SchemaStorage {
  if (storage.baseBytes > 0) {
    const delta = diffSchema(from, to);
    if (delta === undefined) return storage;
    const encoded = encodeSchemaDelta(delta);
    if (storage.deltaBytes + encoded.length <= storage.baseBytes && storage.deltas < SCHEMA_DELTAS_MAX) {
      batch.put(schemaDeltaKey(storage.deltas + 1), encoded);
      return { baseBytes: storage.baseBytes, deltas: storage.deltas + 1, deltaBytes: storage.deltaBytes + encoded.length };
    }
  }
  const base = Buffer.from(JSON.stringify(to), 'utf8');
  batch.put(META_SCHEMA, base);
  for (let n = 1; n <= storage.deltas; n++) batch.del(schemaDeltaKey(n));
  return { baseBytes: base.length, deltas: 0, deltaBytes: 0 };
}
