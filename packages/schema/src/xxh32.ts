/**
 * XXH32 (Yann Collet's xxHash, 32-bit variant), synchronous and dependency
 * free: the default `_slot` of a field is xxh32 of its path (API.md §5.8) and
 * must be computed inside pure schema functions, where the async
 * xxhash-wasm loader cannot be awaited. Inputs are short field paths, so the
 * plain-JS version is plenty fast.
 */
const PRIME1 = 0x9e3779b1;
const PRIME2 = 0x85ebca77;
const PRIME3 = 0xc2b2ae3d;
const PRIME4 = 0x27d4eb2f;
const PRIME5 = 0x165667b1;

const utf8 = new TextEncoder();

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function round(acc: number, lane: number): number {
  return Math.imul(rotl((acc + Math.imul(lane, PRIME2)) | 0, 13), PRIME1);
}

function readU32(b: Uint8Array, i: number): number {
  return (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) | 0;
}

/** XXH32 of `input` (a string is hashed as its UTF-8 bytes); an unsigned 32-bit result. */
export function xxh32(input: Uint8Array | string, seed = 0): number {
  const b = typeof input === 'string' ? utf8.encode(input) : input;
  const len = b.length;
  let i = 0;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + PRIME1 + PRIME2) | 0;
    let v2 = (seed + PRIME2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME1) | 0;
    for (; i + 16 <= len; i += 16) {
      v1 = round(v1, readU32(b, i));
      v2 = round(v2, readU32(b, i + 4));
      v3 = round(v3, readU32(b, i + 8));
      v4 = round(v4, readU32(b, i + 12));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + PRIME5) | 0;
  }
  h = (h + len) | 0;
  for (; i + 4 <= len; i += 4) h = Math.imul(rotl((h + Math.imul(readU32(b, i), PRIME3)) | 0, 17), PRIME4);
  for (; i < len; i++) h = Math.imul(rotl((h + Math.imul(b[i]!, PRIME5)) | 0, 11), PRIME1);
  h = Math.imul(h ^ (h >>> 15), PRIME2);
  h = Math.imul(h ^ (h >>> 13), PRIME3);
  return (h ^ (h >>> 16)) >>> 0;
}
