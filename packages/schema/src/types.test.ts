import { TesseraError } from '@tessera/errors';
import { indexName, parseIndex, parseType, typeName } from './types.js';
import { normaliseLanguage } from './languages.js';
import { normaliseOption } from './options.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof TesseraError ? `${err.status} ${err.code}` : `not a TesseraError: ${String(err)}`;
  }
  return undefined;
}

describe('types', () => {
  test('aliases and array forms normalise to output names', () => {
    expect(typeName(parseType('string', 'x'))).toBe('text');
    expect(typeName(parseType('term', 'x'))).toBe('keyword');
    expect(typeName(parseType('float', 'x'))).toBe('floating');
    expect(typeName(parseType('keyword/array', 'x'))).toBe('array/keyword');
    expect(typeName(parseType('array/float', 'x'))).toBe('array/floating');
    expect(typeName(parseType('ARRAY/Object', 'x'))).toBe('array/object');
  });

  test('unknown, doubled and later types are 400', () => {
    expect(code(() => parseType('nope', 'x'))).toBe('400 invalid_type');
    expect(code(() => parseType('array', 'x'))).toBe('400 invalid_type');
    expect(code(() => parseType('array/array/text', 'x'))).toBe('400 invalid_type');
    expect(code(() => parseType('text/keyword', 'x'))).toBe('400 invalid_type');
    expect(code(() => parseType('foreign', 'x'))).toBe('400 invalid_type');
    expect(code(() => parseType(3, 'x'))).toBe('400 invalid_type');
  });
});

describe('_index', () => {
  const flags = (v: string) => {
    const m = parseIndex(v);
    return m && `${+m.fieldTerms}${+m.fieldValues}${+m.globalTerms}${+m.globalValues}`;
  };

  test('the interface table', () => {
    expect(flags('none')).toBe('0000');
    expect(flags('field_terms')).toBe('1000');
    expect(flags('field_values')).toBe('0100');
    expect(flags('field_all')).toBe('1100');
    expect(flags('global_terms')).toBe('0010');
    expect(flags('global_values')).toBe('0001');
    expect(flags('global_all')).toBe('0011');
    expect(flags('terms')).toBe('1010');
    expect(flags('values')).toBe('0101');
    expect(flags('all')).toBe('1111');
    expect(flags('field')).toBe('1100');
    expect(flags('global')).toBe('0011');
    expect(flags('global_terms,field_values')).toBe('0110');
    expect(parseIndex('fields')).toBeUndefined();
    expect(parseIndex(1)).toBeUndefined();
  });

  test('output names: _all forms as field/global, others as pairs, and they parse back', () => {
    expect(indexName(parseIndex('field_all')!)).toBe('field');
    expect(indexName(parseIndex('global_all')!)).toBe('global');
    expect(indexName(parseIndex('field_terms,global_terms')!)).toBe('terms');
    expect(indexName(parseIndex('global_terms,field_values')!)).toBe('field_values,global_terms');
    for (let bits = 0; bits < 16; bits++) {
      const mode = { fieldTerms: (bits & 8) !== 0, fieldValues: (bits & 4) !== 0, globalTerms: (bits & 2) !== 0, globalValues: (bits & 1) !== 0 };
      expect(parseIndex(indexName(mode))).toEqual(mode);
    }
  });
});

describe('options', () => {
  test('languages by code or English name, any case', () => {
    expect(normaliseLanguage('en')).toBe('english');
    expect(normaliseLanguage('Spanish')).toBe('spanish');
    expect(normaliseLanguage('ga')).toBe('irish');
    expect(normaliseLanguage('klingon')).toBeUndefined();
    expect(normaliseOption('_language', 'de', 'x', 'field')).toBe('german');
    expect(code(() => normaliseOption('_language', 'xx', 'x', 'field'))).toBe('400 invalid_field_option');
  });

  test('strategies and their aliases', () => {
    expect(normaliseOption('_stem_strategy', 'all_z', 'x', 'field')).toBe('stem_all_z');
    expect(normaliseOption('_stem_strategy', 'none', 'x', 'field')).toBe('stem_none');
    expect(normaliseOption('_stop_strategy', 'stemmed', 'x', 'field')).toBe('stop_stemmed');
    expect(normaliseOption('_stop_strategy', 'stop_all', 'x', 'field')).toBe('stop_all');
    expect(code(() => normaliseOption('_stop_strategy', 'some', 'x', 'field'))).toBe('400 invalid_field_option');
  });

  test('accuracy: positive integer steps sorted, or date units in unit order', () => {
    expect(normaliseOption('_accuracy', [1000, 10, 1000], 'x', 'field')).toEqual([10, 1000]);
    expect(normaliseOption('_accuracy', ['year', 'hour'], 'x', 'field')).toEqual(['hour', 'year']);
    expect(normaliseOption('_accuracy', [], 'x', 'field')).toEqual([]);
    // [0] passes here (a geo HTM level) and is refused for numbers by checkOptionsForType (geo.test.ts).
    for (const bad of [[-5], [1.5], ['fortnight'], [1, 'day'], 'day']) {
      expect(code(() => normaliseOption('_accuracy', bad, 'x', 'field'))).toBe('400 invalid_field_option');
    }
  });

  test('other values', () => {
    expect(normaliseOption('_index', 'global_all', 'x', 'field')).toBe('global');
    expect(normaliseOption('_ignore', 'a', 'x', 'field')).toEqual(['a']);
    expect(normaliseOption('_accuracy_prefix', ['<64>.'], 'x', 'field')).toBeUndefined();
    expect(code(() => normaliseOption('_slot', 19, 'x', 'field'))).toBe('400 invalid_field_option');
    expect(code(() => normaliseOption('_store', 'no', 'x', 'field'))).toBe('400 invalid_field_option');
    expect(code(() => normaliseOption('_namespace', 'yes', 'x', 'field'))).toBe('400 invalid_field_option');
    expect(code(() => normaliseOption('_script', 'x', 'x', 'field'))).toBe('400 invalid_field_option');
    expect(code(() => normaliseOption('_prefix', 'p.', '', 'root'))).toBe('400 invalid_field_option');
    expect(code(() => normaliseOption('_frobnicate', 1, 'x', 'field'))).toBe('400 invalid_reserved_key');
  });
});
