/**
 * Streamed sequences of documents for bulk bodies (API.md §7.7 RESTORE): a
 * JSON array, NDJSON, or a MessagePack sequence, decoded item by item from a
 * stream of chunks with memory bounded by the largest item, not the body.
 * Each item is validated like a whole body (depth, fields, `__proto__`,
 * UTF-8); a bad item becomes an item error and the rest goes on. Only a
 * framing error — the boundaries of later items can no longer be found — ends
 * the sequence, with a 400.
 */
import { TesseraError } from '@tessera/errors';
import { bodyMalformed } from './errors.js';
import { parseJsonText } from './json.js';
import { mediaTypeOf } from './media-type.js';
import { decodeMsgpack } from './msgpack.js';
import type { DecodeLimits } from './types.js';
import { decodeUtf8 } from './utf8.js';

export interface SequenceItem {
  /** 0-based position of the item in the body. */
  index: number;
  value?: unknown;
  error?: TesseraError;
}

export type SequenceFormat = 'ndjson' | 'json' | 'msgpack';

/** The sequence format of a Content-Type, or undefined when it cannot carry a sequence. */
export function sequenceFormatOf(contentType: string | undefined): SequenceFormat | undefined {
  switch (mediaTypeOf(contentType)) {
    case 'application/ndjson': case 'application/x-ndjson': return 'ndjson';
    case '': case 'application/json': case 'application/x-json': return 'json';
    case 'application/msgpack': case 'application/x-msgpack': return 'msgpack';
    default: return undefined;
  }
}

/**
 * The items of the sequence, in order, as one array per chunk of the body
 * (possibly empty): a consumer awaits once per chunk, not once per item.
 */
export async function* decodeSequence(
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  format: SequenceFormat,
  limits: DecodeLimits,
  itemBytesMax: number,
): AsyncGenerator<SequenceItem[]> {
  const framer = format === 'ndjson' ? new LineFramer(itemBytesMax) : format === 'json' ? new JsonArrayFramer(itemBytesMax) : new MsgpackFramer(itemBytesMax);
  let index = 0;
  const decode = (pieces: Array<Buffer | TesseraError>): SequenceItem[] => pieces.map((piece) => decodeItem(piece, index++, format, limits));
  for await (const chunk of chunks) yield decode(framer.push(chunk));
  yield decode(framer.end());
}

function decodeItem(piece: Buffer | TesseraError, index: number, format: SequenceFormat, limits: DecodeLimits): SequenceItem {
  if (piece instanceof TesseraError) return { index, error: piece };
  try {
    const value = format === 'msgpack'
      ? decodeMsgpack(piece, limits)
      : parseJsonText(decodeUtf8(piece, format === 'ndjson' ? 'NDJSON' : 'JSON'), limits, format === 'ndjson' ? 'NDJSON' : 'JSON');
    return { index, value };
  } catch (err) {
    if (err instanceof TesseraError) return { index, error: err };
    throw err;
  }
}

/** Splits bytes into items; items over the size bound come out as errors. */
interface Framer {
  push(chunk: Buffer): Array<Buffer | TesseraError>;
  end(): Array<Buffer | TesseraError>;
}

const itemTooLarge = (max: number) => bodyMalformed('sequence', `an item is larger than ${max} bytes`);

/** NDJSON: one item per non-blank line. An over-long line is skipped to its end and reported. */
class LineFramer implements Framer {
  private parts: Buffer[] = [];
  private bytes = 0;
  private skipping = false;

  constructor(private readonly itemBytesMax: number) {}

  push(chunk: Buffer): Array<Buffer | TesseraError> {
    const out: Array<Buffer | TesseraError> = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.skipping) {
        this.bytes += end - start;
        if (this.bytes > this.itemBytesMax) {
          this.skipping = true;
          this.parts = [];
          out.push(itemTooLarge(this.itemBytesMax));
        } else if (end > start) {
          this.parts.push(chunk.subarray(start, end));
        }
      }
      if (nl < 0) return out;
      this.finishLine(out);
      start = nl + 1;
    }
  }

  end(): Array<Buffer | TesseraError> {
    const out: Array<Buffer | TesseraError> = [];
    this.finishLine(out);
    return out;
  }

  private finishLine(out: Array<Buffer | TesseraError>): void {
    if (!this.skipping) {
      const line = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
      if (!isBlank(line)) out.push(line);
    }
    this.parts = [];
    this.bytes = 0;
    this.skipping = false;
  }
}

function isBlank(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as number;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * A JSON array, split at its top-level commas by a byte scanner that tracks
 * strings (with escapes), nesting and comments, so each element is parsed on
 * its own (JSON5 comments and trailing commas allowed, as in bodies).
 */
class JsonArrayFramer implements Framer {
  private state: 'before' | 'inside' | 'after' = 'before';
  private depth = 0;
  private inString = 0; // the quote byte, 0 when outside strings
  private escaped = false;
  private comment: 'none' | 'line' | 'block' = 'none';
  private pendingSlash = false;
  private pendingStar = false;
  private parts: Buffer[] = [];
  private bytes = 0;
  private elementStarted = false;

  constructor(private readonly itemBytesMax: number) {}

  push(chunk: Buffer): Array<Buffer | TesseraError> {
    const out: Array<Buffer | TesseraError> = [];
    let elementStart = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i] as number;
      if (this.comment === 'line') { if (c === 0x0a) this.comment = 'none'; continue; }
      if (this.comment === 'block') {
        if (this.pendingStar && c === 0x2f) this.comment = 'none';
        this.pendingStar = c === 0x2a;
        continue;
      }
      if (this.inString !== 0) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === this.inString) this.inString = 0;
        continue;
      }
      if (this.pendingSlash) {
        this.pendingSlash = false;
        if (c === 0x2f) { this.comment = 'line'; continue; }
        if (c === 0x2a) { this.comment = 'block'; this.pendingStar = false; continue; }
        throw bodyMalformed('JSON', "unexpected '/'");
      }
      if (c === 0x2f) { this.pendingSlash = true; continue; }
      if (this.state === 'before') {
        if (c === 0x5b) { this.state = 'inside'; elementStart = i + 1; continue; }
        if (isSpace(c) || c === 0xef || c === 0xbb || c === 0xbf) continue; // whitespace, UTF-8 BOM
        throw bodyMalformed('JSON', 'a bulk body must be a JSON array');
      }
      if (this.state === 'after') {
        if (isSpace(c)) continue;
        throw bodyMalformed('JSON', 'unexpected data after the array');
      }
      // Inside the array.
      if (c === 0x22 || c === 0x27) { this.inString = c; this.elementStarted = true; continue; }
      if (c === 0x5b || c === 0x7b) { this.depth++; this.elementStarted = true; continue; }
      if ((c === 0x5d || c === 0x7d) && this.depth > 0) { this.depth--; continue; }
      if (this.depth === 0 && (c === 0x2c || c === 0x5d)) {
        this.collect(chunk, elementStart, i, out);
        this.emit(out, c === 0x5d);
        if (c === 0x5d) this.state = 'after';
        elementStart = i + 1;
        continue;
      }
      if (!isSpace(c)) this.elementStarted = true;
    }
    if (this.state === 'inside') this.collect(chunk, elementStart, chunk.length, out);
    return out;
  }

  end(): Array<Buffer | TesseraError> {
    if (this.state !== 'after') throw bodyMalformed('JSON', 'the array is not closed');
    return [];
  }

  private collect(chunk: Buffer, start: number, end: number, out: Array<Buffer | TesseraError>): void {
    if (end <= start || this.bytes < 0) return;
    this.bytes += end - start;
    if (this.bytes > this.itemBytesMax) {
      out.push(itemTooLarge(this.itemBytesMax));
      this.parts = [];
      this.bytes = -1; // skip the rest of this element
      return;
    }
    this.parts.push(chunk.subarray(start, end));
  }

  /** An element ended (at a comma or the closing bracket). */
  private emit(out: Array<Buffer | TesseraError>, closing: boolean): void {
    const skipped = this.bytes < 0;
    const started = this.elementStarted;
    const element = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    this.parts = [];
    this.bytes = 0;
    this.elementStarted = false;
    if (skipped) return;
    if (!started) {
      // `[]` and a trailing comma before `]` are fine; an empty element between commas is not.
      if (!closing) out.push(bodyMalformed('JSON', 'empty array element'));
      return;
    }
    out.push(element);
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * A MessagePack sequence: values back to back. The framer measures each value
 * by counting the items still owed (a container adds its count, a map twice),
 * with no recursion; the value's own bytes are then fully validated.
 */
class MsgpackFramer implements Framer {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly itemBytesMax: number) {}

  push(chunk: Buffer): Array<Buffer | TesseraError> {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const out: Array<Buffer | TesseraError> = [];
    let start = 0;
    for (;;) {
      const length = msgpackValueLength(this.buffered, start);
      if (length < 0) break;
      if (length > this.itemBytesMax) throw bodyMalformed('MessagePack', `an item is larger than ${this.itemBytesMax} bytes`);
      out.push(this.buffered.subarray(start, start + length));
      start += length;
    }
    if (this.buffered.length - start > this.itemBytesMax) {
      throw bodyMalformed('MessagePack', `an item is larger than ${this.itemBytesMax} bytes`);
    }
    this.buffered = start === 0 ? this.buffered : Buffer.from(this.buffered.subarray(start));
    return out;
  }

  end(): Array<Buffer | TesseraError> {
    if (this.buffered.length > 0) throw bodyMalformed('MessagePack', 'the last item is truncated');
    return [];
  }
}

/** Bytes taken by the MessagePack value starting at `start`, or -1 when the buffer ends first. */
export function msgpackValueLength(bytes: Buffer, start: number): number {
  let pos = start;
  let owed = 1;
  const end = bytes.length;
  while (owed > 0) {
    if (pos >= end) return -1;
    owed--;
    const b = bytes[pos] as number;
    let header = 1;
    let payload = 0;
    let items = 0;
    if (b <= 0x7f || b >= 0xe0) { /* fixint */ }
    else if (b <= 0x8f) items = 2 * (b & 0x0f);
    else if (b <= 0x9f) items = b & 0x0f;
    else if (b <= 0xbf) payload = b & 0x1f;
    else {
      const need = (n: number) => pos + 1 + n <= end;
      switch (b) {
        case 0xc0: case 0xc1: case 0xc2: case 0xc3: break;
        case 0xc4: case 0xd9: if (!need(1)) return -1; header = 2; payload = bytes.readUInt8(pos + 1); break;
        case 0xc5: case 0xda: if (!need(2)) return -1; header = 3; payload = bytes.readUInt16BE(pos + 1); break;
        case 0xc6: case 0xdb: if (!need(4)) return -1; header = 5; payload = bytes.readUInt32BE(pos + 1); break;
        case 0xc7: if (!need(1)) return -1; header = 3; payload = bytes.readUInt8(pos + 1); break;
        case 0xc8: if (!need(2)) return -1; header = 4; payload = bytes.readUInt16BE(pos + 1); break;
        case 0xc9: if (!need(4)) return -1; header = 6; payload = bytes.readUInt32BE(pos + 1); break;
        case 0xca: case 0xce: case 0xd2: header = 5; break;
        case 0xcb: case 0xcf: case 0xd3: header = 9; break;
        case 0xcc: case 0xd0: header = 2; break;
        case 0xcd: case 0xd1: header = 3; break;
        case 0xd4: header = 3; break;
        case 0xd5: header = 4; break;
        case 0xd6: header = 6; break;
        case 0xd7: header = 10; break;
        case 0xd8: header = 18; break;
        case 0xdc: if (!need(2)) return -1; header = 3; items = bytes.readUInt16BE(pos + 1); break;
        case 0xdd: if (!need(4)) return -1; header = 5; items = bytes.readUInt32BE(pos + 1); break;
        case 0xde: if (!need(2)) return -1; header = 3; items = 2 * bytes.readUInt16BE(pos + 1); break;
        case 0xdf: if (!need(4)) return -1; header = 5; items = 2 * bytes.readUInt32BE(pos + 1); break;
        default: break;
      }
    }
    pos += header + payload;
    // Each owed item takes at least one byte: a count beyond the bytes possible is caught by the value's own validation.
    owed += items;
    if (owed > 0x7fffffff) return Number.MAX_SAFE_INTEGER;
  }
  return pos <= end ? pos - start : -1;
}
