/**
 * Linear pre-scan of JSON/JSON5 text for nesting depth, run before any parser
 * so that `[[[[…` 100,000 deep is refused after reading depthMax + 1 brackets
 * instead of being parsed into 100,000 arrays. Counts `[` and `{` outside
 * strings ("…" and JSON5 '…') and comments (`//`, `/* *\/`); strings and
 * comments are skipped with indexOf, so a typical document (mostly string
 * bytes) costs about a third of JSON.parse (json-decode.bench.ts: ~1 GB/s
 * against ~0.3 GB/s; the whole fast path stays under 2× bare JSON.parse).
 *
 * The same scan counts the commas of each open array, so an array of more
 * than `arrayItemsMax` items (a 1,000,000-number body) is refused before
 * JSON.parse builds it (commas > arrayItemsMax means more items, trailing
 * comma or not; an array of exactly one item more is left to the value check).
 *
 * The scan is exact for well-formed input. On malformed input it may stop
 * early or under-count; it never throws for that: the parser reports the
 * syntax error and `checkDecodedValue` re-checks the depth of what was built.
 */
import { bodyTooDeep, tooManyArrayItems } from './errors.js';

const OPEN_BRACKET = 0x5b;   // [
const CLOSE_BRACKET = 0x5d;  // ]
const OPEN_BRACE = 0x7b;     // {
const CLOSE_BRACE = 0x7d;    // }
const DOUBLE_QUOTE = 0x22;   // "
const SINGLE_QUOTE = 0x27;   // '
const SLASH = 0x2f;          // /
const STAR = 0x2a;           // *
const BACKSLASH = 0x5c;      // \
const COMMA = 0x2c;          // ,

// Per-level state (commas of an open array; whether the level is an array), reused across
// calls: the scan is synchronous and never re-entered. Grown when depthMax asks for more.
let commasScratch = new Float64Array(129);
let isArrayScratch = new Uint8Array(129);

export function scanJsonDepth(text: string, depthMax: number, arrayItemsMax = Number.POSITIVE_INFINITY): void {
  if (isArrayScratch.length <= depthMax) {
    commasScratch = new Float64Array(depthMax + 1);
    isArrayScratch = new Uint8Array(depthMax + 1);
  }
  const commas = commasScratch;
  const isArray = isArrayScratch;
  isArray[0] = 0;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > depthMax) throw bodyTooDeep(depthMax);
      isArray[depth] = c === OPEN_BRACKET ? 1 : 0;
      commas[depth] = 0;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      if (depth > 0) depth--;
    } else if (c === COMMA) {
      if (isArray[depth] === 1 && ++commas[depth]! > arrayItemsMax) throw tooManyArrayItems(arrayItemsMax);
    } else if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) {
      i = closingQuote(text, i, c === DOUBLE_QUOTE ? '"' : "'");
      if (i < 0) return;
    } else if (c === SLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === SLASH) {
        i = text.indexOf('\n', i + 2);
      } else if (next === STAR) {
        i = text.indexOf('*/', i + 2);
        if (i >= 0) i++;
      }
      if (i < 0) return;
    }
  }
}

/** Index of the quote that closes the string opened at `open`, or -1 if unterminated. */
export function closingQuote(text: string, open: number, quote: string): number {
  let j = open;
  for (;;) {
    j = text.indexOf(quote, j + 1);
    if (j < 0) return -1;
    // Escaped when preceded by an odd run of backslashes.
    let k = j - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if (((j - 1 - k) & 1) === 0) return j;
  }
}
