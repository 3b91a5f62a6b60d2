/**
 * `tessera import`: streams a file of documents into an index of a running
 * server through RESTORE (API.md §7.7), the same bulk path a client uses, so
 * the server stays the only writer of its data directory and the import runs
 * while it serves.
 *
 * The input (a file or standard input; gzip recognised by its magic bytes or
 * a `.gz` name) is split into items — NDJSON lines, or MessagePack values —
 * without decoding them: the server decodes and validates each one and
 * reports it in its place, so line numbers come from the client's count and
 * errors from the server. Items go out in batches (`batchItems` per RESTORE,
 * at most BATCH_BYTES_MAX), `concurrency` batches in flight; reading waits
 * while they are, so memory holds a few batches, not the file.
 *
 * A bad line is reported (`FILE:LINE: message`) and the rest goes on. A batch
 * the server refuses as a whole (4xx) is reported for its lines and the rest
 * goes on; a transport failure or a 5xx stops the import (the server is not
 * in a state to take more; documents with `_id` make a rerun safe).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { msgpackValueLength } from '@tessera/http';
import { Pool } from 'undici';
import { authHeaders, authHint, DEFAULT_URL } from './client-auth.js';
import { mebibytes, Progress } from './progress.js';

/**
 * Largest item the importer holds, bytes: the server's default `bodyBytesMax`
 * (an item larger than the server takes would fail anyway). A longer line is
 * skipped to its end and reported.
 */
export const ITEM_BYTES_MAX = 64 * 1024 * 1024;
/** A batch ends at this many bytes even before `batchItems` items. */
export const BATCH_BYTES_MAX = 16 * 1024 * 1024;

export type ImportFormat = 'ndjson' | 'msgpack';

export interface ImportOptions {
  /** A file path, or `-` for standard input. */
  source: string;
  index: string;
  url: string;
  batchItems: number;
  concurrency: number;
  /** Default: msgpack for `.msgpack`/`.mpk` files (gzipped or not), else ndjson. */
  format?: ImportFormat | undefined;
  progress: boolean;
  progressIntervalMs: number;
  /** Sent as `Authorization: Bearer` (client-auth.ts). */
  apiKey?: string | undefined;
}

export interface ImportSummary {
  /** Items read (non-blank lines, or MessagePack values). */
  items: number;
  indexed: number;
  failed: number;
  seconds: number;
  /** Why the import stopped before the end of the input, if it did. */
  aborted: string | undefined;
}

/** One item to send: its line (NDJSON) or position (MessagePack), 1-based, and its bytes. */
interface Item {
  number: number;
  bytes: Buffer;
}

/** An item the importer could not even frame (too long, truncated). */
interface BadItem {
  number: number;
  error: string;
}

interface Batch {
  numbers: number[];
  parts: Buffer[];
  bytes: number;
}

/** The error body of API.md §4.2, as far as the importer reads it. */
interface ErrorBody {
  status?: number;
  message?: string;
}

interface RestoreReport {
  indexed: number;
  items: Array<ErrorBody & { _id?: unknown }>;
}

export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const startedAt = process.hrtime.bigint();
  const indexPath = normaliseIndex(options.index);
  const origin = originOf(options.url);
  const format = options.format ?? (/\.(msgpack|mpk)(\.gz)?$/i.test(options.source) ? 'msgpack' : 'ndjson');
  const name = options.source === '-' ? '<stdin>' : basename(options.source);
  const where = (n: number) => (format === 'ndjson' ? `${name}:${n}` : `${name}: item ${n}`);
  const pool = new Pool(origin, { connections: options.concurrency, pipelining: 1 });
  try {
    const input = await openInput(options.source);
    const auth = authHeaders(options.apiKey);
    await checkServer(pool, options.url, indexPath, options.apiKey);
    const counts = { items: 0, indexed: 0, failed: 0 };
    let aborted: string | undefined;
    const progress = new Progress({ enabled: options.progress, intervalMs: options.progressIntervalMs, label: 'import' }, () => ({
      documents: counts.indexed, errors: counts.failed, itemsRead: counts.items, bytesRead: input.bytesRead(), bytesTotal: input.sizeBytes,
    }));
    const report = (n: number, message: string) => progress.log(`${where(n)}: ${message}`);
    const reportBatch = (batch: Batch, message: string) => {
      counts.failed += batch.numbers.length;
      const first = batch.numbers[0] as number;
      const last = batch.numbers[batch.numbers.length - 1] as number;
      if (first === last) report(first, message);
      else progress.log(`${format === 'ndjson' ? `${name}:${first}-${last}` : `${name}: items ${first}-${last}`}: ${message}`);
    };
    const contentType = format === 'ndjson' ? 'application/x-ndjson' : 'application/x-msgpack';

    const sendOnce = async (batch: Batch): Promise<void> => {
      let status: number;
      let text: string;
      try {
        const res = await pool.request({
          path: indexPath, method: 'RESTORE' as 'POST', body: Buffer.concat(batch.parts, batch.bytes),
          headers: { 'content-type': contentType, accept: 'application/json', ...auth },
        });
        status = res.statusCode;
        text = await res.body.text();
      } catch (err) {
        aborted ??= `the server stopped answering: ${describe(err)}`;
        reportBatch(batch, `not confirmed: ${describe(err)}`);
        return;
      }
      if (status !== 200) {
        const message = errorMessage(status, text);
        if (status >= 500) aborted ??= `the server failed a batch: ${message}`;
        // The key will not be accepted for the next batch either.
        if (status === 401 || status === 403) aborted ??= `the server refused the batch: ${message}${authHint(status, options.apiKey)}`;
        reportBatch(batch, `refused as a batch: ${message}`);
        return;
      }
      const restored = JSON.parse(text) as RestoreReport;
      if (!Array.isArray(restored.items) || restored.items.length !== batch.numbers.length) {
        aborted ??= 'the server answered RESTORE with another number of items than it was sent';
        reportBatch(batch, `the server answered ${Array.isArray(restored.items) ? restored.items.length : 'no'} items for ${batch.numbers.length} sent`);
        return;
      }
      counts.indexed += restored.indexed;
      restored.items.forEach((item, i) => {
        if (item.status === undefined) return;
        counts.failed++;
        report(batch.numbers[i] as number, item.message ?? `status ${item.status}`);
      });
    };
    const send = (batch: Batch): Promise<void> => sendOnce(batch).catch((err: unknown) => {
      aborted ??= `unexpected answer to RESTORE: ${describe(err)}`;
      reportBatch(batch, `not confirmed: ${describe(err)}`);
    });

    const inFlight = new Set<Promise<void>>();
    const dispatch = async (batch: Batch): Promise<void> => {
      while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
      const sending: Promise<void> = send(batch).finally(() => inFlight.delete(sending));
      inFlight.add(sending);
    };

    progress.start();
    let batch: Batch = { numbers: [], parts: [], bytes: 0 };
    const frames = format === 'ndjson' ? ndjsonItems(input.chunks) : msgpackItems(input.chunks);
    try {
      for await (const item of frames) {
        if (aborted !== undefined) break;
        counts.items++;
        if ('error' in item) {
          counts.failed++;
          report(item.number, item.error);
          continue;
        }
        const size = item.bytes.length + (format === 'ndjson' ? 1 : 0);
        if (batch.numbers.length > 0 && batch.bytes + size > BATCH_BYTES_MAX) {
          await dispatch(batch);
          batch = { numbers: [], parts: [], bytes: 0 };
        }
        batch.numbers.push(item.number);
        batch.parts.push(item.bytes);
        if (format === 'ndjson') batch.parts.push(NEWLINE);
        batch.bytes += size;
        if (batch.numbers.length >= options.batchItems) {
          await dispatch(batch);
          batch = { numbers: [], parts: [], bytes: 0 };
        }
      }
      if (batch.numbers.length > 0 && aborted === undefined) await dispatch(batch);
    } catch (err) {
      aborted ??= `cannot read ${name}: ${describe(err)}`;
    } finally {
      await Promise.all(inFlight);
    }
    // Durable before we say so: one COMMIT makes every shard fsync what it acknowledged.
    if (counts.indexed > 0 && aborted === undefined) {
      try {
        const res = await pool.request({ path: indexPath, method: 'COMMIT' as 'POST', headers: auth });
        const text = await res.body.text();
        if (res.statusCode !== 200) aborted = `COMMIT failed: ${errorMessage(res.statusCode, text)}`;
      } catch (err) {
        aborted = `COMMIT failed: ${describe(err)}`;
      }
    }
    progress.stop();
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const rate = seconds > 0 ? Math.round(counts.indexed / seconds) : 0;
    const peakRss = process.resourceUsage().maxRSS * 1024;
    process.stdout.write(`imported ${counts.indexed} of ${counts.items} documents from ${name} into ${indexPath} in ${seconds.toFixed(1)} s `
      + `(${rate} docs/s, ${mebibytes(input.bytesRead())} read, importer peak RSS ${mebibytes(peakRss)}); ${counts.failed} failed\n`);
    if (aborted !== undefined) {
      process.stderr.write(`tessera import: stopped: ${aborted}. Documents with an _id can be imported again safely: rerun the same command.\n`);
    }
    return { ...counts, seconds, aborted };
  } finally {
    await pool.close();
  }
}

const NEWLINE = Buffer.from('\n');

/** `/debian/` from `debian`, `/debian` or `/debian/`; segments percent-encoded for the URL. */
function normaliseIndex(index: string): string {
  const segments = index.split('/').filter((s) => s.length > 0);
  if (segments.length === 0) throw new Error(`--index ${JSON.stringify(index)} names no index: give a path such as /debian/`);
  return `/${segments.map(encodeURIComponent).join('/')}/`;
}

function originOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url ${JSON.stringify(url)} is not a URL (e.g. ${DEFAULT_URL})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--url ${url}: use http:// or https://`);
  return parsed.origin;
}

/** The server answers, and the index path is one it accepts (else nothing is read). */
async function checkServer(pool: Pool, url: string, indexPath: string, apiKey: string | undefined): Promise<void> {
  let status: number;
  let text: string;
  try {
    const res = await pool.request({ path: indexPath, method: 'GET', headers: { accept: 'application/json', ...authHeaders(apiKey) } });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    throw new Error(`cannot reach the server at ${url}: ${describe(err)} (is \`tessera serve\` running there?)`);
  }
  // 403: a key that may write but not read the index; RESTORE is what it needs.
  if (status !== 200 && status !== 404 && status !== 403) throw new Error(`the server refuses ${indexPath}: ${errorMessage(status, text)}${authHint(status, apiKey)}`);
}

interface Input {
  chunks: AsyncIterable<Buffer>;
  /** Size of the (possibly compressed) input when it is a regular file. */
  sizeBytes: number | undefined;
  /** Bytes read from the input so far, before decompression. */
  bytesRead(): number;
}

async function openInput(source: string): Promise<Input> {
  let sizeBytes: number | undefined;
  let raw: Readable;
  if (source === '-') {
    raw = process.stdin;
  } else {
    const info = await stat(source).catch((err: unknown) => {
      throw new Error(`cannot read ${source}: ${describe(err)}`);
    });
    if (info.isDirectory()) throw new Error(`cannot read ${source}: it is a directory`);
    if (info.isFile()) sizeBytes = info.size;
    // Small reads: bytes read (the ETA) stay close to bytes sent, not a big read-ahead in front of them.
    raw = createReadStream(source, { highWaterMark: 64 * 1024 });
  }
  let bytesRead = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of raw as AsyncIterable<Buffer>) {
      bytesRead += chunk.length;
      yield chunk;
    }
  }
  return { chunks: gunzipped(counted(), source.toLowerCase().endsWith('.gz')), sizeBytes, bytesRead: () => bytesRead };
}

/** The bytes, gunzipped when they start with the gzip magic bytes (or the name says .gz). */
async function* gunzipped(chunks: AsyncGenerator<Buffer>, namedGz: boolean): AsyncGenerator<Buffer> {
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < 2) {
    const next = await chunks.next();
    if (next.done === true) break;
    head.push(next.value);
    headBytes += next.value.length;
  }
  const start = Buffer.concat(head);
  async function* all(): AsyncGenerator<Buffer> {
    if (start.length > 0) yield start;
    yield* chunks;
  }
  const gzip = (start.length >= 2 && start[0] === 0x1f && start[1] === 0x8b) || (namedGz && start.length > 0);
  if (!gzip) {
    yield* all();
    return;
  }
  yield* pipeline(Readable.from(all()), createGunzip(), () => undefined) as AsyncIterable<Buffer>;
}

/** Non-blank lines, numbered from 1 (blank: only spaces, tabs and CRs, as the server's NDJSON reader). */
export async function* ndjsonItems(chunks: AsyncIterable<Buffer>): AsyncGenerator<Item | BadItem> {
  let parts: Buffer[] = [];
  let bytes = 0;
  let line = 0;
  let tooLong = false;
  const finish = (): Item | BadItem | undefined => {
    line++;
    const result: Item | BadItem | undefined = tooLong
      ? { number: line, error: `line longer than ${ITEM_BYTES_MAX} bytes, skipped` }
      : bytes === 0 ? undefined : blankOrItem(line, parts.length === 1 ? parts[0] as Buffer : Buffer.concat(parts, bytes));
    parts = [];
    bytes = 0;
    tooLong = false;
    return result;
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!tooLong && end > start) {
        bytes += end - start;
        if (bytes > ITEM_BYTES_MAX) {
          tooLong = true;
          parts = [];
        } else {
          // A view, not a copy: a batch pins at most the chunks its own lines span.
          parts.push(chunk.subarray(start, end));
        }
      }
      if (nl < 0) break;
      const item = finish();
      if (item !== undefined) yield item;
      start = nl + 1;
    }
  }
  if (bytes > 0 || tooLong) {
    const item = finish();
    if (item !== undefined) yield item;
  }
}

function blankOrItem(line: number, bytes: Buffer): Item | undefined {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return { number: line, bytes };
  }
  return undefined;
}

/** MessagePack values back to back, numbered from 1; their bytes are checked by the server. */
export async function* msgpackItems(chunks: AsyncIterable<Buffer>): AsyncGenerator<Item | BadItem> {
  let buffered: Buffer = Buffer.alloc(0);
  let number = 0;
  for await (const chunk of chunks) {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    let start = 0;
    for (;;) {
      const length = msgpackValueLength(buffered, start);
      if (length < 0) break;
      number++;
      if (length > ITEM_BYTES_MAX) {
        // The framing of what follows is unknown: nothing after this value can be trusted.
        yield { number, error: `a value larger than ${ITEM_BYTES_MAX} bytes: the rest of the input cannot be split` };
        return;
      }
      yield { number, bytes: buffered.subarray(start, start + length) };
      start += length;
    }
    if (buffered.length - start > ITEM_BYTES_MAX) {
      yield { number: number + 1, error: `a value larger than ${ITEM_BYTES_MAX} bytes: the rest of the input cannot be split` };
      return;
    }
    buffered = Buffer.from(buffered.subarray(start));
  }
  if (buffered.length > 0) yield { number: number + 1, error: `truncated: the input ends inside this value (${buffered.length} bytes)` };
}

function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as ErrorBody;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not an API error body: fall through to the status.
  }
  return `HTTP ${status}${text.length > 0 ? `: ${text.slice(0, 200)}` : ''}`;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${typeof code === 'string' ? `${code}: ` : ''}${err.message}${cause}`;
}
