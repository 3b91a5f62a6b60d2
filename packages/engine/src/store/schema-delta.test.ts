import fc from 'fast-check';
import { applySchemaDelta, decodeSchemaDelta, diffSchema, encodeSchemaDelta, type SchemaDelta } from './schema-delta.js';

type Json = Record<string, unknown>;

/** `from` brought to `to` through a stored delta: the JSON of the result. */
function roundTrip(from: Json, to: Json): string {
  const delta = diffSchema(from, to);
  if (delta === undefined) return JSON.stringify(from);
  return JSON.stringify(applySchemaDelta(JSON.parse(JSON.stringify(from)) as Json, decodeSchemaDelta(encodeSchemaDelta(delta))));
}

describe('schema deltas', () => {
  test('added, changed and removed members at any depth, arrays and null values give the new schema exactly', () => {
    const from = {
      _settings: { shards: 5, analysis: { lang: 'en', stop: ['a', 'the'] } },
      title: { _type: 'text', _boost: 1 },
      gone: { _type: 'keyword' },
      tags: { _type: 'keyword', _values: [1, 2, 3] },
      none: null,
    };
    const to = {
      _settings: { shards: 5, analysis: { lang: 'fr', stop: ['le'], extra: null } },
      title: { _type: 'text', _boost: null },
      tags: { _type: 'keyword', _values: [1, 2, 3, 4] },
      none: { now: 'an object' },
      added: { _type: 'integer', nested: { deep: [null, { x: 1 }] } },
    };
    const delta = diffSchema(from, to) as SchemaDelta;
    expect(delta.delete).toEqual([['gone']]);
    expect(delta.set).toEqual([
      [['_settings', 'analysis', 'lang'], 'fr'],
      [['_settings', 'analysis', 'stop'], ['le']],
      [['_settings', 'analysis', 'extra'], null],
      [['title', '_boost'], null],
      [['tags', '_values'], [1, 2, 3, 4]],
      [['none'], { now: 'an object' }],
      [['added'], { _type: 'integer', nested: { deep: [null, { x: 1 }] } }],
    ]);
    expect(roundTrip(from, to)).toBe(JSON.stringify(to));
    // And back: members removed, a value made null again.
    expect(roundTrip(to, from)).toBe(JSON.stringify(from));
  });

  test('the same schema has no delta; one new field is a delta of that field alone', () => {
    const from = { a: { _type: 'text' }, b: [1, { c: null }] };
    expect(diffSchema(from, JSON.parse(JSON.stringify(from)) as Json)).toBeUndefined();
    const delta = diffSchema(from, { ...from, f3000: { _type: 'text' } }) as SchemaDelta;
    expect(delta).toEqual({ delete: [], set: [[['f3000'], { _type: 'text' }]] });
  });

  test('member order is kept: a reordered object is set whole, appended members one by one', () => {
    const from = { a: 1, nested: { x: 1, y: 2, z: 3 } };
    const to = { a: 1, nested: { z: 3, x: 1, y: 2 } };
    expect(diffSchema(from, to)).toEqual({ delete: [], set: [[['nested'], { z: 3, x: 1, y: 2 }]] });
    expect(roundTrip(from, to)).toBe(JSON.stringify(to));
    // The root reordered: the whole schema.
    expect(roundTrip({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe('{"b":2,"a":1}');
    // A member removed from the middle and one appended keep the order without a whole-object set.
    expect(diffSchema({ a: 1, b: 2, c: 3 }, { a: 1, c: 3, d: 4 })).toEqual({ delete: [['b']], set: [[['d'], 4]] });
  });

  test('a member named __proto__ stays a member', () => {
    const from = JSON.parse('{"a":1}') as Json;
    const to = JSON.parse('{"a":1,"__proto__":{"_type":"text"},"constructor":null}') as Json;
    const result = roundTrip(from, to);
    expect(result).toBe(JSON.stringify(to));
    expect(Object.getPrototypeOf(JSON.parse(result))).toBe(Object.prototype);
  });

  test('any JSON schema to any other (property)', () => {
    const key = fc.constantFrom('a', 'b', 'c', '_type', '__proto__', '0', '1');
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small' }, fc.constantFrom(null, 0, 1, 'x', true), fc.array(tie('tree'), { maxLength: 3 }),
        fc.dictionary(key, tie('tree'), { maxKeys: 4 })),
    }));
    const schema = fc.dictionary(key, tree, { maxKeys: 5 }).map((object) => JSON.parse(JSON.stringify(object)) as Json);
    fc.assert(fc.property(schema, schema, (from, to) => roundTrip(from, to) === JSON.stringify(to)), { numRuns: 2000 });
  });

  test('a delta that does not fit the schema, or is not a delta, is refused', () => {
    expect(() => applySchemaDelta({ a: 1 }, { delete: [['b']], set: [] })).toThrow(/missing member/);
    expect(() => applySchemaDelta({ a: 1 }, { delete: [], set: [[['a', 'b'], 1]] })).toThrow(/not an object/);
    expect(() => applySchemaDelta({ a: [{}] }, { delete: [], set: [[['a', '0', 'b'], 1]] })).toThrow(/not an object/);
    expect(() => applySchemaDelta({}, { delete: [[]], set: [] })).toThrow(/empty path/);
    expect(() => applySchemaDelta({}, { delete: [], set: [[[], 'x']] })).toThrow(/not an object/);
    expect(() => decodeSchemaDelta(Buffer.from('{"set":[[["a"],1]]'))).toThrow(SyntaxError);
    expect(() => decodeSchemaDelta(Buffer.from('{"set":[[["a"]]],"delete":[]}'))).toThrow(/not a schema delta/);
    expect(() => decodeSchemaDelta(Buffer.from('{"set":[],"delete":[[1]]}'))).toThrow(/not a schema delta/);
    expect(() => decodeSchemaDelta(Buffer.from('[]'))).toThrow(/not a schema delta/);
  });
});
