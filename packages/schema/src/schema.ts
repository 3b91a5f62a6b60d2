/**
 * The index schema (API.md §7.1, §7.2, §8): a plain JSON tree, because it is
 * cluster state (msgpack/JSON-serialisable, compared with deep equality).
 * Each node holds the options the user set or detection fixed (`_type`,
 * normalised: `floating`, `array/text`, `_index: "field"`…) under `_` keys and
 * its children under their names; defaults (`_prefix`, `_slot`, accuracy) are
 * not stored but resolved by `fieldSpec` and shown by `describeSchema`. The
 * root is the implicit top object and may hold `_id: {_type}`.
 *
 * Functions never mutate their arguments: a changed schema is a new tree.
 */
import { isDeepStrictEqual } from 'node:util';
import { schemaErrors } from './errors.js';
import { DEFAULT_GEO_ERROR, DEFAULT_GEO_PARTIALS } from './geo.js';
import { hasOwn, isCommentKey, isPlainObject } from './keys.js';
import { checkOptionsForType, IMMUTABLE_OPTIONS, normaliseOption } from './options.js';
import {
  effectiveImmutable, type FieldSpec, type Inherited, inheritChild, inheritUuidChild, resolveSpec, rootInherited,
  UUID_FIELD_NAME,
} from './spec.js';
import { accuracyPrefix } from './terms.js';
import { type DateUnit, type FieldType, isDateType, isNumericType, isTimeType, parseType } from './types.js';
import { isUuidString } from './uuid.js';

/** A schema node: `_` keys are options, other keys children (also nodes). */
export type SchemaNode = Record<string, unknown>;
export type Schema = SchemaNode;

/** Options of a node (its `_` keys, without the root's `_id` entry). */
export function nodeOptions(node: SchemaNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(node)) if (key.charCodeAt(0) === 0x5f && key !== '_id') out[key] = node[key];
  return out;
}

/** Child nodes of a node, by name. */
export function nodeChildren(node: SchemaNode): Array<[string, SchemaNode]> {
  const out: Array<[string, SchemaNode]> = [];
  for (const key of Object.keys(node)) {
    const child = node[key];
    if (key.charCodeAt(0) !== 0x5f && isPlainObject(child)) out.push([key, child]);
  }
  return out;
}

const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

/** A field name the schema tree can hold: not empty, not `__proto__`, no `.` (bodies arrive dotted-expanded). */
export function checkFieldName(name: string, path: string): void {
  if (name === '__proto__' || name.length === 0 || name.includes('.')) {
    throw schemaErrors.badSchema(`Invalid field name '${name}' in '${path || '_schema'}'`);
  }
}

/** Validate and normalise a `_schema` body (or a field of it) into a node. */
function normaliseBody(raw: unknown, path: string, isRoot: boolean): SchemaNode {
  if (!isPlainObject(raw)) {
    throw schemaErrors.badSchema(isRoot ? "'_schema' must be an object" : `Schema of field '${path}' must be an object of field options`);
  }
  let out: SchemaNode = {};
  let hasChildren = false;
  for (const [key, value] of Object.entries(raw)) {
    if (isCommentKey(key)) continue;
    if (key.charCodeAt(0) === 0x5f) {
      if (isRoot && key === '_id') {
        out._id = normaliseIdNode(value);
        continue;
      }
      const v = normaliseOption(key, value, path, isRoot ? 'root' : 'field');
      if (v !== undefined) out[key] = v;
      continue;
    }
    // A dotted name spells nested objects (`"a.b": {…}` = `"a": {"b": {…}}`).
    const dot = key.indexOf('.');
    const given = dot < 0 ? key : key.slice(0, dot);
    checkFieldName(given, path);
    // UUID-named fields share one entry (§8.7).
    const name = isUuidString(given) ? UUID_FIELD_NAME : given;
    const childRaw = dot < 0 ? value : { [key.slice(dot + 1)]: value };
    const child = normaliseBody(childRaw, join(path, name), false);
    const childPath = join(path, name);
    out = hasOwn(out, name) ? { ...out, [name]: mergeNode(out[name] as SchemaNode, child, childPath, `${childPath}.`) } : { ...out, [name]: child };
    hasChildren = true;
  }
  if (isRoot) {
    if (out._type !== undefined && parseType(out._type, '_schema').base !== 'object') {
      throw schemaErrors.typeMismatch('object', String(out._type));
    }
    delete out._type;
    checkOptionsForType(nodeOptions(out), { base: 'object', array: false }, '_schema');
    return out;
  }
  if (out._namespace === true) {
    checkNamespaceNode(out, path, hasChildren);
    return out;
  }
  if (hasChildren && out._type === undefined) out._type = 'object';
  if (out._type !== undefined) checkNode(out, path);
  return out;
}

/**
 * A namespace (§8.7) holds no fields of its own: its descendants are typed
 * by its `_type` (the descendants' type, never `object`) and never grow the
 * schema.
 */
function checkNamespaceNode(node: SchemaNode, path: string, hasChildren: boolean): void {
  if (hasChildren) throw schemaErrors.badSchema(`Namespace '${path}' cannot declare fields: its descendants share its type`);
  if (node._type !== undefined && parseType(node._type, path).base === 'object') {
    throw schemaErrors.invalidOption(path, '_type', "a namespace's type is its values' type, not 'object'");
  }
  checkOptionsForType(nodeOptions(node), node._type === undefined ? { base: 'object', array: false } : parseType(node._type, path), path);
}

function normaliseIdNode(raw: unknown): SchemaNode {
  if (!isPlainObject(raw)) throw schemaErrors.badSchema("Schema of '_id' must be an object of field options");
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(raw)) {
    if (isCommentKey(key)) continue;
    if (key !== '_type') throw schemaErrors.invalidOption('_id', key, "only '_type' can be set for '_id'");
    const t = parseType(value, '_id');
    if (t.base === 'object' || t.array) throw schemaErrors.invalidType('_id', String(value));
    out._type = t.base;
  }
  return out;
}

/** Options of a typed node fit its type; a node with children is an object. */
function checkNode(node: SchemaNode, path: string): FieldType {
  const t = parseType(node._type, path);
  if (t.base !== 'object' && nodeChildren(node).length > 0) throw schemaErrors.typeMismatch(String(node._type), 'object');
  checkOptionsForType(nodeOptions(node), t, path);
  return t;
}

/**
 * Merge a normalised node into an existing one (API.md §7.1): new children
 * added, `_meta` replaced, immutable options of a typed field equal to their
 * effective value (set or default) else 400, other options replaced. Types
 * compare by concrete type: a field detected as `array/text` accepts `text`.
 */
function mergeNode(current: SchemaNode, incoming: SchemaNode, path: string, prefix: string): SchemaNode {
  const out: SchemaNode = { ...current };
  const currentType = current._type === undefined ? undefined : parseType(current._type, path);
  for (const [key, value] of Object.entries(incoming)) {
    if (key.charCodeAt(0) !== 0x5f) continue;
    if (key === '_id') {
      out._id = mergeIdNode(current._id, value as SchemaNode);
    } else if (key === '_type' && currentType !== undefined) {
      if (parseType(value, path).base !== currentType.base) throw schemaErrors.schemaImmutable(path || '_schema', key);
    } else if (IMMUTABLE_OPTIONS.has(key) && currentType !== undefined) {
      const effective = effectiveImmutable(current, key, currentType, path, prefix);
      if (!isDeepStrictEqual(effective, value)) throw schemaErrors.schemaImmutable(path || '_schema', key);
      out[key] = value;
    } else {
      out[key] = value;
    }
  }
  const childPrefix = path === '' ? '' : typeof out._prefix === 'string' ? out._prefix : prefix;
  for (const [name, child] of nodeChildren(incoming)) {
    const existing = current[name];
    const childPath = join(path, name);
    const base = isPlainObject(existing) ? existing : {};
    out[name] = mergeNode(base, child, childPath, `${childPrefix}${name}.`);
  }
  if (path !== '' && out._namespace === true) {
    checkNamespaceNode(out, path, nodeChildren(out).length > 0);
    return out;
  }
  if (path !== '' && out._type === undefined && nodeChildren(out).length > 0) out._type = 'object';
  if (path !== '' && out._type !== undefined) checkNode(out, path);
  return out;
}

function mergeIdNode(current: unknown, incoming: SchemaNode): SchemaNode {
  if (!isPlainObject(current) || current._type === undefined) return incoming;
  if (incoming._type !== undefined && incoming._type !== current._type) throw schemaErrors.schemaImmutable('_id', '_type');
  return current;
}

/** Merge a `_schema` body into a schema; 400 on invalid options or a changed immutable. Returns `current` itself when nothing changes. */
export function mergeSchema(current: Schema, incoming: unknown): Schema {
  const merged = mergeNode(current, normaliseBody(incoming, '', true), '', '');
  return isDeepStrictEqual(merged, current) ? current : merged;
}

/** A schema from an optional `_schema` body of an index creation. */
export function createSchema(explicit?: unknown): Schema {
  return mergeSchema({}, explicit === undefined ? {} : explicit);
}

/**
 * One step down the schema from `node` to its child `seg`: by name, or for a
 * UUID the shared `<uuid_field>` entry (§8.7); undefined when absent.
 */
export function childNode(node: SchemaNode, inh: Inherited, seg: string): { node: SchemaNode; inh: Inherited } | undefined {
  if (seg.charCodeAt(0) === 0x5f) return undefined;
  const child = hasOwn(node, seg) ? node[seg] : undefined;
  if (isPlainObject(child)) return { node: child, inh: inheritChild(inh, seg, nodeOptions(child)) };
  if (!isUuidString(seg)) return undefined;
  const shared = hasOwn(node, UUID_FIELD_NAME) ? node[UUID_FIELD_NAME] : undefined;
  if (!isPlainObject(shared)) return undefined;
  return { node: shared, inh: inheritUuidChild(inh, seg.toLowerCase(), nodeOptions(shared)) };
}

/** Walk to a node, giving the inherited context of that node; undefined when absent. */
export function resolveNode(schema: Schema, path: string, strict = false): { node: SchemaNode; inh: Inherited } | undefined {
  let found: { node: SchemaNode; inh: Inherited } | undefined = { node: schema, inh: rootInherited(nodeOptions(schema), strict) };
  if (path === '') return found;
  for (const seg of path.split('.')) {
    found = childNode(found.node, found.inh, seg);
    if (found === undefined) return undefined;
  }
  return found;
}

/**
 * The spec of a namespace descendant (§8.7): the namespace's type and
 * options, under the prefix of its path (full or partial, both name the same
 * way). Undefined while the namespace has no type yet.
 */
export function namespaceSpec(namespace: SchemaNode, nsInh: Inherited, rest: readonly string[]): FieldSpec | undefined {
  if (namespace._type === undefined) return undefined;
  const t = parseType(namespace._type, nsInh.path);
  if (t.base === 'object') return undefined;
  let inh = nsInh;
  for (const seg of rest) inh = inheritChild(inh, seg, NO_OPTIONS);
  const options = nodeOptions(namespace);
  // Slot and prefix are per path: a namespace's own would make every descendant collide.
  delete options._slot;
  delete options._prefix;
  return resolveSpec(inh.path, t.base, t.array, options, inh);
}

const NO_OPTIONS: Readonly<Record<string, unknown>> = {};

/**
 * Resolved specs by schema object: schemas are values (every change makes a
 * new object, see mergeSchema and fold), so a spec resolved once stays right
 * for that object. Searches resolve the same few fields on every query.
 */
const RESOLVED_SPECS = new WeakMap<Schema, Map<string, FieldSpec | undefined>>();
/** Paths remembered per schema: queries may name any path, memory must stay bounded. */
const RESOLVED_SPECS_MAX = 4096;

/** Resolved spec of a typed, non-object field (`"user.name"`); undefined when absent, untyped or an object. */
export function fieldSpec(schema: Schema, path: string): FieldSpec | undefined {
  let specs = RESOLVED_SPECS.get(schema);
  if (specs === undefined) RESOLVED_SPECS.set(schema, specs = new Map());
  const known = specs.get(path);
  if (known !== undefined || specs.has(path)) return known;
  const spec = resolveFieldSpec(schema, path);
  if (specs.size < RESOLVED_SPECS_MAX) specs.set(path, spec);
  return spec;
}

function resolveFieldSpec(schema: Schema, path: string): FieldSpec | undefined {
  if (path === '') return undefined;
  let found: { node: SchemaNode; inh: Inherited } | undefined = { node: schema, inh: rootInherited(nodeOptions(schema)) };
  const segs = path.split('.');
  for (let i = 0; i < segs.length; i++) {
    if (i > 0 && found.node._namespace === true) return namespaceSpec(found.node, found.inh, segs.slice(i));
    found = childNode(found.node, found.inh, segs[i]!);
    if (found === undefined) return undefined;
  }
  if (found.node._type === undefined) return undefined;
  const t = parseType(found.node._type, path);
  if (t.base === 'object') return undefined;
  return resolveSpec(found.inh.path, t.base, t.array, nodeOptions(found.node), found.inh);
}

const SEARCHABLE_FIELDS = new WeakMap<Schema, readonly FieldSpec[]>();

/**
 * The text and keyword fields with field terms: what a query word without a
 * field searches besides the global terms (API.md §9.4). Fields of
 * namespaces are left out (their paths are open-ended). Once per schema:
 * schemas are values, a grown schema is a new object.
 */
export function searchableFields(schema: Schema): readonly FieldSpec[] {
  let fields = SEARCHABLE_FIELDS.get(schema);
  if (fields === undefined) {
    const found: FieldSpec[] = [];
    const walk = (node: SchemaNode, path: string): void => {
      if (node._namespace === true) return;
      for (const [name, child] of nodeChildren(node)) {
        const childPath = join(path, name);
        const spec = fieldSpec(schema, childPath);
        if (spec !== undefined && (spec.type === 'text' || spec.type === 'keyword') && spec.index.fieldTerms) found.push(spec);
        walk(child, childPath);
      }
    };
    walk(schema, '');
    fields = Object.freeze(found);
    SEARCHABLE_FIELDS.set(schema, fields);
  }
  return fields;
}

/** The `_schema` of `GET /idx/` (API.md §7.2). */
export function describeSchema(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = { _type: 'object' };
  Object.assign(out, nodeOptions(schema));
  if (isPlainObject(schema._id)) out._id = { ...schema._id };
  const inh = rootInherited(nodeOptions(schema));
  for (const [name, child] of nodeChildren(schema)) out[name] = describeNode(child, name, inh);
  return out;
}

function describeNode(node: SchemaNode, path: string, parent: Inherited): Record<string, unknown> {
  const options = nodeOptions(node);
  const name = path.slice(path.lastIndexOf('.') + 1);
  const inh = inheritChild(parent, name, options);
  const out: Record<string, unknown> = {};
  if (node._type !== undefined) {
    out._type = node._type;
    const t = parseType(node._type, path);
    if (t.base !== 'object') {
      const spec = resolveSpec(path, t.base, t.array, options, inh);
      // The shared UUID entry shows its own prefix, as Xapiand does; its terms keep the full path (§8.7).
      out._prefix = name === UUID_FIELD_NAME ? `${UUID_FIELD_NAME}.` : spec.prefix;
      out._slot = spec.slot;
      if (isNumericType(t.base) || isDateType(t.base) || isTimeType(t.base) || t.base === 'geo') {
        out._accuracy = [...(effectiveImmutable(options, '_accuracy', t, path, spec.prefix) as ReadonlyArray<number | DateUnit>)];
        out._accuracy_prefix = (spec.accuracy as ReadonlyArray<number | DateUnit>).map((step) => accuracyPrefix(step));
      }
      if (t.base === 'text') Object.assign(out, { _ngram: false, _cjk_ngram: false, _cjk_words: false });
      if (t.base === 'geo') Object.assign(out, { _partials: DEFAULT_GEO_PARTIALS, _error: DEFAULT_GEO_ERROR });
    }
  }
  for (const [key, value] of Object.entries(options)) if (key !== '_type') out[key] = value;
  for (const [childName, child] of nodeChildren(node)) out[childName] = describeNode(child, `${path}.${childName}`, inh);
  return out;
}
