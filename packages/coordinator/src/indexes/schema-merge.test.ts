import { mergeSchema } from './schema-merge.js';

describe('mergeSchema (API.md §7.1)', () => {
  it('adds new fields, replaces _meta, and is idempotent', () => {
    const a = mergeSchema({}, { name: { _type: 'text' }, _meta: { v: 1 } });
    const b = mergeSchema(a, { age: { _type: 'integer' }, _meta: { v: 2 } });
    expect(b).toEqual({ name: { _type: 'text' }, age: { _type: 'integer' }, _meta: { v: 2 } });
    expect(mergeSchema(b, { name: { _type: 'text' } })).toEqual(b);
  });

  it('refuses changing an immutable option', () => {
    const a = mergeSchema({}, { name: { _type: 'text' } });
    expect(() => mergeSchema(a, { name: { _type: 'keyword' } })).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('nests child fields and refuses non-object field schemas', () => {
    expect(mergeSchema({}, { user: { name: { _type: 'text' } } })).toEqual({ user: { name: { _type: 'text' } } });
    expect(() => mergeSchema({}, { name: 'text' })).toThrow(expect.objectContaining({ status: 400 }));
  });
});
