import { TesseraError } from '@tessera/errors';
import { checkDocumentLimits, DOCUMENT_LIMITS_DEFAULTS } from './document-limits.js';

function codeOf(body: Record<string, unknown>, limits = DOCUMENT_LIMITS_DEFAULTS): string | undefined {
  try {
    checkDocumentLimits(body, limits);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    expect((err as TesseraError).status).toBe(400);
    return (err as TesseraError).code;
  }
}

it('defaults pass a large real document (the Debian corpus maxima, with room)', () => {
  expect(codeOf({
    package: 'x', depends: Array.from({ length: 332 }, (_, i) => `lib${i}`),
    description: 'word '.repeat(16_000), maintainer: { name: 'n', email: 'e' },
  })).toBeUndefined();
});

it('values per field: array items and nested arrays, `_value` counted for its field', () => {
  const max = DOCUMENT_LIMITS_DEFAULTS.valuesPerFieldMax;
  expect(codeOf({ a: new Array(max).fill(1) })).toBeUndefined();
  expect(codeOf({ a: new Array(max + 1).fill(1) })).toBe('too_many_values');
  expect(codeOf({ a: [new Array(max).fill(1), [1]] })).toBe('too_many_values');
  expect(codeOf({ a: { _type: 'integer', _value: new Array(max + 1).fill(1) } })).toBe('too_many_values');
});

it('values per document, string bytes and words', () => {
  const fields: Record<string, unknown> = {};
  for (let i = 0; i < 11; i++) fields[`f${i}`] = new Array(10_000).fill(0);
  expect(codeOf(fields)).toBe('document_too_large');
  expect(codeOf({ s: 'x'.repeat(1024 * 1024) })).toBeUndefined();
  expect(codeOf({ s: 'x'.repeat(1024 * 1024 + 1) })).toBe('value_too_large');
  expect(codeOf({ s: 'é'.repeat(512 * 1024 + 1) })).toBe('value_too_large');
  // 800 KB of one-letter words: 400,000 words over 200,000.
  expect(codeOf({ s: 'a '.repeat(400_000) })).toBe('document_too_large');
  // Long words: the length bound is loose, the exact count passes.
  expect(codeOf({ s: 'abcdefghij '.repeat(90_000) })).toBeUndefined();
});

it('root control keys and comments are not document values', () => {
  expect(codeOf({ _script: 'x'.repeat(2 * 1024 * 1024), '#note': new Array(20_000).fill(1), a: 1 })).toBeUndefined();
});
