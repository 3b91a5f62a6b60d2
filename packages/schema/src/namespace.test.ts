/** Namespaces with partial paths, and UUID-named children (API.md §8.7). */
import { foldDocument } from './fold.js';
import { namespacePaths } from './namespace-paths.js';
import { error, values } from './fold.fixture.js';
import { createSchema, describeSchema, fieldSpec, mergeSchema } from './schema.js';
import { fieldTerm } from './terms.js';

const U1 = '5759b016-10c0-4526-a981-47d6d19f6fb4';
const U2 = 'c1e7d0f0-1f6e-11ee-be56-0242ac120002';

describe('namespaces', () => {
  const doc = { style: { _namespace: true, clothing: { pants: 'khakis', footwear: { _value: 'boots' } }, hairstyle: 'slick back' } };

  test('the first value types every descendant; descendants never enter the schema', () => {
    const r = foldDocument({}, doc);
    expect(r.schema).toEqual({ style: { _namespace: true, _type: 'text' } });
    expect(r.document.stored).toEqual({ style: { clothing: { pants: 'khakis', footwear: 'boots' }, hairstyle: 'slick back' } });
    expect(values(r)).toEqual([
      ['style.clothing.pants', 'khakis'], ['style.pants', 'khakis'],
      ['style.clothing.footwear', 'boots'], ['style.footwear', 'boots'],
      ['style.hairstyle', 'slick back'],
    ]);
    const again = foldDocument(r.schema, { style: { shoes: { left: { colour: 'red' } } } });
    expect(again.changed).toBe(false);
    expect(values(again).map(([p]) => p)).toEqual(['style.shoes.left.colour', 'style.colour', 'style.shoes.colour', 'style.left.colour']);
  });

  test('full and partial paths resolve to specs of the namespace type, each with its own prefix and slot', () => {
    const { schema } = foldDocument({}, doc);
    const full = fieldSpec(schema, 'style.clothing.footwear')!;
    const partial = fieldSpec(schema, 'style.footwear')!;
    expect([full.type, full.prefix, partial.type, partial.prefix]).toEqual(['text', 'style.clothing.footwear.', 'text', 'style.footwear.']);
    expect(full.slot).not.toBe(partial.slot);
    expect(fieldSpec(schema, 'style.anything.at.all')?.type).toBe('text');
    expect(fieldSpec(schema, 'other.footwear')).toBeUndefined();
  });

  test('_partial_paths: false indexes full paths only', () => {
    const r = foldDocument({}, { s: { _namespace: true, _partial_paths: false, a: { b: 'x' } } });
    expect(values(r)).toEqual([['s.a.b', 'x']]);
  });

  test('a declared type converts compatible values; another detected type is 400', () => {
    const schema = createSchema({ n: { _namespace: true, _type: 'floating' } });
    expect(values(foldDocument(schema, { n: { a: 1, b: { c: 2.5 } } }))).toEqual([['n.a', 1], ['n.b.c', 2.5], ['n.c', 2.5]]);
    expect(error(() => foldDocument(schema, { n: { a: 'x' } }))).toBe("400 type_mismatch: Type mismatch 'floating' -> 'text'");
    const text = foldDocument({}, { s: { _namespace: true, a: 'x' } }).schema;
    expect(error(() => foldDocument(text, { s: { b: 3 } }))).toBe("400 type_mismatch: Type mismatch 'text' -> 'integer'");
    expect(values(foldDocument(createSchema({ k: { _namespace: true, _type: 'keyword' } }), { k: { a: 'Free Text' } }))).toEqual([['k.a', 'Free Text']]);
  });

  test('a namespace cannot declare fields or be typed object; its options stay immutable', () => {
    expect(error(() => createSchema({ s: { _namespace: true, a: { _type: 'text' } } }))).toMatch(/^400 invalid_body: Namespace 's' cannot declare fields/);
    expect(error(() => createSchema({ s: { _namespace: true, _type: 'object' } }))).toMatch(/^400 invalid_field_option/);
    const schema = foldDocument({}, doc).schema;
    expect(error(() => mergeSchema(schema, { style: { _namespace: false } }))).toMatch(/^400 schema_immutable/);
    expect(describeSchema(schema).style).toMatchObject({ _type: 'text', _namespace: true });
  });

  test('partial paths: the power set of middle segments, bounded', () => {
    expect(namespacePaths(['a'], true)).toEqual([['a']]);
    expect(namespacePaths(['a', 'b', 'c'], true)).toEqual([['a', 'b', 'c'], ['c'], ['a', 'c'], ['b', 'c']]);
    const deep = Array.from({ length: 12 }, (_, i) => `s${i}`);
    expect(namespacePaths(deep, true)).toEqual([deep, ['s11']]);
    expect(namespacePaths(Array.from({ length: 7 }, (_, i) => `s${i}`), true)).toHaveLength(64);
  });
});

describe('UUID-named children', () => {
  const body = { people: { [U1]: { name: 'Ann' }, [U2.toUpperCase()]: { name: 'Bob' } } };

  test('share one <uuid_field> entry; _index_uuid_field uuid (default) indexes under each UUID', () => {
    const r = foldDocument({}, body);
    expect(r.schema).toEqual({ people: { _type: 'object', '<uuid_field>': { _type: 'object', name: { _type: 'text' } } } });
    expect(r.document.stored).toEqual(body);
    expect(values(r)).toEqual([[`people.${U1}.name`, 'Ann'], [`people.${U2}.name`, 'Bob']]);
    expect(fieldSpec(r.schema, `people.${U1}.name`)!.prefix).toBe(`people.${U1}.name.`);
    expect(fieldSpec(r.schema, `people.${U2.toUpperCase()}.name`)!.prefix).toBe(`people.${U2}.name.`);
    expect(foldDocument(r.schema, { people: { [U2]: { name: 'Cy' } } }).changed).toBe(false);
  });

  test('uuid_field indexes under <uuid_field>; both under both', () => {
    const shared = foldDocument({}, { people: { _index_uuid_field: 'uuid_field', ...body.people } });
    expect(values(shared)).toEqual([['people.<uuid_field>.name', 'Ann'], ['people.<uuid_field>.name', 'Bob']]);
    const spec = shared.document.values[0]!.spec;
    expect(fieldTerm(spec, 'x')).toBe('people.<uuid_field>.name.Sx');
    const both = foldDocument({}, { people: { _index_uuid_field: 'both', [U1]: { name: 'Ann' } } });
    expect(values(both)).toEqual([[`people.${U1}.name`, 'Ann'], ['people.<uuid_field>.name', 'Ann']]);
    expect(error(() => foldDocument({}, { p: { _index_uuid_field: 'all' } }))).toMatch(/^400 invalid_field_option/);
  });

  test('a UUID-named field in a _schema body is the shared entry', () => {
    expect(createSchema({ p: { [U1]: { n: { _type: 'integer' } } } })).toEqual({ p: { _type: 'object', '<uuid_field>': { _type: 'object', n: { _type: 'integer' } } } });
  });
});
