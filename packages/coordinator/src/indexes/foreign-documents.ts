/**
 * The documents holding foreign schemas (API.md §8.9), read and written
 * through the coordinator's ordinary document path: `prepare` resolves the
 * index (creating it), the ID and the shard; the write goes to the primary
 * and its in-sync replicas like any PUT.
 */
import { bodyOf, type WriteReply } from '@tessera/rpc';
import { convertId } from '../documents/ids.js';
import type { DocumentHandlers } from '../documents/handlers.js';
import type { ShardRouter } from '../routing.js';
import type { IndexRegistry } from './registry.js';
import type { ForeignDocuments } from './schema-policy.js';

export function foreignDocuments(registry: IndexRegistry, documents: DocumentHandlers, router: ShardRouter): ForeignDocuments {
  return {
    async read(index, idText) {
      const meta = registry.get(index);
      if (meta === undefined || meta.idType === undefined) return undefined;
      const id = convertId(idText, meta.idType);
      const shard = router.shardOf(id, meta.settings.number_of_shards);
      const doc = await documents.replication.read(meta, shard, 'doc.get', { index: meta.path, shard, id });
      return doc === null ? undefined : bodyOf(doc);
    },
    async write(index, idText, body) {
      // `_settings: {}`: the holder's index may be created here, and `--strict` asks every new index for settings.
      const write = await documents.prepare(index, { _settings: {}, ...body }, idText, undefined);
      const { meta, shard, id } = write.target;
      await documents.replication.write(meta, shard, {
        index: meta.path, shard, id, op: 'index', body: write.body, schema: meta.schema,
      }) as WriteReply;
    },
  };
}
