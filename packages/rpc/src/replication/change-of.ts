import { blobLength, mediaTypeOf } from '@tessera/documents';
import type { ReplicatedChange, ReplicatedContent, WriteCall, WriteReply } from '../protocol.js';

/**
 * The change a primary's write reply stands for, under the term it ran in.
 * Content entries travel by size and checksum; the blob the write stored
 * travels with its bytes (in-sync replicas hold the others already; one that
 * does not refuses the change and catches up from the primary's log).
 */
export function changeOf(reply: WriteReply, term: number, stored?: WriteCall['content']): ReplicatedChange {
  const change: ReplicatedChange = {
    seq: reply.seq, id: reply.id, version: reply.version, deleted: reply.deleted, originTerm: term, originSeq: reply.seq,
  };
  if (reply.body !== undefined) change.body = reply.body;
  if (reply.indexed !== undefined) change.indexed = reply.indexed;
  if (reply.content !== undefined) {
    const storedSize = stored === undefined ? 0 : blobLength(stored.bytes);
    const storedType = storedSize > 0 ? mediaTypeOf(stored!.type) : undefined;
    change.content = reply.content.map((entry) => {
      const message: ReplicatedContent = { type: entry.type, size: entry.size, crc: entry.crc };
      if (storedType !== undefined && mediaTypeOf(entry.type) === storedType && entry.size === storedSize) message.bytes = stored!.bytes;
      return message;
    });
  }
  return change;
}
