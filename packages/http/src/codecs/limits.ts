/** Default decode limits (API.md §13); the server reads its own config keys and passes a `DecodeLimits`. */
import type { DecodeLimits } from './types.js';

export const DEFAULT_DECODE_LIMITS: Readonly<DecodeLimits> = Object.freeze({
  depthMax: 128,
  fieldsMax: 10_000,
  // yaml's own default: enough for real anchors/aliases, far too few for a "billion laughs".
  yamlAliasesMax: 100,
  // The values a document may hold (@tessera/schema DOCUMENT_LIMITS_DEFAULTS.documentValuesMax); bodies of other kinds
  // (searches, schemas) are far smaller. The lexer stops past 2 tokens per value (yaml.ts).
  yamlValuesMax: 100_000,
  // Twice a document's longest string (@tessera/schema DOCUMENT_LIMITS_DEFAULTS.stringBytesMax, 1 MiB): room for
  // quotes, escapes and folded line breaks. yaml resolves a double-quoted scalar a character at a time (1 MiB: ~0.3 s).
  yamlScalarCharsMax: 2 * 1024 * 1024,
});

/** Items one array of a body may hold: the limit's, else no bound. */
export function arrayItemsMaxOf(limits: DecodeLimits): number {
  return limits.arrayItemsMax ?? Number.POSITIVE_INFINITY;
}

/** A YAML body's values bound: the limit's, else the default. */
export function yamlValuesMaxOf(limits: DecodeLimits): number {
  return limits.yamlValuesMax ?? (DEFAULT_DECODE_LIMITS.yamlValuesMax as number);
}

/** A YAML body's longest scalar source, characters: the limit's, else the default. */
export function yamlScalarCharsMaxOf(limits: DecodeLimits): number {
  return limits.yamlScalarCharsMax ?? (DEFAULT_DECODE_LIMITS.yamlScalarCharsMax as number);
}
