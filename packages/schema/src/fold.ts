/**
 * Folding a document body into the schema (API.md §5.7, §8.1, §8.7, §8.8):
 * one walk that detects the types of new fields, converts every value to its
 * field's type, and yields the stored form and the list of values to index.
 *
 * All or nothing: the input schema is never mutated. The first new field
 * clones it (`define`), and a 400 anywhere in the walk throws before the
 * clone is returned, so a rejected document changes no schema.
 *
 * Inline options (`{"_type": "text", "_value": …}`) are recorded when they
 * create a field; on an existing field, immutable ones must equal the
 * field's, and changeable ones (`_index`, `_store`, `_weight`, …) apply to
 * this document only.
 *
 * The walk is here; beside it: how an object's keys split
 * (document-object.ts), the stored form of untyped values (stored-form.ts),
 * namespace paths (namespace-paths.ts) and what is remembered per schema
 * (resolved-fields.ts).
 */
import { convertValue, type IndexValue } from './convert.js';
import { describeType, detectType } from './detect.js';
import {
  asScriptValue, type Children, gatherElementOptions, isDeepEqualJson, isFieldName, isOpaque, isScalarValue, isScriptTyped,
  splitObject,
} from './document-object.js';
import { schemaErrors } from './errors.js';
import { isCoordinateArray } from './geo.js';
import { FIELD_OPTION_KEYS, hasOwn, isPlainObject, ROOT_CONTROL_KEYS } from './keys.js';
import { fitsNamespace, type Namespace, namespacePaths } from './namespace-paths.js';
import { checkOptionsForType, IMMUTABLE_OPTIONS } from './options.js';
import { ignoreSet, NO_SPECS, type ResolvedField, resolvedField, rootContext, rootOptions } from './resolved-fields.js';
import { checkFieldName, namespaceSpec, nodeOptions, type Schema, type SchemaNode } from './schema.js';
import {
  effectiveImmutable, type FieldSpec, type Inherited, inheritChild, inheritUuidChild, resolveSpec, rootInherited, UUID_FIELD_NAME,
} from './spec.js';
import { DROP, opaque, plainStored, type Stored, verbatim, withoutKeys } from './stored-form.js';
import { type FieldType, parseType, type ScalarType, typeName } from './types.js';
import { isUuidString } from './uuid.js';

/** One value to index: arrays are flattened, the value converted to the field's type. */
export interface IndexedValue {
  readonly path: string;
  readonly spec: FieldSpec;
  readonly value: IndexValue;
}

export interface NormalisedDocument {
  /** Stored form of API.md §5.7. */
  readonly stored: Record<string, unknown>;
  /** Values of fields whose `_index` is not `none`, in document order. */
  readonly values: readonly IndexedValue[];
  /** A `_store: false` field left something out of `stored` (fold again with `keepUnstored` for the form to index). */
  readonly unstored: boolean;
}

export interface FoldOptions {
  /** The `--strict` server option: every new field needs `_type` (412). */
  strict?: boolean;
  /** Epoch seconds of `now` in date math; the clock when absent. */
  now?: number;
  /**
   * Keep `_store: false` fields in `stored`: the form a shard indexes, which
   * the stored form (API.md §5.7) lacks.
   */
  keepUnstored?: boolean;
}

export interface FoldResult {
  readonly schema: Schema;
  /** Whether the schema grew (then `schema` is a new tree, else the one passed in). */
  readonly changed: boolean;
  readonly document: NormalisedDocument;
}

export function foldDocument(schema: Schema, body: unknown, options: FoldOptions = {}): FoldResult {
  if (!isPlainObject(body)) throw schemaErrors.badDocument('Document body must be an object');
  const folder = new Folder(schema, options);
  const stored = folder.root(body);
  // Folding `stored` again with this schema gives these values: remember them for indexedValues.
  if (!folder.changed && (!folder.unstored || options.keepUnstored === true)) {
    let folded = FOLDED.get(schema);
    if (folded === undefined) FOLDED.set(schema, folded = new WeakMap());
    folded.set(stored, folder.values);
  }
  return { schema: folder.schema, changed: folder.changed, document: { stored, values: folder.values, unstored: folder.unstored } };
}

/**
 * The values to index of a body that is already in stored form (a shard
 * indexing what it stores), with whether the schema lacked fields of it.
 *
 * When `body` is the very object a fold with this very schema returned (the
 * embedded server passes the coordinator's stored form to its shard by
 * reference), the values that fold found are returned instead of folding the
 * body a second time: the stored form is a fold's fixed point, so folding it
 * again would give the same values. A stored form that left `_store: false`
 * fields out is not remembered (its values have them, folding it would not).
 */
export function indexedValues(schema: Schema, body: unknown, options: FoldOptions = {}): { values: readonly IndexedValue[]; changed: boolean } {
  const known = isPlainObject(body) ? FOLDED.get(schema)?.get(body) : undefined;
  if (known !== undefined) return { values: known, changed: false };
  const folded = foldDocument(schema, body, options);
  return { values: folded.document.values, changed: folded.changed };
}

/**
 * Schema → stored forms folded with it → their values (see indexedValues). Keyed by the schema first, so that a
 * stored form kept alive (a shard's document cache) keeps only its values, not the schema it was folded with:
 * keyed by the stored form, every cached document held the schema of its day, hundreds of versions of a growing
 * schema (docs/reliability.md, R8).
 */
const FOLDED = new WeakMap<Schema, WeakMap<object, readonly IndexedValue[]>>();

class Folder {
  schema: Schema;
  changed = false;
  readonly values: IndexedValue[] = [];
  /** A value was left out of the stored form by `_store: false`. */
  unstored = false;
  /** The nodes of `schema` this fold made (see define): the only ones it changes. */
  private readonly copied = new Set<SchemaNode>();
  private readonly options: FoldOptions;

  constructor(schema: Schema, options: FoldOptions) {
    this.schema = schema;
    this.options = options;
  }

  /** Whether a value under `inh` goes into the stored form (noting what `_store: false` leaves out). */
  private keeps(inh: Inherited): boolean {
    if (inh.store) return true;
    this.unstored = true;
    return this.options.keepUnstored === true;
  }

  root(body: Record<string, unknown>): Record<string, unknown> {
    if (hasOwn(body, '_value')) throw schemaErrors.unknownReservedKey('_value');
    const split = splitObject(body, '', true);
    if (split.dateValue !== undefined) throw schemaErrors.badDocument('A document body cannot be a value');
    const own = isEmpty(split.options);
    // Most bodies carry no root options: the schema's own, and what follows from them, are computed once per schema.
    const root = own ? rootOptions(this.schema) : undefined;
    const opts = root?.opts ?? { ...nodeOptions(this.schema), ...split.options };
    if (opts._type !== undefined && parseType(opts._type, '_schema').base !== 'object') {
      throw schemaErrors.typeMismatch(String(opts._type), 'object');
    }
    checkOptionsForType(split.options, { base: 'object', array: false }, '_schema');
    const inh = own ? rootContext(this.schema, opts, this.options.strict === true) : rootInherited(opts, this.options.strict === true);
    if (opts._recurse === false) return this.keeps(inh) ? withoutKeys(body, FIELD_OPTION_KEYS, ROOT_CONTROL_KEYS) : {};
    const out = this.objectBody([], split.children, inh, root?.ignore ?? ignoreSet(opts));
    return this.keeps(inh) ? out : {};
  }

  private objectBody(segs: readonly string[], children: Children, inh: Inherited, ignore: ReadonlySet<string>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    // Under `_dynamic: false`, a field the schema lacks whose value is a scalar or a list of scalars is stored as it
    // is (what `field` ends in for it, without its path and options): most fields of a record under a narrow schema.
    const node = inh.dynamic ? undefined : this.lookup(segs);
    for (const key of children.keys) {
      const child = children.of[key];
      const r = ignore.has(key) ? plainStored(child, this.keeps(inh))
        : !inh.dynamic && isScalarValue(child) && isFieldName(key) && childNode(node, key) === undefined ? plainStored(child, this.keeps(inh))
          : this.field([...segs, key], child, inh);
      if (r !== DROP) out[key] = r;
    }
    return out;
  }

  private lookup(segs: readonly string[]): SchemaNode | undefined {
    let node: SchemaNode | undefined = this.schema;
    for (const s of segs) node = childNode(node, s);
    return node;
  }

  /**
   * Record options on the node at `segs` (creating it). The schema passed in is a value, never changed: the nodes
   * on the path are copied (once per fold) and the rest of the tree is shared with it, so the versions of a growing
   * schema that shards, caches and the cluster state hold share their fields instead of each holding a whole copy.
   */
  private define(segs: readonly string[], options: Record<string, unknown>): void {
    this.changed = true;
    if (!this.copied.has(this.schema)) this.schema = this.copy(this.schema);
    let node: SchemaNode = this.schema;
    for (const given of segs) {
      // A UUID name never becomes a schema key: UUID-named children share `<uuid_field>` (§8.7).
      const s = isUuidName(given) && !hasOwn(node, given) ? UUID_FIELD_NAME : given;
      const next = node[s];
      node = node[s] = isPlainObject(next) ? (this.copied.has(next) ? next : this.copy(next)) : this.copy({});
    }
    Object.assign(node, options);
  }

  /** A shallow copy of a node, which this fold may change. */
  private copy(node: SchemaNode): SchemaNode {
    const copy = { ...node };
    this.copied.add(copy);
    return copy;
  }

  private field(segs: readonly string[], raw: unknown, parent: Inherited): Stored | typeof DROP {
    const path = segs.join('.');
    const name = segs[segs.length - 1]!;
    checkFieldName(name, path);
    const node = this.lookup(segs);
    if (isPlainObject(raw) && isOpaque(raw)) {
      if (!isScriptTyped(node, raw, path)) return opaque(raw, this.keeps(parent));
      raw = asScriptValue(raw);
    }
    const uuidName = isUuidName(name);
    let inline: Record<string, unknown> = {};
    let value: unknown = raw;
    let body: Children | undefined;
    if (isPlainObject(raw)) {
      const split = splitObject(raw, path, false);
      inline = split.options;
      if (split.hasValue) {
        if (split.children.keys.length > 0) throw schemaErrors.badDocument(`Field '${path}' has both '_value' and fields`);
        value = raw._value;
      } else if (split.dateValue !== undefined) {
        if (split.children.keys.length > 0) throw schemaErrors.badDocument(`Field '${path}' has both a date value and fields`);
        value = split.dateValue;
      } else {
        body = split.children;
      }
    }
    if (Array.isArray(value)) inline = gatherElementOptions(value, inline, path);
    // Unknown under `_dynamic: false`, without options of its own: stored as it is under the
    // parent's `_store` (what the general path below ends in), no context to resolve (most
    // fields of a record under a narrow schema).
    if (node === undefined && !parent.dynamic && isEmpty(inline)) return plainStored(raw, this.keeps(parent));
    // UUID-named children share a node but not a name: their context is resolved each time.
    const known = node !== undefined && isEmpty(inline) && !uuidName ? resolvedField(parent, node, name, path) : undefined;
    let opts: Record<string, unknown>;
    let inh: Inherited;
    let nodeType: FieldType | undefined;
    if (known !== undefined) {
      ({ opts, inh, nodeType } = known);
    } else {
      const nodeOpts = node === undefined ? {} : nodeOptions(node);
      nodeType = nodeOpts._type === undefined ? undefined : parseType(nodeOpts._type, path);
      if (nodeType !== undefined) checkInline(nodeOpts, nodeType, inline, path, `${parent.prefix}${name}.`);
      opts = { ...nodeOpts, ...inline };
      inh = uuidName ? inheritUuidChild(parent, name.toLowerCase(), opts) : inheritChild(parent, name, opts);
    }
    const isNew = nodeType === undefined;

    if (opts._recurse === false) {
      if (isNew && parent.dynamic && Object.keys(inline).length > 0) this.define(segs, inline);
      return this.keeps(inh) ? verbatim(raw) : DROP;
    }
    if (node === undefined && !parent.dynamic) return plainStored(raw, this.keeps(inh));
    if (opts._namespace === true) return this.namespaceField(segs, path, node, body, value, inline, opts, inh, parent);
    if (body !== undefined && body.keys.length === 0 && typeof opts._type === 'string' && parseType(opts._type, path).base !== 'object') {
      // Options without a value (`{"_type": "keyword", "_index": "field_all"}`): the field is
      // defined, nothing is stored or indexed (Xapiand's tests/schema/empty-value).
      this.valueField(segs, path, undefined, inline, opts, inh, isNew, parent);
      return DROP;
    }
    if (body !== undefined) return this.objectField(segs, path, body, inline, opts, inh, isNew, parent);
    return this.valueField(segs, path, value, inline, opts, inh, isNew, parent, known);
  }

  private objectField(
    segs: readonly string[], path: string, body: Children, inline: Record<string, unknown>,
    opts: Record<string, unknown>, inh: Inherited, isNew: boolean, parent: Inherited,
  ): Stored | typeof DROP {
    let typeStr = opts._type as string | undefined;
    if (typeStr === undefined) {
      // Strictness is the parent's: an object's own `_strict` governs its children.
      if (parent.strict) throw schemaErrors.strictMissingType(path);
      typeStr = 'object';
    }
    const t = parseType(typeStr, path);
    if (t.base !== 'object') throw schemaErrors.typeMismatch(typeStr, 'object');
    checkOptionsForType(opts, t, path);
    if (isNew) this.define(segs, { ...inline, _type: typeStr });
    const stored = this.objectBody(segs, body, inh, ignoreSet(opts));
    return this.keeps(inh) ? stored : DROP;
  }

  private valueField(
    segs: readonly string[], path: string, value: unknown, inline: Record<string, unknown>,
    opts: Record<string, unknown>, inh: Inherited, isNew: boolean, parent: Inherited, known?: ResolvedField,
  ): Stored | typeof DROP {
    if (known?.spec !== undefined) {
      const stored = this.convertTree(segs, path, value, known.nodeType!, known.spec, known.aliases, known.indexed, parent);
      return this.keeps(inh) ? stored : DROP;
    }
    let typeStr = opts._type as string | undefined;
    if (typeStr === undefined) {
      const detected = detectType(value, inh.detection);
      if (detected === null) return plainStored(value, this.keeps(inh)); // null, [] and later types fix nothing
      if (parent.strict) throw schemaErrors.strictMissingType(path);
      if (typeof detected !== 'string') throw schemaErrors.typeUndetectable(path, detected.undetectable);
      typeStr = detected;
    }
    const t = parseType(typeStr, path);
    checkOptionsForType(opts, t, path);
    if (isNew) this.define(segs, { ...inline, _type: typeStr });
    const spec = t.base === 'object' ? undefined : resolveSpec(inh.path, t.base, t.array, opts, inh);
    const indexed = spec !== undefined && isIndexed(spec);
    const aliases = spec === undefined || inh.aliases.length === 0 ? NO_SPECS
      : inh.aliases.map((a) => resolveSpec(a.path, t.base as ScalarType, t.array, opts, { ...inh, path: a.path, prefix: a.prefix }));
    if (known !== undefined && !isNew && spec !== undefined) {
      // The node's own type, no inline options: the same for every document of this schema.
      known.spec = spec;
      known.aliases = aliases;
      known.indexed = indexed;
    }
    const stored = this.convertTree(segs, path, value, t, spec, aliases, indexed, parent);
    return this.keeps(inh) ? stored : DROP;
  }

  /** Convert a value (array structure kept, option objects unwrapped) and collect its indexable leaves. */
  private convertTree(
    segs: readonly string[], path: string, value: unknown, t: FieldType, spec: FieldSpec | undefined,
    aliases: readonly FieldSpec[], indexed: boolean, parent: Inherited,
  ): Stored {
    if (value === null || value === undefined) return null;
    // `[lon, lat]` is one geo value, not two.
    if (Array.isArray(value) && !(t.base === 'geo' && isCoordinateArray(value))) {
      const out: unknown[] = [];
      for (const item of value) {
        const r = this.convertTree(segs, path, item, t, spec, aliases, indexed, parent);
        if (r !== DROP) out.push(r);
      }
      return out;
    }
    if (isPlainObject(value)) {
      if (hasOwn(value, '_value')) return this.convertTree(segs, path, value._value, t, spec, aliases, indexed, parent);
      if (t.base === 'script') return this.convertLeaf(path, value, t, spec, aliases, indexed);
      if (isOpaque(value)) return opaque(value, true);
      const dateValue = splitObject(value, path, false).dateValue;
      if (dateValue !== undefined) value = dateValue;
      else if (t.base === 'object') return this.field(segs, value, parent); // an element of array/object
    }
    return this.convertLeaf(path, value, t, spec, aliases, indexed);
  }

  private convertLeaf(path: string, value: unknown, t: FieldType, spec: FieldSpec | undefined, aliases: readonly FieldSpec[], indexed: boolean): Stored {
    if (spec === undefined) throw schemaErrors.typeMismatch(t.base, describeType(value));
    // A script field's spec is text (how it is searched); its values convert as scripts.
    const type = t.base === 'script' ? 'script' : spec.type;
    const converted = convertValue(type, value, path, this.options.now === undefined ? {} : { now: this.options.now });
    if (indexed) {
      this.values.push({ path: spec.path, spec, value: converted.index });
      for (const alias of aliases) this.values.push({ path: alias.path, spec: alias, value: converted.index });
    }
    return converted.stored;
  }

  // ---- namespaces (§8.7) -----------------------------------------------------------------------

  /**
   * A namespace: every descendant takes its one type (declared, or fixed by
   * the first value), is indexed under its full path and, with
   * `_partial_paths`, under every shortened path keeping the namespace and
   * the leaf; no descendant enters the schema.
   */
  private namespaceField(
    segs: readonly string[], path: string, node: SchemaNode | undefined, body: Children | undefined,
    value: unknown, inline: Record<string, unknown>, opts: Record<string, unknown>, inh: Inherited, parent: Inherited,
  ): Stored | typeof DROP {
    let type: FieldType | undefined;
    if (opts._type !== undefined) {
      type = parseType(opts._type, path);
      if (type.base === 'object') throw schemaErrors.invalidOption(path, '_type', "a namespace's type is its values' type, not 'object'");
    } else if (parent.strict) {
      throw schemaErrors.strictMissingType(path);
    }
    checkOptionsForType(opts, type ?? { base: 'object', array: false }, path);
    if (node === undefined) this.define(segs, { ...inline });
    else if (node._type === undefined && inline._type !== undefined) this.define(segs, { _type: inline._type });
    const ns: Namespace = { segs, path, inh, type, partialPaths: opts._partial_paths !== false };
    const stored = body === undefined ? this.namespaceValue(ns, [], value) : this.namespaceBody(ns, [], body);
    return this.keeps(inh) ? stored : DROP;
  }

  private namespaceBody(ns: Namespace, rest: readonly string[], children: Children): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const key of children.keys) {
      checkFieldName(key, `${ns.path}.${rest.join('.')}`);
      out[key] = this.namespaceValue(ns, [...rest, key], children.of[key]);
    }
    return out;
  }

  private namespaceValue(ns: Namespace, rest: readonly string[], value: unknown): Stored {
    if (value === null || value === undefined) return null;
    if (Array.isArray(value)) return value.map((item) => this.namespaceValue(ns, rest, item));
    if (isPlainObject(value)) {
      if (isOpaque(value)) return opaque(value, true);
      const split = splitObject(value, ns.path, false);
      if (split.hasValue) return this.namespaceValue(ns, rest, value._value);
      if (split.dateValue !== undefined) return this.namespaceLeaf(ns, rest, split.dateValue);
      return this.namespaceBody(ns, rest, split.children);
    }
    return this.namespaceLeaf(ns, rest, value);
  }

  private namespaceLeaf(ns: Namespace, rest: readonly string[], value: unknown): Stored {
    const leafPath = rest.length === 0 ? ns.path : `${ns.path}.${rest.join('.')}`;
    const detected = detectType(value, ns.inh.detection);
    if (ns.type === undefined) {
      if (detected === null) return plainStored(value, true);
      if (typeof detected !== 'string') throw schemaErrors.typeUndetectable(leafPath, detected.undetectable);
      const type = parseType(detected, ns.path);
      ns.type = { base: type.base, array: false };
      this.define(ns.segs, { _type: typeName(ns.type) });
    } else if (!fitsNamespace(ns.type.base, value, detected)) {
      throw schemaErrors.typeMismatch(typeName(ns.type), typeof detected === 'string' ? detected : describeType(value));
    }
    const type = ns.type.base as ScalarType;
    const converted = convertValue(type, value, leafPath, this.options.now === undefined ? {} : { now: this.options.now });
    const node = this.lookup(ns.segs)!;
    for (const partial of namespacePaths(rest, ns.partialPaths)) {
      const spec = namespaceSpec(node, ns.inh, partial);
      if (spec !== undefined && isIndexed(spec)) this.values.push({ path: spec.path, spec, value: converted.index });
    }
    return converted.stored;
  }
}

function isIndexed(spec: FieldSpec): boolean {
  return spec.index.fieldTerms || spec.index.fieldValues || spec.index.globalTerms || spec.index.globalValues;
}

function isUuidName(name: string): boolean {
  return name.length === 36 && isUuidString(name);
}

/** The schema node of child `name` of `node` (UUID names share `<uuid_field>`), or undefined. */
function childNode(node: SchemaNode | undefined, name: string): SchemaNode | undefined {
  if (node === undefined) return undefined;
  const child = hasOwn(node, name) ? node[name] : isUuidName(name) && hasOwn(node, UUID_FIELD_NAME) ? node[UUID_FIELD_NAME] : undefined;
  return isPlainObject(child) ? child : undefined;
}

/** Inline options on an existing typed field: its type and immutable options cannot differ. */
function checkInline(
  nodeOpts: Record<string, unknown>, nodeType: FieldType, inline: Record<string, unknown>, path: string, prefix: string,
): void {
  for (const [key, value] of Object.entries(inline)) {
    if (key === '_type') {
      if (parseType(value, path).base !== nodeType.base) throw schemaErrors.typeMismatch(String(nodeOpts._type), String(value));
    } else if (IMMUTABLE_OPTIONS.has(key)) {
      const effective = effectiveImmutable(nodeOpts, key, nodeType, path, prefix);
      if (!isDeepEqualJson(effective, value)) throw schemaErrors.schemaImmutable(path, key);
    }
  }
}

function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}
