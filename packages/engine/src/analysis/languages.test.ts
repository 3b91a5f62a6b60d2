/**
 * The schema (`_language`, `_stem_language`) and analysis agree on every
 * Snowball language the installed `snowball-stemmers` offers: a language the
 * schema accepts always has a stemmer, and none the package offers is refused.
 */
import { algorithms } from 'snowball-stemmers';
import { LANGUAGE_NAMES, normaliseLanguage } from '@tessera/schema';
import { resolveLanguage, snowballLanguages, stemmerFor } from './languages.js';

describe('Snowball languages', () => {
  test('every algorithm of the package is a schema language and an analysis language', () => {
    for (const name of algorithms()) {
      expect([name, normaliseLanguage(name)]).toEqual([name, name]);
      expect(resolveLanguage(name)).toBe(name);
      expect(typeof stemmerFor(name).stem('testing')).toBe('string');
    }
    expect([...LANGUAGE_NAMES].sort()).toEqual([...algorithms()].sort());
    expect(snowballLanguages().sort()).toEqual([...algorithms()].sort());
  });

  test('ISO 639-1 codes name the same language on both sides', () => {
    for (const code of ['en', 'es', 'fr', 'de', 'pt', 'ru', 'ar', 'hy', 'ga', 'ta', 'tr', 'sv', 'no']) {
      expect(normaliseLanguage(code)).toBe(resolveLanguage(code));
      expect(normaliseLanguage(code.toUpperCase())).toBe(resolveLanguage(code));
    }
    expect(normaliseLanguage('klingon')).toBeUndefined();
  });
});
