/**
 * A request body's bytes as the pieces they arrived in, in order: slices of
 * the socket's Buffers (which Node never reuses), with runs of short pieces
 * copied into a shared buffer. A client sending a body in 1-byte chunks (or
 * 1-byte TCP segments) would otherwise make the body a million Buffer
 * objects per MiB, ~115 bytes of heap for each byte of body; coalesced, a
 * body holds at most one object per PIECE_COPY_BYTES.
 *
 * Used by the parser for a body it gathers (RequestParser) and by a streamed
 * body's buffer (RequestBodyStream).
 */

/** Pieces shorter than this are copied into the coalescing buffer instead of kept as slices. */
export const PIECE_COPY_BYTES = 4 * 1024;
/** Size of a coalescing buffer: under malloc's 128 KiB mmap threshold (docs/operations.md "Node flags"). */
const COALESCE_BYTES = 16 * 1024;

/** Written over taken slots so the array does not keep handed-out Buffers alive. */
const EMPTY = Buffer.alloc(0);

export class BodyPieces {
  /** Pieces not yet taken; `first` indexes the next one (shift() on a long array is O(n)). */
  private pieces: Buffer[] = [];
  private first = 0;
  /** Open coalescing buffer for short pieces, logically after `pieces`. */
  private tail: Buffer | null = null;
  private tailBytes = 0;
  /** Bytes held (pushed and not taken). */
  bytes = 0;

  /** Append `data` (a slice the collector may keep). */
  push(data: Buffer): void {
    const n = data.length;
    if (n === 0) return;
    if (n < PIECE_COPY_BYTES) {
      let tail = this.tail;
      if (tail === null || tail.length - this.tailBytes < n) {
        if (tail !== null) this.closeTail();
        tail = this.tail = Buffer.allocUnsafe(COALESCE_BYTES);
      }
      data.copy(tail, this.tailBytes);
      this.tailBytes += n;
    } else {
      if (this.tail !== null) this.closeTail();
      this.pieces.push(data);
    }
    this.bytes += n;
  }

  /** The next piece, or undefined when none is held. */
  shift(): Buffer | undefined {
    let piece: Buffer;
    if (this.first < this.pieces.length) {
      piece = this.pieces[this.first]!;
      this.pieces[this.first++] = EMPTY;
      if (this.first === this.pieces.length) {
        this.pieces.length = 0;
        this.first = 0;
      }
    } else if (this.tail !== null) {
      piece = this.tail.subarray(0, this.tailBytes);
      this.tail = null;
      this.tailBytes = 0;
    } else {
      return undefined;
    }
    this.bytes -= piece.length;
    return piece;
  }

  /** Every piece held, in order; the collector is then empty. */
  takeAll(): Buffer[] {
    if (this.tail !== null) this.closeTail();
    const all = this.first === 0 ? this.pieces : this.pieces.slice(this.first);
    this.pieces = [];
    this.first = 0;
    this.bytes = 0;
    return all;
  }

  /** Everything held as one Buffer (no copy when it is one piece); the collector is then empty. */
  join(): Buffer {
    const bytes = this.bytes;
    const all = this.takeAll();
    return all.length === 1 ? all[0]! : Buffer.concat(all, bytes);
  }

  clear(): void {
    this.pieces = [];
    this.first = 0;
    this.tail = null;
    this.tailBytes = 0;
    this.bytes = 0;
  }

  private closeTail(): void {
    this.pieces.push(this.tail!.subarray(0, this.tailBytes));
    this.tail = null;
    this.tailBytes = 0;
  }
}
