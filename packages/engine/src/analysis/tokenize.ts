/**
 * The tokenizer of API.md §8.4: tokens are maximal runs of Unicode letters,
 * digits and marks (`\p{L}\p{N}\p{M}`); an apostrophe (`'` or `’`) between two
 * letters stays inside the token (`he's`, `rock'n'roll`) and is normalised to
 * `'`; everything else separates (`t-shirt` → `t`, `shirt`). Tokens are
 * lower-cased with the locale-independent `toLowerCase`.
 *
 * Why a hand-written scanner instead of `regex.exec` in a loop: `exec` builds a
 * match array per token, and the hot path here runs over every text value of
 * every document. The scanner lower-cases the whole text once (V8 does that in
 * bulk), classifies UTF-16 code units through a 64 KiB table built at module
 * load, and allocates only the token string itself (`slice`). Astral code
 * points (CJK extension B, historic scripts, emoji) fall back to a regex test;
 * they are rare in practice. `tokenize.bench.ts` prints the throughput.
 */

/** Code unit classes, as bits of `BMP_CLASS`. */
const WORD = 1; // \p{L}, \p{N} or \p{M}: part of a token
const LETTER_LEFT = 2; // \p{L} or \p{M}: may stand before a kept apostrophe
const LETTER_RIGHT = 4; // \p{L}: may stand after a kept apostrophe

const BMP_CLASS = buildBmpClasses();

function buildBmpClasses(): Uint8Array {
  const table = new Uint8Array(0x10000);
  // One string with every BMP code point except surrogates, scanned by three
  // global regexes: much faster than 63k single-character tests.
  const units: number[] = [];
  for (let c = 0; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) units.push(c);
  let all = '';
  for (let i = 0; i < units.length; i += 4096) all += String.fromCharCode(...units.slice(i, i + 4096));
  const mark = (re: RegExp, bit: number): void => {
    for (const m of all.matchAll(re)) {
      const start = m.index;
      for (let i = start; i < start + m[0].length; i++) table[all.charCodeAt(i)]! |= bit;
    }
  };
  mark(/[\p{L}\p{N}\p{M}]+/gu, WORD);
  mark(/[\p{L}\p{M}]+/gu, LETTER_LEFT);
  mark(/\p{L}+/gu, LETTER_RIGHT);
  return table;
}

const ASTRAL_WORD = /^[\p{L}\p{N}\p{M}]$/u;
const ASTRAL_LETTER_LEFT = /^[\p{L}\p{M}]$/u;
const ASTRAL_LETTER_RIGHT = /^\p{L}$/u;

function astralClass(codePoint: number): number {
  const s = String.fromCodePoint(codePoint);
  return (ASTRAL_WORD.test(s) ? WORD : 0)
    | (ASTRAL_LETTER_LEFT.test(s) ? LETTER_LEFT : 0)
    | (ASTRAL_LETTER_RIGHT.test(s) ? LETTER_RIGHT : 0);
}

const APOSTROPHE = 0x27;
const RIGHT_SINGLE_QUOTE = 0x2019;

/**
 * Class bits of the code point at `i` of `s` and its width in code units
 * (1 or 2), packed as `bits | width << 8` so the scanner allocates nothing.
 */
function classAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return BMP_CLASS[c]! | 1 << 8;
  const next = s.charCodeAt(i + 1); // NaN at the end: lone surrogate
  if (next >= 0xdc00 && next <= 0xdfff) return astralClass(((c - 0xd800) << 10) + (next - 0xdc00) + 0x10000) | 2 << 8;
  return 1 << 8; // lone high surrogate: a separator
}

/**
 * Called once per token, in order; `position` counts tokens from 0; the
 * token spans [start, end) of the lower-cased text (the text's own offsets
 * when lower-casing kept its length, as it does but for a few letters such
 * as `İ`: what highlighting checks).
 */
export type TokenSink = (token: string, position: number, start: number, end: number) => void;

/**
 * Split `text` into tokens and call `emit` for each, in order. Returns the
 * number of tokens. The text is lower-cased first, so a token never needs its
 * own `toLowerCase`.
 */
export function tokenize(text: string, emit: TokenSink): number {
  const s = text.toLowerCase();
  const n = s.length;
  let position = 0;
  let i = 0;
  while (i < n) {
    // Skip separators.
    let cls = classAt(s, i);
    while ((cls & WORD) === 0) {
      i += cls >>> 8;
      if (i >= n) return position;
      cls = classAt(s, i);
    }
    const start = i;
    let hasCurly = false;
    // lastBits: class of the previous code point inside the token.
    let lastBits = cls & 0xff;
    i += cls >>> 8;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === APOSTROPHE || c === RIGHT_SINGLE_QUOTE) {
        if ((lastBits & LETTER_LEFT) === 0 || i + 1 >= n) break;
        const after = classAt(s, i + 1);
        if ((after & LETTER_RIGHT) === 0) break;
        if (c === RIGHT_SINGLE_QUOTE) hasCurly = true;
        lastBits = after & 0xff;
        i += 1 + (after >>> 8);
        continue;
      }
      cls = classAt(s, i);
      if ((cls & WORD) === 0) break;
      lastBits = cls & 0xff;
      i += cls >>> 8;
    }
    const token = hasCurly ? s.slice(start, i).replaceAll('\u2019', "'") : s.slice(start, i);
    emit(token, position++, start, i);
  }
  return position;
}

/** Every token of `text`, in order (convenience for tests and small inputs). */
export function tokens(text: string): string[] {
  const out: string[] = [];
  tokenize(text, (token) => { out.push(token); });
  return out;
}

/**
 * Whether `token` starts with a letter (`\p{L}`). Xapian stems only such terms
 * under `stem_some` (`should_stem`: a term starting with a digit is not stemmed).
 */
export function startsWithLetter(token: string): boolean {
  return token.length > 0 && (classAt(token, 0) & LETTER_RIGHT) !== 0;
}
