/**
 * How new indexes get their schema, beyond `createSchema`: the `--strict`
 * server option (API.md §8.8) and foreign schemas (§8.9). Kept apart from the
 * registry, which calls `prepareNewSchema` before it queues an index creation
 * and `foreignSchemaChanged` after a foreign schema grew.
 *
 * * Strict: a new index needs `_settings` (412), and its schema starts with
 *   `_strict: true` unless the `_schema` body says otherwise, so every new
 *   field needs `_type` (412) for as long as the index lives.
 * * Foreign: `"_schema": {"_type": "foreign/object", "_foreign": "<index>/<id>", …fields}`
 *   keeps the schema in the `schema` field of that document (a field with
 *   `_recurse: false`), created from the given fields when missing. Indexes
 *   naming the same document share one schema: the cluster state holds it on
 *   each of them, a change to one reaches them all in the same update, and
 *   the document is rewritten after it. Fixed at index creation; an unreadable
 *   target is a 400.
 */
import { TesseraError } from '@tessera/errors';
import { createSchema, isPlainObject, mergeSchema, type Schema } from '@tessera/schema';
import type { Logger } from 'pino';

const e = (code: string, status: number, message: string) => new TesseraError(code, status, message);

export const schemaPolicyErrors = {
  strictSettings: (index: string) =>
    e('strict_missing_settings', 412, `Index ${index} does not exist and strict mode needs '_settings' to create it`),
  badForeign: (why: string) => e('invalid_foreign_schema', 400, `Invalid foreign schema: ${why}`),
  foreignFixed: (index: string) => e('schema_immutable', 400, `The foreign schema of ${index} is fixed at its creation`),
};

/** Where a foreign schema lives: an index path (`/schemas/`) and a document ID as written. */
export interface ForeignReference {
  readonly index: string;
  readonly id: string;
}

/** How the policy reads and writes the document holding a foreign schema (the coordinator's ordinary document path). */
export interface ForeignDocuments {
  read(index: string, id: string): Promise<Record<string, unknown> | undefined>;
  write(index: string, id: string, body: Record<string, unknown>): Promise<void>;
}

export interface SchemaPolicyOptions {
  strict: boolean;
  documents?: ForeignDocuments;
  log?: Logger;
}

/** A new index's schema and, for a foreign one, where it lives (`/schemas/doc`). */
export interface NewSchema {
  readonly schema: Schema;
  readonly foreign?: string;
}

/** The `_foreign` reference of a `_schema` body, or undefined when it is not `foreign/object`. */
export function foreignReference(body: unknown): ForeignReference | undefined {
  if (!isPlainObject(body) || typeof body._type !== 'string') return undefined;
  const parts = body._type.toLowerCase().split('/');
  if (!parts.includes('foreign')) return undefined;
  if (parts.length !== 2 || !parts.includes('object')) throw schemaPolicyErrors.badForeign(`'_type' of a foreign schema is 'foreign/object', not '${body._type}'`);
  const target = body._foreign;
  if (typeof target !== 'string') throw schemaPolicyErrors.badForeign("'_foreign' must be '<index>/<id>'");
  const path = target.replace(/^\/+/, '');
  const slash = path.lastIndexOf('/');
  if (slash <= 0 || slash === path.length - 1) throw schemaPolicyErrors.badForeign(`'_foreign' must be '<index>/<id>', not '${target}'`);
  return { index: `/${path.slice(0, slash)}/`, id: path.slice(slash + 1) };
}

/** The fields of a `_schema` body without its foreign reference. */
export function withoutForeign(body: unknown): unknown {
  if (!isPlainObject(body)) return body;
  const { _type: _t, _foreign: _f, ...fields } = body;
  return fields;
}

export class SchemaPolicy {
  constructor(private readonly options: SchemaPolicyOptions) {}

  get strict(): boolean {
    return this.options.strict;
  }

  /**
   * The schema of index `index` about to be created from `body` (its
   * `_schema`), `settingsGiven` telling whether the request had `_settings`.
   * Runs before the registry's queue: reading or creating the foreign
   * document goes through the registry itself.
   */
  async prepareNewSchema(index: string, body: unknown, settingsGiven: boolean): Promise<NewSchema> {
    if (this.options.strict && !settingsGiven) throw schemaPolicyErrors.strictSettings(index);
    const ref = foreignReference(body);
    const fields = ref === undefined ? body : withoutForeign(body);
    const strictDefault = (schema: Schema): Schema =>
      this.options.strict && schema._strict === undefined ? { _strict: true, ...schema } : schema;
    if (ref === undefined) return { schema: strictDefault(createSchema(fields)) };
    return { schema: strictDefault(await this.foreignSchema(ref, fields)), foreign: `${ref.index}${ref.id}` };
  }

  /** The `_schema` body of a change to an existing index: a foreign reference must be the index's own. */
  existingSchemaChange(index: string, current: string | undefined, body: unknown): unknown {
    const ref = foreignReference(body);
    if (ref === undefined) return body;
    if (current !== `${ref.index}${ref.id}`) throw schemaPolicyErrors.foreignFixed(index);
    return withoutForeign(body);
  }

  /** Rewrite the document holding a foreign schema after the schema grew (best effort: the cluster state is the truth). */
  async foreignSchemaChanged(foreign: string, schema: Schema): Promise<void> {
    const documents = this.options.documents;
    if (documents === undefined) return;
    const slash = foreign.lastIndexOf('/');
    try {
      await documents.write(foreign.slice(0, slash + 1), foreign.slice(slash + 1), foreignDocument(schema));
    } catch (err) {
      this.options.log?.warn({ err, foreign }, 'could not rewrite the document of a foreign schema');
    }
  }

  private async foreignSchema(ref: ForeignReference, fields: unknown): Promise<Schema> {
    const documents = this.options.documents;
    if (documents === undefined) throw schemaPolicyErrors.badForeign('foreign schemas are not available here');
    const where = `${ref.index}${ref.id}`;
    let doc: Record<string, unknown> | undefined;
    try {
      doc = await documents.read(ref.index, ref.id);
    } catch (err) {
      throw schemaPolicyErrors.badForeign(`cannot read ${where}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (doc === undefined) {
      const schema = createSchema(fields);
      await documents.write(ref.index, ref.id, foreignDocument(schema));
      return schema;
    }
    if (!isPlainObject(doc.schema)) throw schemaPolicyErrors.badForeign(`document ${where} has no 'schema' object`);
    let stored: Schema;
    try {
      stored = createSchema(doc.schema);
    } catch (err) {
      throw schemaPolicyErrors.badForeign(`the schema in ${where} is not valid: ${err instanceof Error ? err.message : String(err)}`);
    }
    return mergeSchema(stored, fields ?? {});
  }
}

/**
 * The body of a document holding a schema: its `schema` field kept verbatim,
 * never typed or indexed. `_recurse: false` is set on the field (recorded in
 * the holder index's schema), not on the document root: a root option is not
 * stored, and the shard folds the stored body again to index it.
 */
function foreignDocument(schema: Schema): Record<string, unknown> {
  return { schema: { _recurse: false, _value: schema } };
}
