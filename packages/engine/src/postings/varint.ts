/**
 * Reading the unsigned LEB128 varints ByteSink writes. Hot loops inline the
 * same decoding; this cursor is for headers, dictionaries and tests, where a
 * method call per value is cheap enough.
 */

/** A read position over bytes; `pos` advances as values are read. */
export class VarintReader {
  constructor(public bytes: Uint8Array, public pos = 0) {}

  readVarint(): number {
    const b = this.bytes;
    let p = this.pos;
    let byte = b[p++]!;
    let value = byte & 0x7f;
    if (byte >= 0x80) {
      byte = b[p++]!;
      value |= (byte & 0x7f) << 7;
      if (byte >= 0x80) {
        byte = b[p++]!;
        value |= (byte & 0x7f) << 14;
        if (byte >= 0x80) {
          byte = b[p++]!;
          value |= (byte & 0x7f) << 21;
          if (byte >= 0x80) {
            byte = b[p++]!;
            value = (value >>> 0) + (byte & 0x7f) * 268435456;
          }
        }
      }
    }
    this.pos = p;
    return value;
  }

  readUint32(): number {
    const b = this.bytes;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }
}

/** Little-endian uint32 at `p` (any alignment). */
export function readUint32At(b: Uint8Array, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}

/** Position just past the varint starting at `p`. */
export function skipVarint(b: Uint8Array, p: number): number {
  while (b[p++]! >= 0x80);
  return p;
}
