/**
 * Property: any sequence of writes (index / update / patch / delete on a few
 * IDs, with random expected versions and upserts) leaves the Shard with the
 * same documents and versions as a plain in-memory model — whether the writes
 * are awaited one by one or all issued at once (writes to one document keep
 * their call order; writes to different documents are independent) — and
 * again after close and reopen.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { Shard } from './shard.js';
import type { DocumentBody, DocumentId, WriteRequest } from './documents/types.js';

type Json = null | number | string | Json[] | { [key: string]: Json };
type ModelDoc = { version: number; body: Record<string, Json> };
type Outcome = { ok: true; version: number; body: Record<string, Json> | undefined } | { ok: false; code: string };

const IDS: DocumentId[] = ['a', 'b', 1, '1'];

const value: fc.Arbitrary<Json> = fc.oneof(
  fc.integer({ min: 0, max: 5 }),
  fc.constant(null),
  fc.constantFrom('s', 't'),
  fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }),
  fc.record({ p: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: [] }),
);
const body = fc.dictionary(fc.constantFrom('x', 'y', 'n', 'o'), value, { maxKeys: 3 }) as fc.Arbitrary<Record<string, Json>>;
const patchOp = fc.oneof(
  fc.record({ op: fc.constant('add'), path: fc.constantFrom('/x', '/o/p'), value: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ op: fc.constant('remove'), path: fc.constantFrom('/x', '/n') }),
  fc.record({ op: fc.constant('replace'), path: fc.constantFrom('/y', '/x'), value }),
  fc.record({ op: fc.constant('incr'), path: fc.constant('/n'), value: fc.constant(1), limit: fc.constant(3) }),
  fc.record({ op: fc.constant('test'), path: fc.constant('/x'), value: fc.integer({ min: 0, max: 3 }) }),
);
const write: fc.Arbitrary<WriteRequest> = fc.record({
  op: fc.constantFrom('index', 'update', 'patch', 'delete'),
  id: fc.constantFrom(...IDS),
  body,
  patch: fc.array(patchOp, { maxLength: 3 }),
  expectedVersions: fc.option(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 2 }), { nil: undefined }),
  upsert: fc.boolean(),
  commit: fc.boolean(),
}) as fc.Arbitrary<WriteRequest>;

function idKey(id: DocumentId): string {
  return `${typeof id}:${id}`;
}

// ---- The model: written from API.md §5, independently of the engine's code ----

function isObject(v: unknown): v is Record<string, Json> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function modelMerge(base: Record<string, Json>, partial: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = { ...base };
  for (const [k, v] of Object.entries(partial)) out[k] = isObject(out[k]) && isObject(v) ? modelMerge(out[k] as Record<string, Json>, v) : v;
  return out;
}

function modelPatch(start: Record<string, Json>, ops: unknown[]): Record<string, Json> | undefined {
  const doc = structuredClone(start);
  for (const raw of ops) {
    const op = raw as { op: string; path: string; value?: Json; limit?: number };
    const key = op.path.slice(1);
    switch (op.op) {
      case 'add':
        if (key === 'o/p') {
          if (!isObject(doc.o)) return undefined;
          doc.o.p = op.value!;
        } else {
          doc[key] = op.value!;
        }
        break;
      case 'remove':
        if (!(key in doc)) return undefined;
        delete doc[key];
        break;
      case 'replace':
        if (!(key in doc)) return undefined;
        doc[key] = op.value!;
        break;
      case 'incr': {
        const n = doc[key];
        const step = op.value as number;
        if (typeof n !== 'number' || n + step >= op.limit!) return undefined;
        doc[key] = n + step;
        break;
      }
      case 'test':
        if (!(key in doc) || JSON.stringify(doc[key]) !== JSON.stringify(op.value)) return undefined;
        break;
    }
  }
  return doc;
}

function applyModel(model: Map<string, ModelDoc>, req: WriteRequest): Outcome {
  const key = idKey(req.id);
  const current = model.get(key);
  for (const v of req.expectedVersions ?? []) {
    if (v === 0 ? current !== undefined : current?.version !== v) return { ok: false, code: 'version_conflict' };
  }
  let next: Record<string, Json>;
  switch (req.op) {
    case 'index':
      next = req.body as Record<string, Json>;
      break;
    case 'update':
      if (!current && !req.upsert) return { ok: false, code: 'document_not_found' };
      next = current ? modelMerge(current.body, req.body as Record<string, Json>) : (req.body as Record<string, Json>);
      break;
    case 'patch': {
      if (!current && !req.upsert) return { ok: false, code: 'document_not_found' };
      const patched = modelPatch(current?.body ?? {}, req.patch!);
      if (!patched) return { ok: false, code: 'patch_failed' };
      next = patched;
      break;
    }
    case 'delete':
      if (!current) return { ok: false, code: 'document_not_found' };
      model.delete(key);
      return { ok: true, version: current.version + 1, body: undefined };
  }
  const version = (current?.version ?? 0) + 1;
  model.set(key, { version, body: structuredClone(next) });
  return { ok: true, version, body: next };
}

// ---- The property ----

async function outcomeOf(promise: Promise<{ version: number; body?: DocumentBody }>): Promise<Outcome> {
  try {
    const r = await promise;
    return { ok: true, version: r.version, body: r.body as Record<string, Json> | undefined };
  } catch (err) {
    if (!(err instanceof TesseraError)) throw err;
    return { ok: false, code: err.code };
  }
}

async function expectSameState(shard: Shard, model: Map<string, ModelDoc>): Promise<void> {
  for (const id of IDS) {
    const doc = await shard.get(id);
    const expected = model.get(idKey(id));
    expect(doc === undefined ? undefined : { version: doc.version, body: doc.body }).toEqual(expected);
  }
  expect(shard.stats().documents).toBe(model.size);
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-property-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('a random sequence of writes matches an in-memory model, also after reopen', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 30 }), fc.boolean(), async (writes, concurrent) => {
      const path = join(dir, `run-${run++}`);
      const model = new Map<string, ModelDoc>();
      const expected = writes.map((req) => applyModel(model, structuredClone(req)));
      let shard = await Shard.open({ path, batchEntriesMax: 8, oplogEntriesMax: 1000 });
      try {
        let actual: Outcome[];
        if (concurrent) {
          actual = await Promise.all(writes.map((req) => outcomeOf(shard.write(structuredClone(req)))));
        } else {
          actual = [];
          for (const req of writes) actual.push(await outcomeOf(shard.write(structuredClone(req))));
        }
        expect(actual).toEqual(expected);
        await expectSameState(shard, model);
        const stats = shard.stats();
        await shard.close();
        shard = await Shard.open({ path, batchEntriesMax: 8, oplogEntriesMax: 1000 });
        expect(shard.stats()).toEqual(stats);
        await expectSameState(shard, model);
      } finally {
        await shard.destroy();
      }
    }),
    { numRuns: 60 },
  );
});
