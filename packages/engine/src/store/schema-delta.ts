/**
 * What changed between two versions of a JSON schema, as explicit operations:
 * `delete` the members at these paths, then `set` these paths to these values
 * (a path is the member names from the root; an empty path sets the whole
 * schema). Applied to the old schema, a delta gives the new one exactly,
 * member order included (so its JSON is the same string): where the order of
 * an object's members changed other than by appending, the delta sets the
 * whole object. Arrays are values (set whole when they differ); `null` is a
 * value like any other, never "absent".
 *
 * A small function rather than a library: the JSON diff libraries on npm
 * either use JSON Patch's pointer strings or merge patch (where `null` means
 * delete), and none keeps member order, which the stored schema's JSON needs.
 */
export type SchemaPath = readonly string[];

export interface SchemaDelta {
  readonly delete: SchemaPath[];
  readonly set: [SchemaPath, unknown][];
}

type JsonObject = Record<string, unknown>;

const hasOwn = (object: JsonObject, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The delta from `from` to `to`, or undefined when their JSON is the same. */
export function diffSchema(from: JsonObject, to: JsonObject): SchemaDelta | undefined {
  const delta: SchemaDelta = { delete: [], set: [] };
  diffInto([], from, to, delta);
  return delta.delete.length === 0 && delta.set.length === 0 ? undefined : delta;
}

function diffInto(path: string[], from: unknown, to: unknown, delta: SchemaDelta): void {
  // Schemas are values: a grown one shares the nodes it did not change with the one before (schema fold.ts), and
  // one node is one JSON. Walking them too cost O(fields) objects per change (docs/reliability.md, R8).
  if (from === to) return;
  if (!isObject(from) || !isObject(to)) {
    if (!sameJson(from, to)) delta.set.push([path, to]);
    return;
  }
  if (!orderKept(from, to)) {
    delta.set.push([path, to]);
    return;
  }
  for (const key of Object.keys(from)) if (!hasOwn(to, key)) delta.delete.push([...path, key]);
  for (const key of Object.keys(to)) {
    if (hasOwn(from, key)) diffInto([...path, key], from[key], to[key], delta);
    else delta.set.push([[...path, key], to[key]]);
  }
}

/** Whether deleting `from`'s members that `to` lacks, then appending `to`'s new ones, gives `to`'s member order. */
function orderKept(from: JsonObject, to: JsonObject): boolean {
  const toKeys = Object.keys(to);
  let i = 0;
  for (const key of Object.keys(from)) {
    if (!hasOwn(to, key)) continue;
    if (toKeys[i] !== key) return false;
    i++;
  }
  return true;
}

/** Whether two JSON values serialise to the same string (member order counts). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  const otherKeys = Object.keys(b);
  return keys.length === otherKeys.length && keys.every((key, i) => key === otherKeys[i] && sameJson(a[key], b[key]));
}

/**
 * `schema` changed by `delta` (in place where it can; the result is returned).
 * Throws if the delta is malformed or does not fit the schema: a path through
 * a member that is missing or not an object, or a delete of a missing member.
 */
export function applySchemaDelta(schema: JsonObject, delta: SchemaDelta): JsonObject {
  let root = schema;
  for (const path of delta.delete) {
    const { parent, key } = locate(root, path, 'delete');
    if (!hasOwn(parent, key)) throw new Error(`deletes the missing member ${JSON.stringify(path)}`);
    delete parent[key];
  }
  for (const [path, value] of delta.set) {
    if (path.length === 0) {
      if (!isObject(value)) throw new Error('sets the whole schema to a value that is not an object');
      root = value;
      continue;
    }
    const { parent, key } = locate(root, path, 'set');
    // Defined, not assigned: a member named `__proto__` must stay a member.
    Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
  }
  return root;
}

function locate(root: JsonObject, path: SchemaPath, op: string): { parent: JsonObject; key: string } {
  if (path.length === 0) throw new Error(`${op}s an empty path`);
  let parent = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i] as string;
    const child = hasOwn(parent, key) ? parent[key] : undefined;
    if (!isObject(child)) throw new Error(`${op}s ${JSON.stringify(path)} through ${JSON.stringify(path.slice(0, i + 1))}, which is not an object`);
    parent = child;
  }
  return { parent, key: path[path.length - 1] as string };
}

export function encodeSchemaDelta(delta: SchemaDelta): Buffer {
  return Buffer.from(JSON.stringify(delta), 'utf8');
}

/** A stored delta, checked for shape (throws if it is not one). */
export function decodeSchemaDelta(bytes: Uint8Array): SchemaDelta {
  const delta: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8'));
  const isPath = (path: unknown): path is string[] => Array.isArray(path) && path.every((key) => typeof key === 'string');
  if (!isObject(delta) || !Array.isArray(delta.delete) || !Array.isArray(delta.set)
    || !delta.delete.every(isPath)
    || !delta.set.every((op) => Array.isArray(op) && op.length === 2 && isPath(op[0]))) {
    throw new Error('not a schema delta ({ delete: [path], set: [[path, value]] })');
  }
  return delta as unknown as SchemaDelta;
}
