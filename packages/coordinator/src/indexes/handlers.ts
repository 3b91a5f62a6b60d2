/**
 * The index API (API.md §7): create/update, get, exists, delete, info,
 * commit. Index lists apply in order and stop at the first failure.
 */
import { TesseraError } from '@tessera/errors';
import { describeSchema, searchableFields } from '@tessera/schema';
import { apiErrors } from '../errors.js';
import type { RequestContext } from '../request/context.js';
import { isInternalIndex } from '../request/path.js';
import type { Reply } from '../response/respond.js';
import { applySelector } from '../response/selector.js';
import type { IndexRegistry } from './registry.js';
import type { IndexMeta } from '../state/cluster-state.js';
import { parseSettings } from './settings.js';

export class IndexHandlers {
  constructor(private readonly registry: IndexRegistry) {}

  /** PUT or UPDATE /idx/: create if needed, fold `_settings` and `_schema` in. */
  async put(ctx: RequestContext): Promise<Reply> {
    const body = ctx.object('An index body');
    for (const key of Object.keys(body)) {
      if (key !== '_settings' && key !== '_schema' && !key.startsWith('#') && key.length > 0) throw apiErrors.unknownReservedKey(key);
    }
    const settings = body._settings === undefined ? undefined : parseSettings(body._settings);
    const results: Record<string, unknown> = {};
    for (const index of ctx.path.indexes) {
      if (isInternalIndex(index)) throw apiErrors.internalIndex(index);
      try {
        const meta = await this.registry.ensure(index, { settings, schema: body._schema });
        results[index] = describe(meta);
      } catch (err) {
        throw ctx.path.indexes.length > 1 ? withIndex(err, index) : err;
      }
    }
    if (!ctx.options.echo) return { status: 204 };
    return { status: 200, value: this.one(ctx, results) };
  }

  /** GET and HEAD /idx/. */
  async get(ctx: RequestContext): Promise<Reply> {
    const results: Record<string, unknown> = {};
    for (const index of ctx.path.indexes) results[index] = describe(this.existing(index));
    if (ctx.method === 'HEAD') return { status: 200 };
    let value = this.one(ctx, results);
    const selector = ctx.options.selector ?? ctx.path.selector;
    if (selector !== undefined) value = applySelector(value, selector);
    return { status: 200, value };
  }

  async delete(ctx: RequestContext): Promise<Reply> {
    for (const index of ctx.path.indexes) {
      if (isInternalIndex(index)) throw apiErrors.internalIndex(index);
      this.existing(index);
      try {
        await this.registry.drop(index);
      } catch (err) {
        throw ctx.path.indexes.length > 1 ? withIndex(err, index) : err;
      }
    }
    return { status: 204 };
  }

  /** INFO /idx/ (§7.4). */
  async info(ctx: RequestContext): Promise<Reply> {
    const results: Record<string, unknown> = {};
    for (const index of ctx.path.indexes) {
      const meta = this.existing(index);
      const stats = await this.registry.shardStats(meta, { lengths: true });
      const docCount = stats.reduce((sum, s) => sum + s.documents, 0);
      const lengths = stats.map((s) => s.lengths ?? { documents: 0, sum: 0, lower: 0, upper: 0 }).filter((l) => l.documents > 0);
      const lengthSum = lengths.reduce((sum, l) => sum + l.sum, 0);
      const lengthDocs = lengths.reduce((sum, l) => sum + l.documents, 0);
      // Each shard numbers its documents from 1; the sum is every #docid ever
      // assigned, so last_id − doc_count counts the deleted ones (doc_del).
      const lastId = stats.reduce((sum, s) => sum + s.lastDocid, 0);
      const name = index.slice(1, -1);
      const info: Record<string, unknown> = {
        endpoint: name,
        doc_count: docCount,
        last_id: lastId,
        doc_del: Math.max(0, lastId - docCount),
        // Xapian's figures: terms per document over every field (mean, smallest, largest), and whether text keeps positions.
        av_length: lengthDocs === 0 ? 0 : lengthSum / lengthDocs,
        doc_len_lower: lengths.length === 0 ? 0 : Math.min(...lengths.map((l) => l.lower)),
        doc_len_upper: lengths.length === 0 ? 0 : Math.max(...lengths.map((l) => l.upper)),
        has_positions: lengthSum > 0 && searchableFields(meta.schema).some((field) => field.type === 'text' && field.positions),
        shards: meta.allocation.map((_, i) => `${name}/.__${i + 1}`),
      };
      if (meta.settings.number_of_shards === 1) {
        info.uuid = meta.uuid;
        info.revision = stats[0]?.seq ?? 0;
      }
      results[index] = info;
    }
    return { status: 200, value: this.one(ctx, results) };
  }

  /** COMMIT /idx/: 200 once every shard is durable. */
  async commit(ctx: RequestContext): Promise<Reply> {
    for (const index of ctx.path.indexes) {
      const meta = this.existing(index);
      await Promise.all(meta.allocation.map((copies, i) =>
        Promise.all(copies.map((node) => this.registry.client(meta.path, node, i + 1).call('shard.commit', { index: meta.path, shard: i + 1 })))));
    }
    return { status: 200 };
  }

  private existing(index: string): IndexMeta {
    const meta = this.registry.get(index);
    if (!meta) throw apiErrors.indexNotFound(index);
    return meta;
  }

  /** One index answers its object; a list answers `{"/a/": …, "/b/": …}`. */
  private one(ctx: RequestContext, results: Record<string, unknown>): unknown {
    return ctx.path.indexes.length === 1 ? results[ctx.path.indexes[0] as string] : results;
  }
}

/** §7.2: settings (with the nodes of each shard) and the schema with `_id`'s type. */
export function describe(meta: IndexMeta): Record<string, unknown> {
  const described = describeSchema(meta.schema);
  const schema: Record<string, unknown> = { _type: described._type ?? 'object' };
  Object.assign(schema, described);
  // The ID's own type (a uuid index keeps its IDs as exact keyword terms inside the schema).
  if (meta.idType) schema._id = { _type: meta.idType === 'float' ? 'floating' : meta.idType };
  return {
    _settings: { ...meta.settings, shards: meta.allocation },
    _schema: schema,
  };
}

/** Name the index in a list operation's failure. */
function withIndex(err: unknown, index: string): unknown {
  if (err instanceof TesseraError && !err.message.includes(index)) {
    return new TesseraError(err.code, err.status, `${index}: ${err.message}`, { cause: err, details: err.details });
  }
  return err;
}
