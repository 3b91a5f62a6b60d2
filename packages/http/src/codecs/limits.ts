/** Default decode limits (API.md §13); the server reads its own config keys and passes a `DecodeLimits`. */
import type { DecodeLimits } from './types.js';

export const DEFAULT_DECODE_LIMITS: Readonly<DecodeLimits> = Object.freeze({
  depthMax: 128,
  fieldsMax: 10_000,
  // yaml's own default: enough for real anchors/aliases, far too few for a "billion laughs".
  yamlAliasesMax: 100,
});
