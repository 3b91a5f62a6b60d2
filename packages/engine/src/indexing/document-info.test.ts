import { createSchema, defaultSlot, foldDocument, sortableToken, xxh32 } from '@tessera/schema';
import { documentInfo } from './document-info.js';

describe('documentInfo (API.md §5.8)', () => {
  const schema = foldDocument({}, {
    name: 'Hello World', tags: ['a.b', 'c'], age: 150, when: '10:30',
    style: { _namespace: true, clothing: { footwear: 'boots' } },
  }).schema;
  const info = documentInfo(schema, { name: 'Hello World', tags: ['a.b', 'c'], age: 150, when: '10:30', style: { clothing: { footwear: 'boots' } } }, 'doc', 3);

  test('terms are split on dots into nested keys, leaves with wdf and positions', () => {
    const terms = info.terms as Record<string, any>;
    expect(terms.QKdoc).toEqual({ wdf: 1 });
    expect(terms.name.Shello).toEqual({ wdf: 1, pos: [0] });
    expect(terms.name.Sworld).toEqual({ wdf: 1, pos: [1] });
    // `a.b` is a text value: tokens `a` and `b` at 0 and 1; `c` follows the next free position (2) plus the value gap (100).
    expect(terms.tags.Sa).toEqual({ wdf: 1, pos: [0] });
    expect(terms.tags.Sc.pos).toEqual([102]);
    expect(terms.age[`N${sortableToken(150)}`]).toEqual({ wdf: 1 });
    expect(terms.age['<64>'][`N${sortableToken(100)}`]).toEqual({ wdf: 1 });
    expect(terms.when[`T${sortableToken(37800)}`]).toEqual({ wdf: 1 });
    expect(terms.when['<3c>'][`N${sortableToken(37800)}`]).toEqual({ wdf: 1 });
    expect(terms.style.clothing.footwear.Sboots).toEqual({ wdf: 1, pos: [0] });
    expect(terms.style.footwear.Sboots).toEqual({ wdf: 1, pos: [0] });
    expect(Object.keys(terms).some((k) => 'term_freq' in (terms[k] as object))).toBe(false);
  });

  test('values by slot: _id, _version, hashed field slots', () => {
    expect(info.values['0']).toBe('doc');
    expect(info.values['1']).toBe(3);
    expect(info.values[String(defaultSlot('name', 'S'))]).toBe('Hello World');
    expect(info.values[String(defaultSlot('tags', 'S'))]).toEqual(['a.b', 'c']);
    expect(info.values[String(defaultSlot('age', 'N'))]).toBe(150);
    expect(info.values[String(defaultSlot('when', 'T'))]).toBe(37800);
    expect(info.values[String(defaultSlot('style.footwear', 'S'))]).toBe('boots');
  });

  test('the slot of "types." as text is 1680431078, as §5.8 says; _slot wins', () => {
    expect(xxh32('types.', 'S'.charCodeAt(0))).toBe(1680431078);
    const s = createSchema({ types: { _type: 'array/text' }, n: { _type: 'integer', _slot: 42 } });
    const v = documentInfo(s, { types: ['a', 'b'], n: 1 }, 7, 1).values;
    expect(v['1680431078']).toEqual(['a', 'b']);
    expect(v['42']).toBe(1);
    expect(v['0']).toBe(7);
    const t = documentInfo(s, { types: ['a', 'b'] }, 7, 1).terms as Record<string, any>;
    expect(Object.keys(t.types).sort()).toEqual(['Sa', 'Sb']);
  });

  test('a keyword holding a dot keeps its leaf beside the deeper part', () => {
    const s = createSchema({ k: { _type: 'array/keyword' } });
    const t = documentInfo(s, { k: ['x', 'x.y', 'x'] }, 'd', 1).terms as Record<string, any>;
    expect(t.k.Kx.wdf).toBe(2);
    expect(t.k.Kx.y).toEqual({ wdf: 1 });
  });
});
