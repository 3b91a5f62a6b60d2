/**
 * JSON with comments and trailing commas → JSON, for JSON.parse. Bodies in
 * that dialect (API.md §2.2) would otherwise all go to JSON5.parse, which is
 * 4-24× slower and allocates a token per character run: a 5 MB array of
 * 1,000,000 numbers after a `// comment` took ~2.4 s and promoted tens of MB
 * of parser garbage to the old generation, against ~0.3 s in JSON.parse.
 * Comments become a space, a comma followed (through space and comments) by
 * `}` or `]` is dropped; double-quoted strings are skipped whole. Anything
 * else JSON5 allows (single quotes, bare keys, hex, `+1`, `Infinity`) is left
 * as it is: JSON.parse then fails and the caller falls back to JSON5.
 */
import { closingQuote } from './json-depth.js';

const SLASH = 0x2f;          // /
const STAR = 0x2a;           // *
const COMMA = 0x2c;          // ,
const DOUBLE_QUOTE = 0x22;   // "
const SINGLE_QUOTE = 0x27;   // '
const CLOSE_BRACKET = 0x5d;  // ]
const CLOSE_BRACE = 0x7d;    // }
const OPEN_BRACKET = 0x5b;   // [
const OPEN_BRACE = 0x7b;     // {
const COLON = 0x3a;          // :

/** JSON whitespace (RFC 8259): space, tab, line feed, carriage return. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The text without comments and trailing commas; null when it has none (or a single-quoted string: JSON5 only). */
export function stripJsonComments(text: string): string | null {
  const parts: string[] = [];
  let from = 0;           // start of the text not yet in parts
  let pendingComma = false; // a comma held back until the next significant character shows whether it trails
  let changed = false;
  let previous = -1;        // the last significant character (not space, not in a comment)
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) continue;
    if (c === SLASH) {
      const next = text.charCodeAt(i + 1);
      let end: number;
      if (next === SLASH) {
        end = text.indexOf('\n', i + 2);
        if (end < 0) end = n;
      } else if (next === STAR) {
        end = text.indexOf('*/', i + 2);
        if (end < 0) return null; // unterminated: JSON5 reports it
        end += 2;
      } else {
        return null;
      }
      parts.push(text.slice(from, i), ' ');
      from = end;
      i = end - 1;
      changed = true;
      continue;
    }
    if (pendingComma) {
      pendingComma = false;
      if (c === CLOSE_BRACE || c === CLOSE_BRACKET) changed = true;
      else parts.push(',');
    }
    // Only a comma after a value may trail: `[,]` and `[1,,]` stay as they are, for JSON5 to refuse.
    if (c === COMMA && previous !== -1 && previous !== OPEN_BRACKET && previous !== OPEN_BRACE && previous !== COMMA && previous !== COLON) {
      parts.push(text.slice(from, i));
      from = i + 1;
      pendingComma = true;
    } else if (c === DOUBLE_QUOTE) {
      i = closingQuote(text, i, '"');
      if (i < 0) return null;
    } else if (c === SINGLE_QUOTE) {
      return null;
    }
    previous = c;
  }
  if (!changed) return null;
  if (pendingComma) parts.push(',');
  parts.push(text.slice(from));
  return parts.join('');
}
