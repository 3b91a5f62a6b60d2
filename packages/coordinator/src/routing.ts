/**
 * Document routing: shard = xxh32(utf8(id text)) mod number_of_shards, + 1.
 * The hash (@tessera/schema's xxh32, seed 0) is part of the on-disk
 * contract: changing it would strand every stored document on the wrong shard.
 */
import { xxh32 } from '@tessera/schema';
import { idText, type DocumentId } from './documents/ids.js';

export class ShardRouter {
  /** 1-based shard number of a document. */
  shardOf(id: DocumentId, shards: number): number {
    if (shards === 1) return 1;
    return (xxh32(idText(id), 0) % shards) + 1;
  }
}
