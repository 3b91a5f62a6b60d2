/**
 * What the fold resolves once and remembers by identity across documents: a
 * field's options, context and spec, and the root's options and context
 * (WeakMaps keyed by schema nodes and contexts, which are values).
 */
import { nodeOptions, type Schema, type SchemaNode } from './schema.js';
import { type FieldSpec, type Inherited, inheritChild, rootInherited } from './spec.js';
import { type FieldType, parseType } from './types.js';

/** No alias specs (shared: never written to). */
export const NO_SPECS: readonly FieldSpec[] = [];

/**
 * What a field with no inline options resolves to: its node's options, what
 * it inherits and, once a value was folded, its spec. Schema nodes and
 * Inherited contexts are values (a schema change clones the schema), so this
 * is remembered by identity across documents — folding is per document and
 * per field, and resolving options, prefixes and slots (an xxh32 each) cost
 * a tenth of bulk indexing.
 */
export interface ResolvedField {
  opts: Record<string, unknown>;
  inh: Inherited;
  nodeType: FieldType | undefined;
  spec?: FieldSpec;
  aliases: readonly FieldSpec[];
  indexed: boolean;
}

const RESOLVED_FIELDS = new WeakMap<Inherited, WeakMap<SchemaNode, ResolvedField>>();

export function resolvedField(parent: Inherited, node: SchemaNode, name: string, path: string): ResolvedField {
  let byNode = RESOLVED_FIELDS.get(parent);
  if (byNode === undefined) RESOLVED_FIELDS.set(parent, byNode = new WeakMap());
  let resolved = byNode.get(node);
  if (resolved === undefined) {
    const opts = nodeOptions(node);
    const nodeType = opts._type === undefined ? undefined : parseType(opts._type, path);
    resolved = { opts, inh: inheritChild(parent, name, opts), nodeType, aliases: NO_SPECS, indexed: false };
    byNode.set(node, resolved);
  }
  return resolved;
}

/** The root's context by schema object (and strictness): stable, so its fields' resolutions are remembered. */
const ROOT_CONTEXTS = new WeakMap<Schema, { strict?: Inherited; loose?: Inherited }>();

const ROOT_OPTIONS = new WeakMap<Schema, { opts: Record<string, unknown>; ignore: ReadonlySet<string> }>();

/** The root options of a schema and the `_ignore` set they give (schemas are values: never mutated). */
export function rootOptions(schema: Schema): { opts: Record<string, unknown>; ignore: ReadonlySet<string> } {
  let root = ROOT_OPTIONS.get(schema);
  if (root === undefined) {
    const opts = nodeOptions(schema);
    ROOT_OPTIONS.set(schema, root = { opts, ignore: ignoreSet(opts) });
  }
  return root;
}

export function rootContext(schema: Schema, opts: Record<string, unknown>, strict: boolean): Inherited {
  let contexts = ROOT_CONTEXTS.get(schema);
  if (contexts === undefined) ROOT_CONTEXTS.set(schema, contexts = {});
  return strict ? (contexts.strict ??= rootInherited(opts, true)) : (contexts.loose ??= rootInherited(opts, false));
}

export function ignoreSet(opts: Record<string, unknown>): ReadonlySet<string> {
  return new Set(Array.isArray(opts._ignore) ? (opts._ignore as string[]) : []);
}
