/**
 * Languages accepted by `_language` and `_stem_language` (API.md §8.2): the
 * Snowball stemmers, by English name or ISO 639-1 code, normalised to the
 * English name (which is what the stemmer package is keyed by). Every
 * algorithm of the installed `snowball-stemmers` is here (`porter`, the
 * original English stemmer, by name only); the engine's languages test checks
 * that none is missing.
 */
const LANGUAGES: ReadonlyArray<readonly [name: string, ...codes: string[]]> = [
  ['arabic', 'ar'], ['armenian', 'hy'], ['basque', 'eu'], ['catalan', 'ca'], ['czech', 'cs'], ['danish', 'da'],
  ['dutch', 'nl'], ['english', 'en'], ['porter'], ['finnish', 'fi'], ['french', 'fr'], ['german', 'de'], ['hungarian', 'hu'],
  ['italian', 'it'], ['irish', 'ga'], ['norwegian', 'no', 'nb', 'nn'], ['portuguese', 'pt'], ['romanian', 'ro'],
  ['russian', 'ru'], ['spanish', 'es'], ['slovene', 'sl'], ['swedish', 'sv'], ['tamil', 'ta'], ['turkish', 'tr'],
];

const BY_NAME_OR_CODE: ReadonlyMap<string, string> = new Map(
  LANGUAGES.flatMap(([name, ...codes]) => [[name, name] as const, ...codes.map((c) => [c, name] as const)]),
);

/** English name of a language given by name or code (any case); undefined when not a Snowball language. */
export function normaliseLanguage(value: string): string | undefined {
  return BY_NAME_OR_CODE.get(value.toLowerCase());
}

export const LANGUAGE_NAMES: readonly string[] = LANGUAGES.map(([name]) => name);
