import { TesseraError } from '@tessera/errors';
import { foreignReference, SchemaPolicy, type ForeignDocuments } from './schema-policy.js';

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof TesseraError) return `${err.status} ${err.code}`;
    throw err;
  }
  return 'no error';
}

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof TesseraError) return `${err.status} ${err.code}: ${err.message}`;
    throw err;
  }
  return 'no error';
}

/** Documents in memory, by `<index><id>`. */
function memory(): ForeignDocuments & { docs: Map<string, Record<string, unknown>> } {
  const docs = new Map<string, Record<string, unknown>>();
  return {
    docs,
    read: async (index, id) => docs.get(`${index}${id}`),
    write: async (index, id, body) => void docs.set(`${index}${id}`, body),
  };
}

describe('foreignReference', () => {
  test('foreign/object in either order, with <index>/<id>', () => {
    expect(foreignReference({ _type: 'foreign/object', _foreign: 'schemas/s1' })).toEqual({ index: '/schemas/', id: 's1' });
    expect(foreignReference({ _type: 'object/foreign', _foreign: '/a/b/doc' })).toEqual({ index: '/a/b/', id: 'doc' });
    expect(foreignReference({ _type: 'object' })).toBeUndefined();
    expect(foreignReference('x')).toBeUndefined();
  });

  test('bad references are 400s', () => {
    for (const body of [{ _type: 'foreign/text', _foreign: 'a/b' }, { _type: 'foreign/object' }, { _type: 'foreign/object', _foreign: 'a' },
      { _type: 'foreign/object', _foreign: 'a/' }, { _type: 'foreign/object', _foreign: 3 }]) {
      expect(failure(() => foreignReference(body))).toBe('400 invalid_foreign_schema');
    }
  });
});

describe('SchemaPolicy', () => {
  test('strict: a new index needs settings, and its schema starts strict unless it says otherwise', async () => {
    const policy = new SchemaPolicy({ strict: true });
    expect(await rejection(policy.prepareNewSchema('/x/', undefined, false))).toMatch(/^412 strict_missing_settings/);
    expect((await policy.prepareNewSchema('/x/', { a: { _type: 'integer' } }, true)).schema).toEqual({ _strict: true, a: { _type: 'integer' } });
    expect((await policy.prepareNewSchema('/x/', { _strict: false }, true)).schema).toEqual({ _strict: false });
    expect((await new SchemaPolicy({ strict: false }).prepareNewSchema('/x/', undefined, false)).schema).toEqual({});
  });

  test('foreign: created from the given fields when missing, read when present, merged with the given fields', async () => {
    const documents = memory();
    const policy = new SchemaPolicy({ strict: false, documents });
    const created = await policy.prepareNewSchema('/a/', { _type: 'foreign/object', _foreign: 's/1', n: { _type: 'integer' } }, false);
    expect(created).toEqual({ schema: { n: { _type: 'integer' } }, foreign: '/s/1' });
    expect(documents.docs.get('/s/1')).toEqual({ schema: { _recurse: false, _value: { n: { _type: 'integer' } } } });
    documents.docs.set('/s/2', { schema: { t: { _type: 'time' } } });
    const read = await policy.prepareNewSchema('/b/', { _type: 'foreign/object', _foreign: 's/2', k: { _type: 'keyword' } }, false);
    expect(read.schema).toEqual({ t: { _type: 'time' }, k: { _type: 'keyword' } });
    expect(await rejection(policy.prepareNewSchema('/c/', { _type: 'foreign/object', _foreign: 's/2', t: { _type: 'text' } }, false)))
      .toMatch(/^400 schema_immutable/);
  });

  test('foreign: a holder without a valid schema, or no document store, is a 400', async () => {
    const documents = memory();
    documents.docs.set('/s/plain', { title: 'x' });
    documents.docs.set('/s/bad', { schema: { f: { _type: 'nope' } } });
    const policy = new SchemaPolicy({ strict: false, documents });
    for (const id of ['plain', 'bad']) {
      expect(await rejection(policy.prepareNewSchema('/a/', { _type: 'foreign/object', _foreign: `s/${id}` }, false))).toMatch(/^400 invalid_foreign_schema/);
    }
    const failing: ForeignDocuments = { read: async () => { throw new Error('boom'); }, write: async () => undefined };
    expect(await rejection(new SchemaPolicy({ strict: false, documents: failing }).prepareNewSchema('/a/', { _type: 'foreign/object', _foreign: 's/x' }, false)))
      .toBe('400 invalid_foreign_schema: Invalid foreign schema: cannot read /s/x: boom');
    expect(await rejection(new SchemaPolicy({ strict: false }).prepareNewSchema('/a/', { _type: 'foreign/object', _foreign: 's/x' }, false)))
      .toMatch(/^400 invalid_foreign_schema/);
  });

  test('an existing index keeps its own foreign reference', () => {
    const policy = new SchemaPolicy({ strict: false });
    expect(policy.existingSchemaChange('/a/', '/s/1', { _type: 'foreign/object', _foreign: 's/1', x: { _type: 'text' } })).toEqual({ x: { _type: 'text' } });
    expect(failure(() => policy.existingSchemaChange('/a/', '/s/1', { _type: 'foreign/object', _foreign: 's/2' }))).toBe('400 schema_immutable');
    expect(failure(() => policy.existingSchemaChange('/a/', undefined, { _type: 'foreign/object', _foreign: 's/2' }))).toBe('400 schema_immutable');
    expect(policy.existingSchemaChange('/a/', undefined, { y: { _type: 'text' } })).toEqual({ y: { _type: 'text' } });
  });
});
