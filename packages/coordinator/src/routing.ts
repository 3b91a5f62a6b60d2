/**
 * Document routing: shard = xxh32(utf8(id text)) mod number_of_shards, + 1.
 * The hash (xxhash-wasm, seed 0) is part of the on-disk contract: changing it
 * would strand every stored document on the wrong shard.
 */
import xxhash from 'xxhash-wasm';
import { idText, type DocumentId } from './documents/ids.js';

export class ShardRouter {
  private constructor(private readonly h32: (input: string, seed?: number) => number) {}

  static async create(): Promise<ShardRouter> {
    const { h32 } = await xxhash();
    return new ShardRouter(h32);
  }

  /** 1-based shard number of a document. */
  shardOf(id: DocumentId, shards: number): number {
    if (shards === 1) return 1;
    return (this.h32(idText(id), 0) % shards) + 1;
  }
}
