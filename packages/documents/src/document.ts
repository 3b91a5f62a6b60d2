/** A document as a shard copy holds it: its ID, its body, its stored content entries. */

/** A document ID in its index's `_id` type (integer IDs are numbers). */
export type DocumentId = string | number;

/** A plain JSON-like document body (null prototype not required). */
export type DocumentBody = Record<string, unknown>;

/**
 * A stored content entry (API.md §6): a blob in the shard's content volumes
 * (`volume`, `offset`, `size`, `crc`: the engine's BlobLocation), linked
 * under a media type (`type`, as the client's Content-Type gave it).
 */
export interface ContentLink {
  type: string;
  /** Volume number (1-based). */
  volume: number;
  /** Offset of the blob's frame in the volume. */
  offset: number;
  /** Bytes of the blob (the frame header excluded). */
  size: number;
  /** CRC-32 of the blob's bytes. */
  crc: number;
}
