/**
 * NDJSON request bodies (API.md §2.2): one JSON value per non-empty line,
 * decoded to an array. Each line is a document of its own: depth and field
 * limits apply per line, and an error names the line (1-based).
 */
import { TesseraError } from '@tessera/errors';
import { parseJsonText } from './json.js';
import type { DecodeLimits } from './types.js';

export function parseNdjsonText(text: string, limits: DecodeLimits): unknown[] {
  const values: unknown[] = [];
  let line = 0;
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    line++;
    const source = text.slice(start, end);
    start = end + 1;
    if (source.trim() === '') continue;
    try {
      values.push(parseJsonText(source, limits, 'JSON'));
    } catch (err) {
      if (!(err instanceof TesseraError)) throw err;
      throw new TesseraError(err.code, err.status, `NDJSON line ${line}: ${err.message}`, { cause: err });
    }
  }
  return values;
}
