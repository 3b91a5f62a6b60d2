/**
 * JSON request bodies (API.md §2.2): JSON with comments and trailing commas.
 * JSON.parse runs first, then JSON.parse on the text without comments and
 * trailing commas, and JSON5 only when both fail, because JSON5.parse is
 * 24× slower on plain JSON (ENGINE.md, codecs). Depth is pre-scanned on the
 * text before either parser runs, with the items of each array; keys, `__proto__` and NaN/Infinity (JSON5
 * literals, or `1e400` overflowing in JSON.parse) are checked on the value.
 */
import JSON5 from 'json5';
import { bodyMalformed } from './errors.js';
import { scanJsonDepth } from './json-depth.js';
import { stripJsonComments } from './json-strip.js';
import { arrayItemsMaxOf } from './limits.js';
import type { DecodeLimits } from './types.js';
import { checkDecodedValue } from './value-check.js';

/** Returned by `tryParseJsonText` when the text is not JSON (nor JSON5). */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/** Parse JSON/JSON5 text under limits; 400 when malformed or over a limit. */
export function parseJsonText(text: string, limits: DecodeLimits, what: string): unknown {
  scanJsonDepth(text, limits.depthMax, arrayItemsMaxOf(limits));
  let value: unknown;
  try {
    value = parseSyntax(text);
  } catch (err) {
    throw bodyMalformed(what, err instanceof Error ? err.message : String(err), err);
  }
  checkValue(value, text, limits, what);
  return value;
}

/**
 * Like `parseJsonText`, but a syntax error gives NOT_JSON (form-urlencoded
 * bodies are JSON only if they parse). Limit violations still throw 400.
 */
export function tryParseJsonText(text: string, limits: DecodeLimits, what: string): unknown {
  scanJsonDepth(text, limits.depthMax, arrayItemsMaxOf(limits));
  let value: unknown;
  try {
    value = parseSyntax(text);
  } catch {
    return NOT_JSON;
  }
  checkValue(value, text, limits, what);
  return value;
}

/**
 * JSON.parse, then JSON.parse of the text without comments and trailing
 * commas (json-strip.ts), then JSON5. Throws JSON5's error when all fail:
 * it names line and column, and JSON5 is the dialect we accept.
 */
function parseSyntax(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const stripped = stripJsonComments(text);
    if (stripped !== null) {
      try {
        return JSON.parse(stripped);
      } catch { /* JSON5 below: its error, or a JSON5-only form */ }
    }
    return JSON5.parse(text);
  }
}

function checkValue(value: unknown, text: string, limits: DecodeLimits, what: string): void {
  // Every JSON value takes at least one character: text.length + 1 values is
  // a bound the walk cannot reach here (it exists for YAML aliases).
  checkDecodedValue(value, limits, text.length + 1, what);
}
