/**
 * The chunked transfer coding (RFC 9112 §7.1): chunk-size lines, trailer
 * field lines, and the reader of CRLF-terminated lines that may span the
 * socket's Buffers. The parser drives them; what is here keeps no state of a
 * request but the line being read.
 */
import { CR, HTAB, LF, SP } from './ascii.js';
import { TOKEN } from './tokens.js';

const EMPTY = Buffer.alloc(0);

/**
 * Longest chunk-size line (size, extensions, CRLF) accepted. Extensions are
 * ignored, so there is no reason to buffer more; longer → 400.
 */
export const CHUNK_LINE_BYTES_MAX = 4096;

/** Hex digits beyond leading zeros in a chunk size: 12 digits = 2^48 bytes, above any body limit. */
const CHUNK_SIZE_DIGITS_MAX = 12;

/** parseChunkSize: more hex digits than CHUNK_SIZE_DIGITS_MAX (beyond any body limit). */
export const CHUNK_SIZE_TOO_LARGE = -1;
const CHUNK_SIZE_NOT_HEX = -2;
const CHUNK_SIZE_TRAILING_BYTES = -3;
const CHUNK_EXTENSION_CONTROL = -4;

/** Why a chunk-size line is malformed, by parseChunkSize's result. */
export function chunkSizeError(result: number): string {
  switch (result) {
    case CHUNK_SIZE_NOT_HEX: return 'chunk size is not hexadecimal';
    case CHUNK_SIZE_TRAILING_BYTES: return 'unexpected bytes after the chunk size';
    case CHUNK_EXTENSION_CONTROL: return 'control character in chunk extension';
    default: return 'chunk size';
  }
}

/**
 * The size of the chunk-size line buf[start, end) (CRLF excluded): 0 for the
 * last chunk, CHUNK_SIZE_TOO_LARGE, or another negative value for a
 * malformed line (chunkSizeError says why). Extensions are ignored.
 */
export function parseChunkSize(buf: Buffer, start: number, end: number): number {
  let i = start;
  let size = 0;
  let digits = 0;
  let sawDigit = false;
  for (; i < end; i++) {
    const d = hexValue(buf[i]!);
    if (d < 0) break;
    sawDigit = true;
    if (digits === 0 && d === 0) continue;
    if (++digits <= CHUNK_SIZE_DIGITS_MAX) size = size * 16 + d;
  }
  if (!sawDigit) return CHUNK_SIZE_NOT_HEX;
  // Only BWS ";" extensions may follow the size; they are ignored but must hold no control characters.
  let j = i;
  while (j < end && (buf[j] === SP || buf[j] === HTAB)) j++;
  if (j < end && buf[j] !== 59 /* ; */) return CHUNK_SIZE_TRAILING_BYTES;
  for (; j < end; j++) {
    const b = buf[j]!;
    if ((b < 32 && b !== HTAB) || b === 127) return CHUNK_EXTENSION_CONTROL;
  }
  return digits > CHUNK_SIZE_DIGITS_MAX ? CHUNK_SIZE_TOO_LARGE : size;
}

function hexValue(b: number): number {
  if (b >= 48 && b <= 57) return b - 48;
  if (b >= 97 && b <= 102) return b - 87;
  if (b >= 65 && b <= 70) return b - 55;
  return -1;
}

const INVALID_FIELD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Why a trailer line is not a valid field line, or null. */
export function trailerLineError(line: string): string | null {
  const c0 = line.charCodeAt(0);
  if (c0 === SP || c0 === HTAB) return 'line folding (obs-fold) is not allowed';
  const colon = line.indexOf(':');
  if (colon <= 0) return 'missing colon or name';
  if (!TOKEN.test(line.slice(0, colon))) return 'name is not a token';
  if (INVALID_FIELD_VALUE.test(line.slice(colon + 1))) return 'control character in value';
  return null;
}

/** LineReader.read: the line is incomplete (kept for the next Buffer). */
export const LINE_INCOMPLETE = -1;
/** LineReader.read: the line is longer than allowed. */
export const LINE_TOO_LONG = -2;
/** LineReader.read: the line does not end in CRLF. */
export const LINE_BAD_ENDING = -3;

/**
 * Reads CRLF-terminated lines (chunk sizes, trailers) from a sequence of
 * Buffers. A line within one Buffer is read in place; one spanning Buffers
 * is copied into an accumulator that grows as needed (up to the `max` the
 * caller allows).
 */
export class LineReader {
  /** The last complete line read: bytes [start, end) of buf, CRLF excluded. */
  buf: Buffer = EMPTY;
  start = 0;
  end = 0;
  /** A line spanning Buffers, copied here. */
  private acc: Buffer | null = null;
  private accLen = 0;

  /**
   * Read one line of at most `max` bytes (CRLF included) from chunk[off..].
   * Returns the offset after its LF with the line in buf[start, end), or
   * LINE_INCOMPLETE, LINE_TOO_LONG or LINE_BAD_ENDING.
   */
  read(chunk: Buffer, off: number, max: number): number {
    const lf = chunk.indexOf(LF, off);
    const n = (lf === -1 ? chunk.length : lf + 1) - off;
    if (this.accLen + n > max) return LINE_TOO_LONG;
    if (lf !== -1 && this.accLen === 0) {
      if (lf === off || chunk[lf - 1] !== CR) return LINE_BAD_ENDING;
      this.buf = chunk;
      this.start = off;
      this.end = lf - 1;
      return lf + 1;
    }
    const needed = this.accLen + n;
    let acc = this.acc;
    if (acc === null || acc.length < needed) {
      const grown = Buffer.allocUnsafe(Math.max(64, needed, (acc?.length ?? 0) * 2));
      if (acc !== null) acc.copy(grown, 0, 0, this.accLen);
      acc = this.acc = grown;
    }
    chunk.copy(acc, this.accLen, off, off + n);
    this.accLen = needed;
    if (lf === -1) return LINE_INCOMPLETE;
    this.accLen = 0;
    if (needed < 2 || acc[needed - 2] !== CR) return LINE_BAD_ENDING;
    this.buf = acc;
    this.start = 0;
    this.end = needed - 2;
    return lf + 1;
  }

  /** Drop the Buffers held (the parser is dead). */
  release(): void {
    this.acc = null;
    this.buf = EMPTY;
  }
}
