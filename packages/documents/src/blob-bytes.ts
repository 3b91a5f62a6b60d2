/**
 * A blob's bytes as they arrived: one buffer, or the pieces a request body
 * was received in (the socket's reads, in order). A large stored-content
 * body is kept in its pieces from the socket to the volume file (`writev`,
 * a checksum over the pieces), never copied into one buffer of its size: at
 * 1 MiB and more that buffer was a fresh `mmap` faulted in page by page, and
 * external memory that drove V8's full collections (docs/operations.md).
 */
export type BlobBytes = Uint8Array | readonly Uint8Array[];

/** Whether `value` is a blob's bytes: binary, or an array of binary pieces (what arrives over the shard protocol is checked with it). */
export function isBlobBytes(value: unknown): value is BlobBytes {
  if (value instanceof Uint8Array) return true;
  return Array.isArray(value) && value.every((piece) => piece instanceof Uint8Array);
}

/** How many bytes the blob holds. */
export function blobLength(bytes: BlobBytes): number {
  if (bytes instanceof Uint8Array) return bytes.length;
  let n = 0;
  for (const part of bytes) n += part.length;
  return n;
}

/** The blob as pieces, in order. */
export function blobParts(bytes: BlobBytes): readonly Uint8Array[] {
  return bytes instanceof Uint8Array ? [bytes] : bytes;
}

/** The blob as one buffer: itself when it is one, else its pieces copied into one (for the few readers that need it whole). */
export function blobWhole(bytes: BlobBytes): Uint8Array {
  if (bytes instanceof Uint8Array) return bytes;
  return bytes.length === 1 ? bytes[0]! : Buffer.concat(bytes);
}
