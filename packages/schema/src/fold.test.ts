import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { foldDocument, type FoldResult, indexedValues } from './fold.js';
import { error, values } from './fold.fixture.js';
import { createSchema, fieldSpec, type Schema } from './schema.js';


describe('foldDocument: dynamic fields', () => {
  test('detects types of new fields and returns stored form and values', () => {
    const r = foldDocument({}, {
      _id: 'doc', _version: 3, '#note': 'comment', '': 'also a comment',
      name: 'John', age: 42, score: 1.5, ok: true, day: '2015-01-01', at: '2015/01/01 12:10:30', yes: 'true',
      num: '42', tags: ['a', null, ['b']], user: { city: 'Paris' }, none: null, empty: [],
    });
    expect(r.changed).toBe(true);
    expect(r.schema).toEqual({
      name: { _type: 'text' }, age: { _type: 'integer' }, score: { _type: 'floating' }, ok: { _type: 'boolean' },
      day: { _type: 'date' }, at: { _type: 'datetime' }, yes: { _type: 'boolean' }, num: { _type: 'text' },
      tags: { _type: 'array/text' }, user: { _type: 'object', city: { _type: 'text' } },
    });
    expect(r.document.stored).toEqual({
      name: 'John', age: 42, score: 1.5, ok: true, day: '2015-01-01T00:00:00', at: '2015-01-01T12:10:30', yes: 'true',
      num: '42', tags: ['a', null, ['b']], user: { city: 'Paris' }, none: null, empty: [],
    });
    expect(values(r)).toEqual([
      ['name', 'John'], ['age', 42], ['score', 1.5], ['ok', true], ['day', 1420070400], ['at', 1420114230], ['yes', true],
      ['num', '42'], ['tags', 'a'], ['tags', 'b'], ['user.city', 'Paris'],
    ]);
    expect(r.document.values[1]!.spec).toEqual(fieldSpec(r.schema, 'age'));
  });

  test('a known schema is returned as is, and later values are converted', () => {
    const schema = createSchema({ n: { _type: 'integer' }, d: { _type: 'datetime' }, k: { _type: 'keyword' }, b: { _type: 'boolean' } });
    const r = foldDocument(schema, { n: '7', d: '2015-01-01', k: 5, b: 't' });
    expect(r.changed).toBe(false);
    expect(r.schema).toBe(schema);
    expect(r.document.stored).toEqual({ n: '7', d: '2015-01-01T00:00:00', k: 5, b: 't' });
    expect(values(r)).toEqual([['n', 7], ['d', 1420070400], ['k', '5'], ['b', true]]);
  });

  test('epoch seconds into a date field', () => {
    const r = foldDocument(createSchema({ d: { _type: 'date' } }), { d: 1420070400.001 });
    expect(r.document.stored).toEqual({ d: '2015-01-01T00:00:00.001' });
  });

  test('arrays of objects', () => {
    const r = foldDocument({}, { people: [{ name: 'a', age: 1 }, { name: 'b' }] });
    expect(r.schema).toEqual({ people: { _type: 'array/object', name: { _type: 'text' }, age: { _type: 'integer' } } });
    expect(values(r)).toEqual([['people.name', 'a'], ['people.age', 1], ['people.name', 'b']]);
    expect(error(() => foldDocument({}, { people: [{ name: 'a' }, 3] }))).toBe("400 type_mismatch: Type mismatch 'object' -> 'integer'");
  });

  test('an array field takes single values and a single-valued field takes arrays (the type never changes)', () => {
    const schema = createSchema({ tags: { _type: 'array/keyword' }, one: { _type: 'integer' } });
    const r = foldDocument(schema, { tags: 'A', one: [1, ['2']] });
    expect(r.changed).toBe(false);
    expect(values(r)).toEqual([['tags', 'A'], ['one', 1], ['one', 2]]);
    expect(error(() => foldDocument(schema, { tags: ['x'.repeat(300)] }))).toBe('400 keyword_too_long: Keyword too long');
  });

  test('null and empty arrays fix nothing', () => {
    const r = foldDocument({}, { a: null, b: [], c: [null] });
    expect(r.changed).toBe(false);
    expect(r.document.stored).toEqual({ a: null, b: [], c: [null] });
    expect(r.document.values).toEqual([]);
  });
});

/** `value` and everything under it, frozen: changing any of it throws (modules are strict). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('foldDocument: a grown schema is a new value sharing what did not change', () => {
  test('the schema passed in is left as it is; only the nodes on the new field\'s path are new', () => {
    const schema = deepFreeze(createSchema({ a: { _type: 'text' }, user: { name: { _type: 'text' }, city: { _type: 'keyword' } }, n: { _type: 'integer' } }));
    const r = foldDocument(schema, { a: 'x', user: { zip: 'z1' } });
    expect(r.changed).toBe(true);
    expect(r.schema).not.toBe(schema);
    expect(r.schema.user).not.toBe(schema.user);
    expect(r.schema.user).toEqual({ _type: 'object', name: { _type: 'text' }, city: { _type: 'keyword' }, zip: { _type: 'text' } });
    // Untouched fields are the very nodes of the schema passed in.
    expect(r.schema.a).toBe(schema.a);
    expect(r.schema.n).toBe(schema.n);
    expect((r.schema.user as Record<string, unknown>).name).toBe((schema.user as Record<string, unknown>).name);
    expect(schema).toEqual({ a: { _type: 'text' }, user: { _type: 'object', name: { _type: 'text' }, city: { _type: 'keyword' } }, n: { _type: 'integer' } });
    // A document bringing several fields under one object copies that object once.
    const two = foldDocument(r.schema, { user: { p: 'q', r: 's' }, b: { c: 1 } });
    expect(two.schema.user).toEqual({ ...(r.schema.user as object), p: { _type: 'text' }, r: { _type: 'text' } });
    expect(two.schema.b).toEqual({ _type: 'object', c: { _type: 'integer' } });
    expect(two.schema.a).toBe(schema.a);
  });

  test('versions with the same root options fold a shared field alike; one node under two names is resolved per name', () => {
    const v1 = createSchema({ a: { _type: 'keyword' } });
    const v2 = foldDocument(v1, { b: 'x' }).schema;
    const first = foldDocument(v1, { a: 'k' }).document.values[0]!;
    const second = foldDocument(v2, { a: 'k' }).document.values[0]!;
    expect(second).toEqual(first);
    expect(second.spec).toEqual(fieldSpec(v2, 'a'));
    // Resolutions are remembered by context and node: a node object met under another name is not taken for the first.
    const node = { _type: 'keyword' };
    const shared = { p: node, q: node };
    const r = foldDocument(shared, { p: 'x', q: 'y' });
    expect(r.document.values.map((v) => [v.path, v.spec.prefix])).toEqual([['p', fieldSpec(shared, 'p')!.prefix], ['q', fieldSpec(shared, 'q')!.prefix]]);
    expect(fieldSpec(shared, 'p')!.prefix).not.toBe(fieldSpec(shared, 'q')!.prefix);
  });
});

describe('foldDocument: inline options (field-option objects)', () => {
  test('recorded for new fields, replaced by _value in the stored form', () => {
    const r = foldDocument({}, {
      title: { _type: 'text', _language: 'en', _value: 'Hello' },
      code: { _type: 'keyword', _bool_term: true, _value: 'AbC' },
      list: [{ _value: 1, _type: 'float' }, 2],
      when: { _date: { _year: 2015, _month: 1, _day: 1 } },
    });
    expect(r.schema).toEqual({
      title: { _type: 'text', _language: 'english' },
      code: { _type: 'keyword', _bool_term: true },
      list: { _type: 'floating' },
      when: { _type: 'date' },
    });
    expect(r.document.stored).toEqual({ title: 'Hello', code: 'AbC', list: [1, 2], when: '2015-01-01T00:00:00' });
    expect(values(r)).toEqual([['title', 'Hello'], ['code', 'AbC'], ['list', 1], ['list', 2], ['when', 1420070400]]);
    expect(r.document.values[0]!.spec.language).toBe('english');
  });

  test('on existing fields: immutables must match, changeable options apply to this document only', () => {
    const schema = createSchema({ t: { _type: 'text' } });
    expect(error(() => foldDocument(schema, { t: { _type: 'integer', _value: 1 } }))).toBe("400 type_mismatch: Type mismatch 'text' -> 'integer'");
    expect(error(() => foldDocument(schema, { t: { _language: 'en', _value: 'x' } })))
      .toBe("400 schema_immutable: It is not allowed to change '_language' of field 't'");
    const r = foldDocument(schema, { t: { _index: 'none', _value: 'x' }, u: { _prefix: 'u.', _value: 'y' } });
    expect(r.document.values.map((v) => v.path)).toEqual(['u']);
    expect(r.schema).toEqual({ t: { _type: 'text' }, u: { _type: 'text', _prefix: 'u.' } });
    expect(foldDocument(schema, { t: { _prefix: 't.', _value: 'x' } }).changed).toBe(false);
  });

  test('invalid inline options and keys are 400', () => {
    expect(error(() => foldDocument({}, { a: { _value: 1, _bogus: 2 } }))).toBe("400 invalid_reserved_key: Unknown reserved key '_bogus'");
    expect(error(() => foldDocument({}, { _bogus: 1 }))).toBe("400 invalid_reserved_key: Unknown reserved key '_bogus'");
    expect(error(() => foldDocument({}, { a: { _value: 1, b: 2 } }))).toMatch(/^400 invalid_body/);
    expect(error(() => foldDocument({}, { a: { _type: 'integer', _language: 'en', _value: 1 } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => foldDocument({}, { a: [{ _value: 1, _type: 'integer' }, { _value: 2, _type: 'float' }] }))).toMatch(/^400 invalid_field_option: Conflicting/);
    expect(error(() => foldDocument({}, [1]))).toMatch(/^400 invalid_body/);
    expect(error(() => foldDocument({}, { 'a.b': 1 }))).toMatch(/^400 invalid_body: Invalid field name 'a.b'/);
    expect(error(() => foldDocument({}, JSON.parse('{"__proto__": {"x": 1}}')))).toMatch(/^400 invalid_reserved_key/);
  });
});

describe('foldDocument: type errors are all or nothing', () => {
  test('a value of the wrong type is a 400 and the schema is untouched', () => {
    const schema = createSchema({ age: { _type: 'integer' } });
    const before = structuredClone(schema);
    expect(error(() => foldDocument(schema, { fresh: 'x', age: 'abc' }))).toBe("400 type_mismatch: Type mismatch 'integer' -> 'text'");
    expect(schema).toEqual(before);
    expect(error(() => foldDocument(schema, { age: { a: 1 } }))).toBe("400 type_mismatch: Type mismatch 'integer' -> 'object'");
    expect(error(() => foldDocument({}, { o: { a: 1 }, p: [1, 'x'] }))).toBe("400 type_mismatch: Type mismatch 'integer' -> 'text'");
    const obj = createSchema({ o: { a: { _type: 'text' } } });
    expect(error(() => foldDocument(obj, { o: 'flat' }))).toBe("400 type_mismatch: Type mismatch 'object' -> 'text'");
    expect(error(() => foldDocument(createSchema({ p: { _type: 'positive' } }), { p: -1 }))).toMatch(/^400 invalid_value/);
    expect(error(() => foldDocument(createSchema({ d: { _type: 'date' } }), { d: 'nope' }))).toBe("400 invalid_date: Invalid date 'nope'");
  });
});

describe('foldDocument: _store, _recurse, _dynamic, _strict, _ignore, detection flags', () => {
  test('_store: false drops the field (inherited, not undone below) but still indexes it', () => {
    const r = foldDocument({}, { secret: { _store: false, _value: 'pw' }, o: { _store: false, a: 1, b: { _store: true, c: 2 } }, keep: 1 });
    expect(r.document.stored).toEqual({ keep: 1 });
    expect(values(r)).toEqual([['secret', 'pw'], ['o.a', 1], ['o.b.c', 2], ['keep', 1]]);
    const schema = createSchema({ hidden: { _type: 'text', _store: false } });
    expect(foldDocument(schema, { hidden: 'x', shown: 'y' }).document.stored).toEqual({ shown: 'y' });
  });

  test('_recurse: false keeps the subtree verbatim and unindexed', () => {
    const script = { _recurse: false, body: 'return 1', nested: { _type: 'weird', x: [1, { y: 2 }] } };
    const r = foldDocument({}, { s: script, n: 1 });
    expect(r.document.stored).toEqual({ s: { body: 'return 1', nested: { _type: 'weird', x: [1, { y: 2 }] } }, n: 1 });
    expect(values(r)).toEqual([['n', 1]]);
    expect(r.schema).toEqual({ s: { _recurse: false }, n: { _type: 'integer' } });
    const root = foldDocument({}, { _recurse: false, _id: 1, a: { _anything: 1 } });
    expect(root.document.stored).toEqual({ a: { _anything: 1 } });
    expect(root.document.values).toEqual([]);
  });

  test('_dynamic: false keeps unknown children unindexed and out of the schema', () => {
    const schema = createSchema({ o: { _dynamic: false, known: { _type: 'integer' } } });
    const r = foldDocument(schema, { o: { known: '5', unknown: { deep: { _value: 'x', _type: 'text' } }, list: [1] }, top: 'yes' });
    expect(r.document.stored).toEqual({ o: { known: '5', unknown: { deep: 'x' }, list: [1] }, top: 'yes' });
    expect(values(r)).toEqual([['o.known', 5], ['top', 'yes']]);
    expect(r.schema).toEqual({ o: { _type: 'object', _dynamic: false, known: { _type: 'integer' } }, top: { _type: 'text' } });
  });

  test('_dynamic: false stores unknown values and objects as they are, under the parent\'s _store, after the usual checks', () => {
    const schema = createSchema({ _dynamic: false, k: { _type: 'keyword' }, hidden: { _type: 'object', _store: false } });
    const r = foldDocument(schema, {
      k: 'a', n: 1, s: 'text', list: ['x', { y: 1 }], obj: { a: { b: [1, 2] } }, date: { _date: '2020-01-01' }, wrapped: { _value: 3 },
      hidden: { other: 'gone' },
    });
    expect(r.document.stored).toEqual({ k: 'a', n: 1, s: 'text', list: ['x', { y: 1 }], obj: { a: { b: [1, 2] } }, date: { _date: '2020-01-01' }, wrapped: 3 });
    expect(values(r)).toEqual([['k', 'a']]);
    expect(r.changed).toBe(false);
    expect(error(() => foldDocument(schema, { u: { _value: 1, x: 2 } }))).toBe("400 invalid_body: Field 'u' has both '_value' and fields");
    expect(error(() => foldDocument(schema, { u: { _bogus: 1 } }))).toMatch(/^400 /);
  });

  test('_dynamic: false: unknown scalars and scalar lists are stored as sent; names are still checked, known fields still typed', () => {
    const schema = createSchema({ _dynamic: false, n: { _type: 'integer' }, o: { _type: 'object', _store: false, _dynamic: false } });
    const list = ['a', 1, null, true];
    const r = foldDocument(schema, { n: '7', list, empty: [], nil: null, f: 1.5, o: { x: [1, 2] } });
    expect(r.document.stored).toEqual({ n: '7', list: ['a', 1, null, true], empty: [], nil: null, f: 1.5 });
    expect(r.document.stored.list).toBe(list);
    expect(values(r)).toEqual([['n', 7]]);
    expect(r.changed).toBe(false);
    expect(error(() => foldDocument(schema, { 'a.b': [1] }))).toMatch(/^400 invalid_body: Invalid field name 'a.b'/);
    expect(error(() => foldDocument(schema, { n: 'x' }))).toMatch(/^400 /);
    // A list holding an option object takes the general path: the object's options are read, not stored.
    expect(foldDocument(schema, { list: [1, { _value: 2 }] }).document.stored).toEqual({ list: [1, 2] });
  });

  test('_strict (schema, inline or server option): a new field without _type is 412', () => {
    expect(error(() => foldDocument(createSchema({ _strict: true }), { x: 1 }))).toBe("412 strict_missing_type: Type of field 'x' is missing");
    expect(error(() => foldDocument({}, { x: 1 }, { strict: true }))).toBe("412 strict_missing_type: Type of field 'x' is missing");
    expect(error(() => foldDocument({}, { o: { _strict: true, y: 'a' } }))).toBe("412 strict_missing_type: Type of field 'o.y' is missing");
    expect(error(() => foldDocument({}, { o: { y: 1 } }, { strict: true }))).toBe("412 strict_missing_type: Type of field 'o' is missing");
    const ok = foldDocument({}, { x: { _type: 'integer', _value: 1 }, n: null }, { strict: true });
    expect(ok.schema).toEqual({ x: { _type: 'integer' } });
    expect(foldDocument(createSchema({ x: { _type: 'text' } }), { x: 'a' }, { strict: true }).changed).toBe(false);
  });

  test('_ignore keeps named children unindexed', () => {
    const r = foldDocument({}, { o: { _ignore: ['raw'], raw: { a: 1 }, used: 2 } });
    expect(r.document.stored).toEqual({ o: { raw: { a: 1 }, used: 2 } });
    expect(values(r)).toEqual([['o.used', 2]]);
    expect(r.schema).toEqual({ o: { _type: 'object', _ignore: ['raw'], used: { _type: 'integer' } } });
  });

  test('detection flags are inherited; text detection off gives keyword', () => {
    const r = foldDocument({}, { o: { _text_detection: false, _date_detection: false, s: 'Word', d: '2015-01-01' }, t: 'x' });
    expect(r.schema).toEqual({
      o: { _type: 'object', _text_detection: false, _date_detection: false, s: { _type: 'keyword' }, d: { _type: 'datetime' } },
      t: { _type: 'text' },
    });
    expect(error(() => foldDocument({}, { o: { _numeric_detection: false, n: 1 } }))).toMatch(/^400 type_undetectable/);
  });

  test('geo values are kept as sent and indexed as canonical EWKT', () => {
    const point = { _point: { _latitude: 1, _longitude: 2 } };
    const r = foldDocument({}, { loc: { ...point, _type: 'geo' }, many: [point] });
    expect(r.document.stored).toEqual({ loc: point, many: [point] });
    expect(r.schema).toEqual({ loc: { _type: 'geo' }, many: { _type: 'array/geo' } });
    expect(values(r)).toEqual([['loc', 'POINT(2 1)'], ['many', 'POINT(2 1)']]);
  });

  test('_index on an object is inherited by its fields', () => {
    const r = foldDocument({}, { o: { _index: 'none', a: 1 }, b: 2 });
    expect(values(r)).toEqual([['b', 2]]);
    expect(fieldSpec(r.schema, 'o.a')?.index.fieldTerms).toBe(false);
  });
});

describe('foldDocument properties', () => {
  const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');
  const scalar = fc.oneof(fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(),
    fc.constantFrom('2015-01-01', '2001-05-24T10:41:25.123+02:00', 'true', null, '10:30', '23:59:59.5+01:00', '-01:30', '+36:00',
      '5759B016-10C0-4526-A981-47D6D19F6FB4', 86399.9999999));
  const doc = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, scalar, fc.array(scalar, { maxLength: 3 }), tie('object')),
    object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  })).object as fc.Arbitrary<Record<string, unknown>>;

  test('property: stored form is idempotent and refolding changes nothing; failures leave the schema untouched', () => {
    fc.assert(fc.property(doc, doc, (d1, d2) => {
      let schema: Schema = {};
      for (const d of [d1, d2]) {
        const before = structuredClone(schema);
        // A fold never changes the schema it is given (a change would throw on the frozen tree).
        deepFreeze(schema);
        let r: FoldResult;
        try {
          r = foldDocument(schema, d);
        } catch (err) {
          expect(err).toBeInstanceOf(TesseraError);
          expect((err as TesseraError).status).toBe(400);
          expect(schema).toEqual(before);
          continue;
        }
        const again = foldDocument(r.schema, r.document.stored);
        expect(again.changed).toBe(false);
        expect(again.document.stored).toEqual(r.document.stored);
        expect(again.document.values.map((v) => [v.path, v.value])).toEqual(r.document.values.map((v) => [v.path, v.value]));
        expect(JSON.parse(JSON.stringify(r.schema))).toEqual(r.schema);
        schema = r.schema;
      }
    }), { numRuns: 500 });
  });
});

describe('indexedValues', () => {
  const schema = createSchema({ t: { _type: 'text' }, n: { _type: 'integer' }, secret: { _type: 'keyword', _store: false } });

  test('a stored form a fold returned gives that fold\'s values without folding again; anything else is folded', () => {
    const folded = foldDocument(schema, { t: 'hello world', n: '7' });
    const known = indexedValues(schema, folded.document.stored);
    expect(known.values).toBe(folded.document.values);
    expect(known.changed).toBe(false);
    // An equal copy (what a remote shard decodes) is folded, to the same values.
    const copy = indexedValues(schema, structuredClone(folded.document.stored));
    expect(copy.values).not.toBe(folded.document.values);
    expect(copy.values.map((v) => [v.path, v.value])).toEqual(folded.document.values.map((v) => [v.path, v.value]));
    // Another schema object: folded with it.
    const grown = createSchema({ t: { _type: 'text' }, n: { _type: 'integer' }, secret: { _type: 'keyword', _store: false }, x: { _type: 'text' } });
    expect(indexedValues(grown, folded.document.stored).values).not.toBe(folded.document.values);
  });

  test('a remembered stored form does not keep the schema it was folded with alive', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let grown: Schema | undefined = createSchema({ t: { _type: 'text' }, x: { _type: 'text' } });
    const stored = foldDocument(grown, { t: 'kept' }).document.stored;
    const gone = new WeakRef(grown);
    grown = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(gone.deref()).toBeUndefined();
    expect(stored).toEqual({ t: 'kept' });
  });

  test('a stored form without its _store: false fields is not remembered; the form kept for indexing is', () => {
    const raw = { t: 'a', secret: 'k1' };
    const stored = foldDocument(schema, raw);
    expect(stored.document.stored).toEqual({ t: 'a' });
    expect(indexedValues(schema, stored.document.stored).values.map((v) => v.path)).toEqual(['t']);
    const indexed = foldDocument(schema, raw, { keepUnstored: true });
    const known = indexedValues(schema, indexed.document.stored);
    expect(known.values).toBe(indexed.document.values);
    expect(known.values.map((v) => v.path)).toEqual(['t', 'secret']);
  });

  test('a fold that grew the schema is not remembered (the shard indexes with the grown schema)', () => {
    const folded = foldDocument(schema, { t: 'a', fresh: 1 });
    expect(folded.changed).toBe(true);
    const again = indexedValues(folded.schema, folded.document.stored);
    expect(again.values).not.toBe(folded.document.values);
    expect(again.values.map((v) => v.path)).toEqual(['t', 'fresh']);
  });
});
