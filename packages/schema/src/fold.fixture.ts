/** Helpers the schema's tests share (not part of the package's API). */
import { TesseraError } from '@tessera/errors';
import type { FoldResult } from './fold.js';

/** `status code: message` of the TesseraError `fn` throws; fails when it throws nothing or something else. */
export function error(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof TesseraError) return `${err.status} ${err.code}: ${err.message}`;
    throw err;
  }
  throw new Error('did not throw');
}

/** The values a fold indexes, as `[path, value]` pairs. */
export const values = (r: FoldResult) => r.document.values.map((v) => [v.path, v.value]);
