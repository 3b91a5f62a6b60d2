/**
 * What the fold resolves once and remembers by identity across documents: a
 * field's options, context and spec, and the root's options and context
 * (WeakMaps keyed by schema nodes and contexts, which are values; root
 * contexts shared by the schemas whose roots have the same options).
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
  /** The name it was resolved under (a node shared at another name is resolved again). */
  name: string;
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
  if (resolved === undefined || resolved.name !== name) {
    const opts = nodeOptions(node);
    const nodeType = opts._type === undefined ? undefined : parseType(opts._type, path);
    const fresh: ResolvedField = { name, opts, inh: inheritChild(parent, name, opts), nodeType, aliases: NO_SPECS, indexed: false };
    if (resolved !== undefined) return fresh;
    byNode.set(node, resolved = fresh);
  }
  return resolved;
}

/** The root's context by schema object (and strictness): stable, so its fields' resolutions are remembered. */
const ROOT_CONTEXTS = new WeakMap<Schema, { strict?: Inherited; loose?: Inherited }>();

/**
 * Root contexts by the root's options (their JSON) and strictness, shared by every schema whose root has those
 * options. A growing schema is a new object per new field, sharing its field nodes with the version before: with
 * one context per version, every version that folded a field held its own resolution of it (RESOLVED_FIELDS is
 * keyed by context and node) and resolved it again (docs/reliability.md, R8); with the context shared, a field is
 * resolved once for all versions. Distinct root options are few; the memory starts again past a bound, and a root
 * whose options are too long to be worth a key (a large `_meta`) gets a context of its own.
 */
const SHARED_ROOT_CONTEXTS = new Map<string, Inherited>();
const SHARED_ROOT_CONTEXTS_MAX = 256;
const SHARED_ROOT_KEY_MAX = 4096;

function sharedRootContext(opts: Record<string, unknown>, strict: boolean): Inherited {
  const key = `${strict ? 's' : 'l'}${JSON.stringify(opts)}`;
  if (key.length > SHARED_ROOT_KEY_MAX) return rootInherited(opts, strict);
  let inh = SHARED_ROOT_CONTEXTS.get(key);
  if (inh === undefined) {
    if (SHARED_ROOT_CONTEXTS.size >= SHARED_ROOT_CONTEXTS_MAX) SHARED_ROOT_CONTEXTS.clear();
    SHARED_ROOT_CONTEXTS.set(key, inh = rootInherited(opts, strict));
  }
  return inh;
}

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
  return strict ? (contexts.strict ??= sharedRootContext(opts, true)) : (contexts.loose ??= sharedRootContext(opts, false));
}

export function ignoreSet(opts: Record<string, unknown>): ReadonlySet<string> {
  return new Set(Array.isArray(opts._ignore) ? (opts._ignore as string[]) : []);
}
