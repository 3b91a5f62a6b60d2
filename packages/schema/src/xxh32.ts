/**
 * XXH32 (Yann Collet's xxHash, 32-bit variant) through xxhash-wasm, the one
 * implementation of the project: the default `_slot` of a field is xxh32 of
 * its path, and a document's shard is xxh32 of its ID text (coordinator
 * routing). The WebAssembly module is instantiated once, when this module is
 * loaded (a top-level await), so the hash stays a synchronous call inside
 * pure schema functions.
 */
import xxhash from 'xxhash-wasm';

const hasher = await xxhash();

/** XXH32 of a string's UTF-8 bytes, or of bytes, with `seed`: an unsigned 32-bit integer. */
export function xxh32(input: Uint8Array | string, seed = 0): number {
  return typeof input === 'string' ? hasher.h32(input, seed) : hasher.h32Raw(input, seed);
}
