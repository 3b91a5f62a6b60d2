/**
 * Import and dump: many documents in one stream. Import sends the documents
 * as NDJSON through RESTORE (API.md §7.7), in batches, so it can say after
 * each how far it got (indexed, failed) and memory holds one batch, not the
 * input; dump reads DUMP as NDJSON (API.md §7.6) a line at a time.
 */
import { errorFromResponse, type ErrorBody, type TesseraError } from './errors.js';
import type { DocumentMeta, JsonObject } from './types.js';

/** RESTORE's answer: `items[i]` answers input item i, a document's ID and version or an error body. */
export interface RestoreReport {
  prepared: number;
  processed: number;
  indexed: number;
  total: number;
  items: Array<DocumentMeta | ErrorBody>;
  took?: string | number;
}

export interface ImportProgress {
  /** Documents sent and answered. */
  sent: number;
  indexed: number;
  failed: number;
  batches: number;
}

/** A document the server refused: its 0-based position in the input and why. */
export interface ImportFailure {
  position: number;
  error: TesseraError;
}

export interface ImportSummary extends ImportProgress {
  failures: ImportFailure[];
}

export interface BatchLimits {
  /** Documents per RESTORE request (default 1000). */
  batchSize?: number;
  /** A batch also ends at this many bytes of NDJSON (default 8 MiB). */
  batchBytes?: number;
}

export const DEFAULT_BATCH_SIZE = 1000;
export const DEFAULT_BATCH_BYTES = 8 * 1024 * 1024;

function isErrorItem(item: DocumentMeta | ErrorBody): item is ErrorBody {
  return typeof (item as ErrorBody).status === 'number' && (item as ErrorBody).status >= 400;
}

/** Batches of NDJSON lines, each with the position of its first document. */
async function* batchesOf(documents: Iterable<JsonObject> | AsyncIterable<JsonObject>, limits: BatchLimits):
  AsyncGenerator<{ first: number; lines: string[] }, void, undefined> {
  const size = limits.batchSize ?? DEFAULT_BATCH_SIZE;
  const bytesMax = limits.batchBytes ?? DEFAULT_BATCH_BYTES;
  if (!Number.isInteger(size) || size <= 0) throw new TypeError(`batchSize must be a positive integer, not ${size}`);
  let lines: string[] = [];
  let bytes = 0;
  let first = 0;
  for await (const document of documents) {
    const line = JSON.stringify(document);
    lines.push(line);
    bytes += Buffer.byteLength(line) + 1;
    if (lines.length >= size || bytes >= bytesMax) {
      yield { first, lines };
      first += lines.length;
      lines = [];
      bytes = 0;
    }
  }
  if (lines.length > 0) yield { first, lines };
}

/**
 * Sends `documents` in batches through `restore` (one RESTORE of NDJSON
 * each), calling `onProgress` after each batch. A document the server
 * refuses is counted and kept in `failures`, and the rest goes on; a batch
 * refused as a whole (its request failed) throws, after the batches before
 * it were indexed.
 */
export async function importInBatches(
  documents: Iterable<JsonObject> | AsyncIterable<JsonObject>,
  restore: (ndjson: string) => Promise<RestoreReport>,
  options: BatchLimits & { onProgress?: ((progress: ImportProgress) => void) | undefined } = {},
): Promise<ImportSummary> {
  const summary: ImportSummary = { sent: 0, indexed: 0, failed: 0, batches: 0, failures: [] };
  for await (const { first, lines } of batchesOf(documents, options)) {
    const report = await restore(`${lines.join('\n')}\n`);
    report.items.forEach((item, i) => {
      if (isErrorItem(item)) summary.failures.push({ position: first + i, error: errorFromResponse(item.status, item) });
    });
    summary.sent += lines.length;
    summary.indexed += report.indexed;
    summary.failed = summary.failures.length;
    summary.batches++;
    options.onProgress?.({ sent: summary.sent, indexed: summary.indexed, failed: summary.failed, batches: summary.batches });
  }
  return summary;
}

/** The JSON values of an NDJSON byte stream, one a line; blank lines skipped. */
export async function* ndjsonValues<T>(chunks: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<T, void, undefined> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of chunks) {
    rest += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const lines = rest.split('\n');
    rest = lines.pop() as string;
    for (const line of lines) if (line.trim().length > 0) yield JSON.parse(line) as T;
  }
  rest += decoder.decode();
  if (rest.trim().length > 0) yield JSON.parse(rest) as T;
}
