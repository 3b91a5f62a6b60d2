/**
 * MessagePack request bodies (API.md §2.2): exactly one value. A linear,
 * iterative scan validates the whole body before @msgpack/msgpack decodes it:
 *   - every declared str/bin length and array/map count fits in the bytes
 *     left (each item takes ≥ 1 byte), so a str32 declaring 4 GB is refused
 *     from its 5-byte header and the decoder never sizes anything from a lie;
 *   - nesting depth, items of one array (`arrayItemsMax`), total map keys, `__proto__` keys, key types (string or
 *     integer), NaN/Infinity floats, UTF-8 of every string, extension types
 *     (refused: no JSON equivalent) and the reserved byte 0xc1;
 *   - nothing follows the value.
 * The decoder then runs on a body known to be well-formed: it is iterative
 * (its own stack) and its errors can only be our bugs, still reported as 400.
 */
import { isUtf8 } from 'node:buffer';
import { Decoder } from '@msgpack/msgpack';
import { TesseraError } from '@tessera/errors';
import { bodyMalformed, bodyTooDeep, invalidFieldName, tooManyArrayItems, tooManyFields } from './errors.js';
import { arrayItemsMaxOf } from './limits.js';
import type { DecodeLimits } from './types.js';

const WHAT = 'MessagePack';

const decoder = new Decoder();

export function decodeMsgpack(bytes: Uint8Array, limits: DecodeLimits): unknown {
  scanMsgpack(bytes, limits);
  try {
    return decoder.decode(bytes);
  } catch (err) {
    throw bodyMalformed(WHAT, err instanceof Error ? err.message : String(err), err);
  }
}

// "__proto__" in UTF-8, compared byte for byte against 9-byte string keys.
const PROTO_KEY = Buffer.from('__proto__', 'utf8');

// Strings shorter than this are checked for ASCII in JS; longer or non-ASCII
// ones go to the native validator (a call per string costs more than a short loop).
const ASCII_LOOP_MAX = 32;

// Per-level state of the scan, reused across calls (the scan is synchronous
// and never re-entered): allocating two typed arrays and a DataView per body
// cost more than scanning a 1 KiB document (Debian records, profiled: 4.7 µs
// per record with them, 1.4 µs without). Grown when depthMax asks for more.
let itemsLeftScratch = new Float64Array(256);
let isMapScratch = new Uint8Array(256);
const floatScratch = new DataView(new ArrayBuffer(8));

/** Validates one MessagePack value spanning all of `bytes`; throws TesseraError 400. */
export function scanMsgpack(bytes: Uint8Array, limits: DecodeLimits): void {
  const { depthMax, fieldsMax } = limits;
  const arrayItemsMax = arrayItemsMaxOf(limits);
  if (itemsLeftScratch.length < depthMax) {
    itemsLeftScratch = new Float64Array(depthMax);
    isMapScratch = new Uint8Array(depthMax);
  }
  const end = bytes.length;
  // Items still to read in each open container (a map of n entries has 2n)
  // and whether it is a map. Indexed by level; at most depthMax levels open.
  const itemsLeft = itemsLeftScratch;
  const isMap = isMapScratch;
  let level = 0;
  let fields = 0;
  let pos = 0;

  for (;;) {
    if (pos >= end) throw truncated(pos);
    const isKey = level > 0 && isMap[level - 1] === 1 && (itemsLeft[level - 1]! & 1) === 0;
    const b = bytes[pos]!;
    let strLength = -1;     // ≥ 0: a string body follows at pos
    let containerItems = -1; // ≥ 0: a container opens with that many items
    let containerIsMap = false;
    let scalarBytes = 0;    // > 0: a fixed-size scalar
    let isInteger = false;

    if (b <= 0x7f || b >= 0xe0) { scalarBytes = 1; isInteger = true; }                 // fixint
    else if (b <= 0x8f) { containerItems = b & 0x0f; containerIsMap = true; pos += 1; } // fixmap
    else if (b <= 0x9f) { containerItems = b & 0x0f; pos += 1; }                        // fixarray
    else if (b <= 0xbf) { strLength = b & 0x1f; pos += 1; }                              // fixstr
    else {
      switch (b) {
        case 0xc0: case 0xc2: case 0xc3: scalarBytes = 1; break;                         // nil, false, true
        case 0xc4: pos = binBody(bytes, pos, 1, end); break;                              // bin 8
        case 0xc5: pos = binBody(bytes, pos, 2, end); break;                              // bin 16
        case 0xc6: pos = binBody(bytes, pos, 4, end); break;                              // bin 32
        case 0xca: need(pos, 5, end); if (!Number.isFinite(floatAt(bytes, pos + 1, 4))) throw nonFinite(); scalarBytes = 5; break;
        case 0xcb: need(pos, 9, end); if (!Number.isFinite(floatAt(bytes, pos + 1, 8))) throw nonFinite(); scalarBytes = 9; break;
        case 0xcc: case 0xd0: scalarBytes = 2; isInteger = true; break;                  // (u)int 8
        case 0xcd: case 0xd1: scalarBytes = 3; isInteger = true; break;                  // (u)int 16
        case 0xce: case 0xd2: scalarBytes = 5; isInteger = true; break;                  // (u)int 32
        case 0xcf: case 0xd3: scalarBytes = 9; isInteger = true; break;                  // (u)int 64
        case 0xd9: need(pos, 2, end); strLength = bytes[pos + 1]!; pos += 2; break;      // str 8
        case 0xda: need(pos, 3, end); strLength = uint16At(bytes, pos + 1); pos += 3; break;
        case 0xdb: need(pos, 5, end); strLength = uint32At(bytes, pos + 1); pos += 5; break;
        case 0xdc: need(pos, 3, end); containerItems = uint16At(bytes, pos + 1); pos += 3; break;
        case 0xdd: need(pos, 5, end); containerItems = uint32At(bytes, pos + 1); pos += 5; break;
        case 0xde: need(pos, 3, end); containerItems = uint16At(bytes, pos + 1); containerIsMap = true; pos += 3; break;
        case 0xdf: need(pos, 5, end); containerItems = uint32At(bytes, pos + 1); containerIsMap = true; pos += 5; break;
        case 0xc1: throw bodyMalformed(WHAT, `reserved byte 0xc1 at offset ${pos}`);
        default: // 0xc7-0xc9 ext 8/16/32, 0xd4-0xd8 fixext
          throw bodyMalformed(WHAT, `extension type at offset ${pos} is not supported`);
      }
    }

    if (isKey && strLength < 0 && !isInteger) {
      throw bodyMalformed(WHAT, `map key at offset ${pos} is neither a string nor an integer`);
    }

    if (scalarBytes > 0) {
      need(pos, scalarBytes, end);
      pos += scalarBytes;
    } else if (strLength >= 0) {
      if (strLength > end - pos) throw declaredTooLong('string', strLength, pos, end);
      if (!isUtf8Range(bytes, pos, strLength)) throw bodyMalformed(WHAT, `invalid UTF-8 in string at offset ${pos}`);
      if (isKey && strLength === PROTO_KEY.length && isProtoKey(bytes, pos)) throw invalidFieldName('__proto__');
      pos += strLength;
    } else if (containerItems > 0) {
      if (level >= depthMax) throw bodyTooDeep(depthMax);
      const items = containerIsMap ? containerItems * 2 : containerItems;
      if (items > end - pos) throw declaredTooLong(containerIsMap ? 'map' : 'array', containerItems, pos, end);
      if (containerIsMap) {
        fields += containerItems;
        if (fields > fieldsMax) throw tooManyFields(fieldsMax);
      } else if (containerItems > arrayItemsMax) {
        throw tooManyArrayItems(arrayItemsMax);
      }
      itemsLeft[level] = items;
      isMap[level] = containerIsMap ? 1 : 0;
      level++;
      continue; // its first item follows
    } else if (containerItems === 0) {
      if (level >= depthMax) throw bodyTooDeep(depthMax);
    }
    // else: bin, already skipped by binBody

    // One item is complete: close every container it completes.
    while (level > 0) {
      const left = itemsLeft[level - 1]! - 1;
      itemsLeft[level - 1] = left;
      if (left > 0) break;
      level--;
    }
    if (level === 0) break;
  }
  if (pos !== end) throw bodyMalformed(WHAT, `${end - pos} extra bytes after the value at offset ${pos}`);
}

/** Skips a bin header of `lengthBytes` and its body; returns the new position. */
function binBody(bytes: Uint8Array, pos: number, lengthBytes: 1 | 2 | 4, end: number): number {
  need(pos, 1 + lengthBytes, end);
  const length = lengthBytes === 1 ? bytes[pos + 1]! : lengthBytes === 2 ? uint16At(bytes, pos + 1) : uint32At(bytes, pos + 1);
  const start = pos + 1 + lengthBytes;
  if (length > end - start) throw declaredTooLong('bin', length, start, end);
  return start + length;
}

// Big-endian reads; callers have checked the bytes are there.
function uint16At(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 8) | bytes[at + 1]!;
}

function uint32At(bytes: Uint8Array, at: number): number {
  return bytes[at]! * 0x1000000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
}

function floatAt(bytes: Uint8Array, at: number, size: 4 | 8): number {
  for (let i = 0; i < size; i++) floatScratch.setUint8(i, bytes[at + i]!);
  return size === 4 ? floatScratch.getFloat32(0) : floatScratch.getFloat64(0);
}

function isUtf8Range(bytes: Uint8Array, start: number, length: number): boolean {
  if (length <= ASCII_LOOP_MAX) {
    let i = start;
    const stop = start + length;
    while (i < stop && bytes[i]! < 0x80) i++;
    if (i === stop) return true;
  }
  return isUtf8(bytes.subarray(start, start + length));
}

function isProtoKey(bytes: Uint8Array, start: number): boolean {
  for (let i = 0; i < PROTO_KEY.length; i++) if (bytes[start + i] !== PROTO_KEY[i]) return false;
  return true;
}

function need(pos: number, count: number, end: number): void {
  if (count > end - pos) throw truncated(pos);
}

function truncated(pos: number): TesseraError {
  return bodyMalformed(WHAT, `unexpected end of data at offset ${pos}`);
}

function declaredTooLong(kind: string, length: number, pos: number, end: number): TesseraError {
  return bodyMalformed(WHAT, `${kind} at offset ${pos} declares ${length} ${kind === 'array' || kind === 'map' ? 'items' : 'bytes'} but only ${end - pos} bytes remain`);
}

function nonFinite(): TesseraError {
  return bodyMalformed(WHAT, 'NaN and Infinity are not allowed');
}
