import { accuracyTerms, createSchema, fieldSpec, type Schema, sortableToken } from '@tessera/schema';
import { termsOfDocument } from '../segments/indexable-document.fixture.js';
import type { IndexableDocument } from '../segments/write-buffer.js';
import { documentTerms, globalValueSlot, ID_SLOT, idTerm, POSITION_GAP, VERSION_SLOT } from './document-terms.js';

function termMap(doc: IndexableDocument): Map<string, { positions: number[] | null; freq: number }> {
  expect(doc.positions.length).toBe(doc.terms.length);
  return termsOfDocument(doc);
}

const slotValues = <T>(list: readonly { slot: number; values: readonly T[] }[] | undefined, slot: number): T[] | undefined =>
  list?.find((e) => e.slot === slot)?.values.slice();

const MODES = [
  ['none', false, false, false, false],
  ['field_terms', true, false, false, false],
  ['field_values', false, true, false, false],
  ['field_all', true, true, false, false],
  ['global_terms', false, false, true, false],
  ['global_values', false, false, false, true],
  ['global_all', false, false, true, true],
  ['terms', true, false, true, false],
  ['values', false, true, false, true],
  ['all', true, true, true, true],
  ['global_terms,field_values', false, true, true, false],
] as const;

describe('documentTerms: _index modes', () => {
  // type, value sent, field term token, value kind and value in the column.
  const CASES = [
    ['keyword', 'Games', 'Kgames', 'strings', 'Games'],
    ['text', 'Hello', 'Shello', 'strings', 'Hello'],
    ['boolean', true, 'Bt', 'numbers', 1],
    ['integer', 150, `N${sortableToken(150)}`, 'numbers', 150],
    ['floating', -2.5, `N${sortableToken(-2.5)}`, 'numbers', -2.5],
    ['positive', 7, `N${sortableToken(7)}`, 'numbers', 7],
    ['date', '2015-01-01', `D${sortableToken(1420070400)}`, 'numbers', 1420070400],
    ['datetime', '2015-01-01T10:00:00', `D${sortableToken(1420106400)}`, 'numbers', 1420106400],
    ['time', '10:30', `T${sortableToken(37800)}`, 'numbers', 37800],
    ['timedelta', '-00:01', `T${sortableToken(-60)}`, 'numbers', -60],
    ['uuid', '5759B016-10C0-4526-A981-47D6D19F6FB4', 'U5759b016-10c0-4526-a981-47d6d19f6fb4', 'strings', '5759b016-10c0-4526-a981-47d6d19f6fb4'],
  ] as const;
  for (const [type, value, token, kind, column] of CASES) {
    for (const [mode, fieldTerms, fieldValues, globalTerms, globalValues] of MODES) {
      test(`${type} with _index ${mode}`, () => {
        const schema = createSchema({ f: { _type: type, _index: mode } });
        const spec = fieldSpec(schema, 'f')!;
        const doc = documentTerms(schema, { f: value }, 'x');
        const terms = termMap(doc);
        expect(terms.has(`f.${token}`)).toBe(fieldTerms);
        expect(terms.has(token)).toBe(globalTerms);
        const list = kind === 'strings' ? doc.strings : doc.numbers;
        const other = kind === 'strings' ? doc.numbers : doc.strings;
        expect(slotValues<unknown>(list, spec.slot)).toEqual(fieldValues ? [column] : undefined);
        expect(slotValues<unknown>(list, globalValueSlot(spec.typeChar))).toEqual(globalValues ? [column] : undefined);
        expect(slotValues<unknown>(other, spec.slot)).toBeUndefined();
        // Accuracy terms exactly with terms, for numbers and dates.
        if (kind === 'numbers' && type !== 'boolean') {
          const n = column as number;
          for (const t of accuracyTerms(spec, n)) expect(terms.has(t)).toBe(fieldTerms);
          for (const t of accuracyTerms(spec, n, '')) expect(terms.has(t)).toBe(globalTerms);
          expect(accuracyTerms(spec, n).length).toBe(type === 'time' || type === 'timedelta' ? 2 : 6);
        }
        // Only the ID term otherwise, and nothing positional outside text.
        const expected = 1 + (fieldTerms ? 1 : 0) + (globalTerms ? 1 : 0)
          + (kind === 'numbers' && type !== 'boolean' ? (type === 'time' || type === 'timedelta' ? 2 : 6) * ((fieldTerms ? 1 : 0) + (globalTerms ? 1 : 0)) : 0);
        expect(terms.size).toBe(expected);
        for (const [, t] of terms) if (type !== 'text') expect(t.positions).toBeNull();
      });
    }
  }
});

describe('documentTerms: text', () => {
  test('positions, stems under Z, stop words, field length', () => {
    const schema = createSchema({ title: { _type: 'text', _language: 'en', _index: 'all' } });
    const doc = documentTerms(schema, { title: 'The running dogs ran' }, 'a');
    const terms = termMap(doc);
    expect(terms.get('title.Sthe')?.positions).toEqual([0]);
    expect(terms.get('title.Srunning')?.positions).toEqual([1]);
    expect(terms.get('title.Sdogs')?.positions).toEqual([2]);
    expect(terms.get('title.Sran')?.positions).toEqual([3]);
    expect(terms.get('Ztitle.Srun')).toEqual({ positions: null, freq: 1 });
    expect(terms.get('Ztitle.Sdog')).toEqual({ positions: null, freq: 1 });
    expect(terms.has('Ztitle.Sthe')).toBe(false); // stop_stemmed: no stem for stop words
    expect(terms.get('Srunning')?.positions).toEqual([1]);
    expect(terms.get('ZSrun')).toEqual({ positions: null, freq: 1 });
    expect(doc.fieldLengths).toEqual(expect.arrayContaining([{ field: 'title.', length: 4 }, { field: '', length: 4 }]));
  });

  test('without a language: no stems; lower-cased tokens', () => {
    const schema = createSchema({ t: { _type: 'text' } });
    const terms = termMap(documentTerms(schema, { t: 'Running RUNNING' }, 'a'));
    expect(terms.get('t.Srunning')?.positions).toEqual([0, 1]);
    expect([...terms.keys()].some((k) => k.startsWith('Z'))).toBe(false);
  });

  test('stem_all indexes stems as plain positional terms; stem_all_z under Z', () => {
    const all = termMap(documentTerms(createSchema({ t: { _type: 'text', _language: 'en', _stem_strategy: 'stem_all' } }), { t: 'running dogs' }, 'a'));
    expect(all.get('t.Srun')?.positions).toEqual([0]);
    expect(all.get('t.Sdog')?.positions).toEqual([1]);
    expect(all.has('t.Srunning')).toBe(false);
    const z = termMap(documentTerms(createSchema({ t: { _type: 'text', _language: 'en', _stem_strategy: 'stem_all_z' } }), { t: 'running dogs' }, 'a'));
    expect(z.get('Zt.Srun')?.positions).toEqual([0]);
    expect(z.has('t.Srunning')).toBe(false);
  });

  test('stop_all drops stop words without using a position', () => {
    const terms = termMap(documentTerms(createSchema({ t: { _type: 'text', _language: 'en', _stop_strategy: 'stop_all' } }), { t: 'the dog' }, 'a'));
    expect(terms.has('t.Sthe')).toBe(false);
    expect(terms.get('t.Sdog')?.positions).toEqual([0]);
  });

  test('array elements continue positions with a gap; length counts tokens', () => {
    const schema = createSchema({ t: { _type: 'array/text' } });
    const doc = documentTerms(schema, { t: ['a b', 'c a'] }, 'a');
    const terms = termMap(doc);
    expect(terms.get('t.Sa')?.positions).toEqual([0, 2 + POSITION_GAP + 1]);
    expect(terms.get('t.Sc')?.positions).toEqual([2 + POSITION_GAP]);
    expect(doc.fieldLengths).toEqual([{ field: 't.', length: 4 }]);
  });

  test('_positions: false keeps frequencies only', () => {
    const terms = termMap(documentTerms(createSchema({ t: { _type: 'text', _positions: false } }), { t: 'a b a' }, 'a'));
    expect(terms.get('t.Sa')).toEqual({ positions: null, freq: 2 });
  });
});

describe('documentTerms: keywords, values, IDs, schema', () => {
  test('keyword arrays: one term per element, lower-cased unless _bool_term', () => {
    const schema = createSchema({ k: { _type: 'array/keyword' }, b: { _type: 'keyword', _bool_term: true } });
    const doc = documentTerms(schema, { k: ['Net', 'net', 'Libs'], b: 'MiXed' }, 'a');
    const terms = termMap(doc);
    expect(terms.get('k.Knet')).toEqual({ positions: null, freq: 2 });
    expect(terms.has('k.Klibs')).toBe(true);
    expect(terms.has('b.KMiXed')).toBe(true);
    expect(slotValues(doc.strings, fieldSpec(schema, 'k')!.slot)).toEqual(['Net', 'net', 'Libs']);
  });

  test('the ID term and _id/_version slots', () => {
    const schema: Schema = createSchema({});
    const doc = documentTerms(schema, {}, 'Doc', { version: 3 });
    expect(termMap(doc).has('QKDoc')).toBe(true);
    expect(idTerm(schema, 'Doc')).toBe('QKDoc');
    expect(slotValues(doc.strings, ID_SLOT)).toEqual(['Doc']);
    expect(slotValues(doc.numbers, VERSION_SLOT)).toEqual([3]);
    const numeric = documentTerms(schema, {}, 42);
    expect(termMap(numeric).has(`QN${sortableToken(42)}`)).toBe(true);
    expect(slotValues(numeric.numbers, ID_SLOT)).toEqual([42]);
  });

  test('fields the schema lacks are not indexed (the schema is not grown here)', () => {
    const schema = createSchema({ a: { _type: 'keyword' } });
    const terms = termMap(documentTerms(schema, { a: 'x', b: 'y', c: 5 }, 'id'));
    expect(terms.has('a.Kx')).toBe(true);
    expect([...terms.keys()].filter((t) => t.startsWith('b.') || t.startsWith('c.'))).toEqual([]);
    expect(fieldSpec(schema, 'b')).toBeUndefined();
  });

  test('a value that does not fit its field throws the schema error', () => {
    const schema = createSchema({ n: { _type: 'integer' } });
    expect(() => documentTerms(schema, { n: 'not a number' }, 'id')).toThrow();
  });
});
