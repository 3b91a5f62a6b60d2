/**
 * What one document may cost (API.md §13): values per field, values per
 * document, bytes per string value and words (text tokens) per document.
 * The decode limits (depth, fields, body bytes) bound the body; these bound
 * what indexing it would build from a body well inside them: a 6 MB JSON
 * array of 1,000,000 numbers is a small body but 1,000,000 values with their
 * accuracy terms, and an 8 MB string is 1.4 million positions. Each limit
 * is a 400 with its own code, checked by one iterative walk before any work
 * (no schema change, no write), like Elasticsearch's
 * `index.mapping.total_fields.limit` and Meilisearch's positions per attribute.
 *
 * The defaults leave the real corpora far inside (Debian packages: at most
 * 332 array items, 81 KB in one string, 11,000 words in one document).
 */
import { schemaErrors } from './errors.js';
import { isCommentKey } from './keys.js';

export interface DocumentLimits {
  /** Values one field may hold in a document (array items, nested arrays flattened). */
  valuesPerFieldMax: number;
  /** Values (scalars and array items) in a whole document. */
  documentValuesMax: number;
  /** UTF-8 bytes of one string value. */
  stringBytesMax: number;
  /** Words of all string values of a document together: an upper bound of its text tokens (positions). */
  documentWordsMax: number;
}

export const DOCUMENT_LIMITS_DEFAULTS: Readonly<DocumentLimits> = Object.freeze({
  valuesPerFieldMax: 10_000,
  documentValuesMax: 100_000,
  stringBytesMax: 1024 * 1024,
  documentWordsMax: 200_000,
});

/**
 * A word: a maximal run of letters, digits and marks, the tokenizer's rule
 * (engine analysis/tokenize.ts) without its apostrophe joining, which only
 * ever merges two runs into one token, so words ≥ tokens.
 */
const WORD_RUN = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * Throws the limit's 400 when `body` (a decoded write body) is over one.
 * Root control keys (`_script`, `_schema`…) and comment keys are not
 * document values; nested `_value`-like keys count for their field.
 */
export function checkDocumentLimits(body: Record<string, unknown>, limits: DocumentLimits): void {
  const perField = new Map<string, number>();
  let values = 0;
  // Two words need a separator between them, so a string of n UTF-16 units
  // has at most ⌈n/2⌉: the words are counted only when these bounds exceed the limit.
  let wordsBound = 0;
  // Iterative: values still to visit and the field path each belongs to. Depth is bounded by the decoder.
  const pending: unknown[] = [];
  const paths: string[] = [];
  for (const key of Object.keys(body)) {
    if (isCommentKey(key) || key.charCodeAt(0) === UNDERSCORE) continue;
    pending.push(body[key]);
    paths.push(key);
  }
  while (pending.length > 0) {
    const value = pending.pop();
    const path = paths.pop() as string;
    if (typeof value === 'string') {
      checkStringBytes(value, path, limits);
      wordsBound += (value.length + 1) >> 1;
    } else if (Array.isArray(value)) {
      const count = (perField.get(path) ?? 0) + value.length;
      if (count > limits.valuesPerFieldMax) {
        throw schemaErrors.tooManyValues(path, limits.valuesPerFieldMax);
      }
      perField.set(path, count);
      // An array is no value of its own: its items are.
      values += value.length - 1;
      for (let i = 0; i < value.length; i++) {
        pending.push(value[i]);
        paths.push(path);
      }
    } else if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
      values--;
      for (const key of Object.keys(value)) {
        if (isCommentKey(key)) continue;
        pending.push((value as Record<string, unknown>)[key]);
        // `_value`, `_type`…: the field's own value and options, counted under its path.
        paths.push(key.charCodeAt(0) === UNDERSCORE ? path : `${path}.${key}`);
      }
    }
    if (++values > limits.documentValuesMax) {
      throw schemaErrors.documentTooLarge(`has more than ${limits.documentValuesMax} values`);
    }
  }
  if (wordsBound > limits.documentWordsMax && countWords(body, limits.documentWordsMax) > limits.documentWordsMax) {
    throw schemaErrors.documentTooLarge(`text has more than ${limits.documentWordsMax} words`);
  }
}

const UNDERSCORE = 0x5f;

/** ≤ 3 UTF-8 bytes per UTF-16 unit: most strings are settled by their length alone. */
function checkStringBytes(s: string, path: string, limits: DocumentLimits): void {
  if (s.length * 3 > limits.stringBytesMax && Buffer.byteLength(s, 'utf8') > limits.stringBytesMax) {
    throw schemaErrors.valueTooLarge(path, limits.stringBytesMax);
  }
}

/** Words of every string in `body` (root control and comment keys left out), stopping past `budget`. */
function countWords(body: Record<string, unknown>, budget: number): number {
  let words = 0;
  const pending: unknown[] = [];
  for (const key of Object.keys(body)) {
    if (!isCommentKey(key) && key.charCodeAt(0) !== UNDERSCORE) pending.push(body[key]);
  }
  while (pending.length > 0 && words <= budget) {
    const value = pending.pop();
    if (typeof value === 'string') {
      WORD_RUN.lastIndex = 0;
      while (WORD_RUN.exec(value) !== null) if (++words > budget) break;
      WORD_RUN.lastIndex = 0;
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) pending.push(value[i]);
    } else if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
      for (const key of Object.keys(value)) if (!isCommentKey(key)) pending.push((value as Record<string, unknown>)[key]);
    }
  }
  return words;
}
