/**
 * Stored content (API.md §6) of a shard copy: a write's blob appended to the
 * copy's volumes before the write links it, and a replicated change's blobs
 * linked into this copy's own volumes.
 */
import type { ContentLink, ContentWrite, StoredDocument } from '../documents/types.js';
import { engineErrors } from '../errors.js';
import type { ReplicatedChange } from '../replication/index.js';
import type { ShardState } from './state.js';

/** Append a blob to a volume (synced with `commit`) and return the link a write stores. */
export async function appendContent(state: ShardState, content: ContentWrite, commit: boolean): Promise<ContentLink> {
  const where = await state.content.append(content.bytes, commit);
  return { type: content.type, volume: where.volume, offset: where.offset, size: where.size, crc: where.crc };
}

/**
 * A replicated change's content entries as links into this copy's own
 * volumes: a blob the copy's current version already links (same size and
 * checksum) is reused, any other is appended from the bytes the change
 * carries. A change naming a blob it neither holds nor carries is refused:
 * the relay fails and the copy catches up from the primary's log, whose
 * entries carry their blobs.
 */
export async function linkReplicatedContent(state: ShardState, change: ReplicatedChange, current: StoredDocument | undefined,
  commit: boolean): Promise<ContentLink[]> {
  const links: ContentLink[] = [];
  for (const entry of change.content ?? []) {
    const held = current?.content?.find((link) => link.size === entry.size && link.crc === entry.crc);
    if (held !== undefined) {
      links.push({ type: entry.type, volume: held.volume, offset: held.offset, size: held.size, crc: held.crc });
      continue;
    }
    if (entry.bytes === undefined) throw engineErrors.contentMissing(change.id, entry.type);
    const link = await appendContent(state, { type: entry.type, bytes: entry.bytes }, commit);
    if (link.crc !== entry.crc || link.size !== entry.size) throw engineErrors.invalidWrite(`replicated content '${entry.type}' does not match its checksum`);
    links.push(link);
  }
  return links;
}
