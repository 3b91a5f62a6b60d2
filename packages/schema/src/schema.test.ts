import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { error } from './fold.fixture.js';
import { createSchema, describeSchema, fieldSpec, mergeSchema, type Schema } from './schema.js';

describe('createSchema', () => {
  test('normalises types, _index and options; children make objects', () => {
    const s = createSchema({
      name: { _type: 'string', _language: 'en', _stem_strategy: 'all' },
      price: { _type: 'float', _index: 'field_all', _accuracy: [1000, 10] },
      'user.age': { _type: 'integer/array' },
      user: { _strict: true },
      '#comment': 'ignored',
    });
    expect(s).toEqual({
      name: { _type: 'text', _language: 'english', _stem_strategy: 'stem_all' },
      price: { _type: 'floating', _index: 'field', _accuracy: [10, 1000] },
      user: { _type: 'object', _strict: true, age: { _type: 'array/integer' } },
    });
    expect(createSchema()).toEqual({});
    expect(createSchema({ _strict: true, _id: { _type: 'keyword' } })).toEqual({ _strict: true, _id: { _type: 'keyword' } });
  });

  test('invalid schemas are 400', () => {
    expect(error(() => createSchema([]))).toBe("400 invalid_body: '_schema' must be an object");
    expect(error(() => createSchema({ a: 1 }))).toBe("400 invalid_body: Schema of field 'a' must be an object of field options");
    expect(error(() => createSchema({ a: { _type: 'blob' } }))).toBe("400 invalid_type: Invalid type 'blob' for field 'a'");
    expect(error(() => createSchema({ a: { _typo: 1 } }))).toBe("400 invalid_reserved_key: Unknown reserved key '_typo'");
    expect(error(() => createSchema({ a: { _type: 'integer', _language: 'en' } })))
      .toBe("400 invalid_field_option: Option '_language' is not valid for field 'a' of type 'integer'");
    expect(error(() => createSchema({ a: { _type: 'text', _accuracy: [10] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ a: { _type: 'date', _accuracy: [10] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ a: { _type: 'integer', _accuracy: ['day'] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ a: { _type: 'text', b: { _type: 'text' } } }))).toBe("400 type_mismatch: Type mismatch 'text' -> 'object'");
    expect(error(() => createSchema({ _type: 'text' }))).toBe("400 type_mismatch: Type mismatch 'object' -> 'text'");
    expect(error(() => createSchema({ a: { _script: 'x' } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ a: { _type: 'keyword', _ignore: ['x'] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ _id: { _type: 'object' } }))).toMatch(/^400 invalid_type/);
  });
});

describe('mergeSchema (API.md §7.1)', () => {
  const base = createSchema({ age: { _type: 'integer', _meta: { v: 1 } }, name: { _type: 'text' } });

  test('new fields added, _meta replaced, _index changeable', () => {
    const merged = mergeSchema(base, { age: { _meta: { v: 2 }, _index: 'terms' }, city: { _type: 'keyword' } });
    expect(merged).toEqual({
      age: { _type: 'integer', _meta: { v: 2 }, _index: 'terms' },
      name: { _type: 'text' },
      city: { _type: 'keyword' },
    });
    expect(base.city).toBeUndefined(); // inputs are not mutated
  });

  test('immutable options must equal their effective value', () => {
    expect(error(() => mergeSchema(base, { age: { _type: 'float' } })))
      .toBe("400 schema_immutable: It is not allowed to change '_type' of field 'age'");
    expect(error(() => mergeSchema(base, { age: { _slot: 100 } }))).toMatch(/^400 schema_immutable: .*'_slot' of field 'age'/);
    expect(error(() => mergeSchema(base, { age: { _prefix: 'x.' } }))).toMatch(/^400 schema_immutable/);
    expect(error(() => mergeSchema(base, { age: { _accuracy: [5] } }))).toMatch(/^400 schema_immutable/);
    expect(error(() => mergeSchema(base, { name: { _language: 'en' } }))).toMatch(/^400 schema_immutable/);
    // Equal to the defaults: accepted.
    const same = mergeSchema(base, { age: { _type: 'integer', _prefix: 'age.', _slot: 1926944900, _accuracy: [100, 1000, 10000, 100000, 1000000, 100000000] } });
    expect(same.age).toMatchObject({ _type: 'integer', _slot: 1926944900 });
    // An untyped field can still be given anything.
    const untyped = createSchema({ tags: { _index: 'field_terms' } });
    expect(mergeSchema(untyped, { tags: { _type: 'keyword', _slot: 77 } }).tags).toEqual({ _index: 'field_terms', _type: 'keyword', _slot: 77 });
    expect(error(() => mergeSchema(createSchema({ _id: { _type: 'integer' } }), { _id: { _type: 'keyword' } }))).toMatch(/^400 schema_immutable/);
  });

  test('returns the same object when nothing changes; GET output merges back unchanged', () => {
    expect(mergeSchema(base, { age: { _type: 'integer' } })).toBe(base);
    const s = createSchema({ a: { _type: 'text', _language: 'fr' }, n: { _type: 'float' }, d: { _type: 'datetime' }, o: { p: { _type: 'keyword' } } });
    const described = describeSchema(s);
    expect(mergeSchema(mergeSchema(s, described), described)).toEqual(mergeSchema(s, described));
    expect(fieldSpec(mergeSchema(s, described), 'a')).toEqual(fieldSpec(s, 'a'));
    expect(fieldSpec(mergeSchema(s, described), 'd')).toEqual(fieldSpec(s, 'd'));
  });

  const fieldOptions = fc.record({
    _type: fc.constantFrom('text', 'keyword', 'integer', 'float', 'boolean', 'datetime'),
    _index: fc.constantFrom('none', 'field', 'global_terms,field_values', 'all'),
    _meta: fc.jsonValue(),
  }, { requiredKeys: [] });
  const schemaBody = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fieldOptions, { maxKeys: 4 });

  test('property: merging is idempotent, and either fails or keeps earlier fields', () => {
    fc.assert(fc.property(schemaBody, schemaBody, (x, y) => {
      const sx = createSchema(x);
      let once: Schema;
      try {
        once = mergeSchema(sx, y);
      } catch (err) {
        expect((err as TesseraError).status).toBe(400);
        return;
      }
      expect(mergeSchema(once, y)).toBe(once);
      for (const [k, v] of Object.entries(sx)) if ((v as Schema)._type !== undefined) expect((once[k] as Schema)._type).toBe((v as Schema)._type);
    }), { numRuns: 500 });
  });
});

describe('fieldSpec', () => {
  test('defaults resolved, inherited _index, slots of API.md §5.8', () => {
    const s = createSchema({
      types: { _type: 'text' },
      name: { _type: 'text', _language: 'es' },
      age: { _type: 'integer' },
      when: { _type: 'date' },
      flag: { _type: 'boolean', _slot: 99 },
      o: { _index: 'global_terms', _prefix: 'O.', p: { _type: 'keyword', _bool_term: true } },
    });
    expect(fieldSpec(s, 'types')).toMatchObject({ path: 'types', type: 'text', typeChar: 'S', prefix: 'types.', slot: 1680431078, accuracy: [] });
    expect(fieldSpec(s, 'name')).toMatchObject({
      slot: 864931271, language: 'spanish', stemLanguage: 'spanish', stemStrategy: 'stem_some', stopStrategy: 'stop_stemmed',
      positions: true, boolTerm: false, weight: 1, index: { fieldTerms: true, fieldValues: true, globalTerms: false, globalValues: false },
    });
    expect(fieldSpec(s, 'age')).toMatchObject({ typeChar: 'N', slot: 1926944900, accuracy: [100, 1000, 10000, 100000, 1000000, 100000000] });
    expect(fieldSpec(s, 'when')).toMatchObject({ typeChar: 'D', accuracy: ['hour', 'day', 'month', 'year', 'decade', 'century'] });
    expect(fieldSpec(s, 'flag')).toMatchObject({ typeChar: 'B', slot: 99 });
    expect(fieldSpec(s, 'o.p')).toMatchObject({
      prefix: 'O.p.', boolTerm: true, index: { fieldTerms: false, fieldValues: false, globalTerms: true, globalValues: false },
    });
    expect(fieldSpec(s, 'o')).toBeUndefined();
    expect(fieldSpec(s, 'missing')).toBeUndefined();
    expect(fieldSpec(s, 'o.missing')).toBeUndefined();
    expect(fieldSpec(s, '')).toBeUndefined();
  });
});

describe('describeSchema (API.md §7.2)', () => {
  test('the example of §7.2', () => {
    const s = createSchema({ _id: { _type: 'integer' }, name: { _type: 'text' }, age: { _type: 'integer' }, o: { _strict: true, x: { _type: 'date', _meta: 1 } } });
    expect(describeSchema(s)).toEqual({
      _type: 'object',
      _id: { _type: 'integer' },
      name: { _type: 'text', _prefix: 'name.', _slot: 864931271, _ngram: false, _cjk_ngram: false, _cjk_words: false },
      age: {
        _type: 'integer', _prefix: 'age.', _slot: 1926944900,
        _accuracy: [100, 1000, 10000, 100000, 1000000, 100000000],
        _accuracy_prefix: ['<64>.', '<3e8>.', '<2710>.', '<186a0>.', '<f4240>.', '<5f5e100>.'],
      },
      o: {
        _type: 'object', _strict: true,
        x: {
          _type: 'date', _prefix: 'o.x.', _slot: expect.any(Number) as unknown,
          _accuracy: ['hour', 'day', 'month', 'year', 'decade', 'century'],
          _accuracy_prefix: ['<e10>.', '<15180>.', '<278d00>.', '<1e13380>.', '<12cc0300>.', '<bbf81e00>.'], _meta: 1,
        },
      },
    });
  });

  test('user options shown as set', () => {
    const s = createSchema({ t: { _type: 'text', _ngram: true, _index: 'global_all' } });
    expect(describeSchema(s).t).toMatchObject({ _ngram: true, _cjk_ngram: false, _index: 'global' });
  });
});
