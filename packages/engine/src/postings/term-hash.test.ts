import fc from 'fast-check';
import { TermHash } from './term-hash.js';

describe('TermHash', () => {
  test('gives each distinct term one dense id, in first-seen order, like a Map', () => {
    const term = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('', 'S', 'text.Sa', 'ZSa'));
    fc.assert(fc.property(fc.array(term, { maxLength: 3000 }), fc.array(term, { maxLength: 50 }), (terms, probes) => {
      const hash = new TermHash();
      const model = new Map<string, number>();
      for (const t of terms) {
        const expected = model.get(t);
        const id = hash.idOf(t);
        expect(hash.added).toBe(expected === undefined);
        if (expected === undefined) model.set(t, id);
        expect(id).toBe(expected ?? model.size - 1);
      }
      expect(hash.size).toBe(model.size);
      expect(hash.names).toEqual([...model.keys()]);
      for (const t of [...terms, ...probes]) expect(hash.find(t)).toBe(model.get(t) ?? -1);
    }));
  });

  test('grows past many rehashes and keeps every id', () => {
    const hash = new TermHash();
    for (let i = 0; i < 100_000; i++) expect(hash.idOf(`t${i}`)).toBe(i);
    for (let i = 0; i < 100_000; i += 997) expect(hash.find(`t${i}`)).toBe(i);
    expect(hash.find('t100000')).toBe(-1);
  });
});
