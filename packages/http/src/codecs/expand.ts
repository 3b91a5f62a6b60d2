/**
 * Dotted field names (API.md §2.2): `{"a.b": 1, "a": {"c": 2}}` ≡
 * `{"a": {"b": 1, "c": 2}}`. In every object (through arrays too), a key
 * `a.b.c` becomes nested objects; objects that meet merge, and anything else
 * that meets is replaced by the later key. Keys in `verbatimKeys` keep their
 * value as sent (`_params`, `_meta`, aggregation names), and so does the rest
 * of a dotted path after such a key (`_meta.a.b` ≡ `_meta: {"a.b": …}`). Keys
 * that are '' or start with '#' are comments: left as they are, for the
 * caller to drop.
 *
 * The result is built from new objects and arrays; the input is never
 * mutated. Expansion can deepen a value (`a.b.c…` with many segments), so the
 * depth of what is built is checked against `depthMax`, which also bounds the
 * recursion here.
 */
import { bodyTooDeep, invalidFieldName } from './errors.js';
import { DEFAULT_DECODE_LIMITS } from './limits.js';

export interface ExpandOptions {
  /** Keys whose values are not expanded. Default: DEFAULT_VERBATIM_KEYS. */
  verbatimKeys?: ReadonlySet<string>;
  /** Deepest nesting the expanded value may reach; deeper → 400. Default: DEFAULT_DECODE_LIMITS.depthMax. */
  depthMax?: number;
}

export const DEFAULT_VERBATIM_KEYS: ReadonlySet<string> = new Set(['_params', '_meta', '_aggs', '_aggregations']);

type Fields = Record<string, unknown>;

export function expandDottedFields(value: unknown, options?: ExpandOptions): unknown {
  const depthMax = options?.depthMax ?? DEFAULT_DECODE_LIMITS.depthMax;
  const expander = new Expander(options?.verbatimKeys ?? DEFAULT_VERBATIM_KEYS, depthMax);
  try {
    return expander.expand(value, 1);
  } catch (err) {
    // Recursion is bounded by depthMax; only a depthMax configured far past
    // the default could exhaust the stack, which is still the body's depth.
    if (err instanceof RangeError) throw bodyTooDeep(depthMax);
    throw err;
  }
}

function isFields(value: unknown): value is Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function ownValue(node: Fields, key: string): unknown {
  return Object.hasOwn(node, key) ? node[key] : undefined;
}

function checkKey(key: string): void {
  if (key === '__proto__') throw invalidFieldName(key);
}

class Expander {
  constructor(private readonly verbatimKeys: ReadonlySet<string>, private readonly depthMax: number) {}

  /** A copy of `value` with dotted keys expanded; `depth` is its depth if it is a container. */
  expand(value: unknown, depth: number): unknown {
    if (Array.isArray(value)) {
      this.checkDepth(depth);
      const out: unknown[] = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) out[i] = this.expand(value[i], depth + 1);
      return out;
    }
    if (isFields(value)) {
      this.checkDepth(depth);
      const out: Fields = {};
      this.expandInto(out, value, depth);
      return out;
    }
    return value;
  }

  /** A copy of `value` with keys as they are (verbatim and comment values). */
  clone(value: unknown, depth: number): unknown {
    if (Array.isArray(value)) {
      this.checkDepth(depth);
      const out: unknown[] = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) out[i] = this.clone(value[i], depth + 1);
      return out;
    }
    if (isFields(value)) {
      this.checkDepth(depth);
      const out: Fields = {};
      for (const key of Object.keys(value)) {
        checkKey(key);
        out[key] = this.clone(value[key], depth + 1);
      }
      return out;
    }
    return value;
  }

  /** Adds the fields of `src`, expanded, to `out` (at `depth`). */
  private expandInto(out: Fields, src: Fields, depth: number): void {
    for (const key of Object.keys(src)) {
      const value = src[key];
      if (key === '' || key.charCodeAt(0) === 0x23 /* # */ || this.verbatimKeys.has(key)) {
        checkKey(key);
        this.put(out, key, this.clone(value, depth + 1));
        continue;
      }
      if (key.indexOf('.') < 0) {
        checkKey(key);
        this.put(out, key, this.expand(value, depth + 1));
        continue;
      }
      const segments = key.split('.');
      for (const segment of segments) {
        if (segment === '') throw invalidFieldName(key);
        checkKey(segment);
      }
      let node = out;
      let nodeDepth = depth;
      const last = segments.length - 1;
      let i = 0;
      for (; i < last && !this.verbatimKeys.has(segments[i]!); i++) {
        node = this.child(node, segments[i]!, ++nodeDepth);
      }
      if (i < last) {
        // A verbatim key inside the path: the rest of the path is one key of its value.
        const holder = this.child(node, segments[i]!, ++nodeDepth);
        this.put(holder, segments.slice(i + 1).join('.'), this.clone(value, nodeDepth + 1));
      } else {
        const name = segments[last]!;
        this.put(node, name, this.verbatimKeys.has(name) ? this.clone(value, nodeDepth + 1) : this.expand(value, nodeDepth + 1));
      }
    }
  }

  /** The object under `key` in `node`, created (replacing a non-object) when needed. */
  private child(node: Fields, key: string, depth: number): Fields {
    const existing = ownValue(node, key);
    if (isFields(existing)) return existing;
    this.checkDepth(depth);
    const created: Fields = {};
    node[key] = created;
    return created;
  }

  /** Sets `node[key]`; when both the old and the new value are objects they merge, the new one's fields winning. */
  private put(node: Fields, key: string, value: unknown): void {
    const existing = ownValue(node, key);
    if (isFields(existing) && isFields(value)) {
      // Both were built by this expander: merging moves fields of one into the other, no input is touched.
      for (const k of Object.keys(value)) this.put(existing, k, value[k]);
    } else {
      node[key] = value;
    }
  }

  private checkDepth(depth: number): void {
    if (depth > this.depthMax) throw bodyTooDeep(this.depthMax);
  }
}

