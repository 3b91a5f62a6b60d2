/**
 * Limits on a decoded value (API.md §13), checked by one iterative walk: a
 * value can be as deep as its codec allowed, so recursion could overflow the
 * stack before any limit bites. The walk refuses
 *   - nesting deeper than `depthMax` (also catches cyclic YAML anchors),
 *   - more than `fieldsMax` object keys in total,
 *   - an array of more than `arrayItemsMax` items (the codecs' pre-scans refuse most before decoding),
 *   - a `__proto__` key, or any object whose prototype a codec replaced,
 *   - objects other than plain objects and arrays (Date, Map, Set…),
 *   - NaN/±Infinity (JSON5 literals, YAML `.nan`/`.inf`, JSON `1e400`),
 *   - more than `valuesMax` values visited: YAML aliases share subtrees, so a
 *     small body can name a huge value; every other codec spends ≥ 1 byte per
 *     value and never comes near the bound.
 */
import { bodyMalformed, bodyTooDeep, invalidFieldName, tooManyArrayItems, tooManyFields, tooManyValues } from './errors.js';
import { arrayItemsMaxOf } from './limits.js';
import type { DecodeLimits } from './types.js';

/** Leaves that are objects: MessagePack `bin` decodes to a Uint8Array. */
function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value);
}

export function checkDecodedValue(root: unknown, limits: DecodeLimits, valuesMax: number, what: string): void {
  if (!isContainer(root)) {
    if (typeof root === 'number' && !Number.isFinite(root)) throw nonFinite(what);
    return;
  }
  if (limits.depthMax < 1) throw bodyTooDeep(limits.depthMax);
  // Pending containers and their depths (root = 1). Bounded by valuesMax.
  const pending: object[] = [root];
  const depths: number[] = [1];
  let fields = 0;
  let values = 1;
  const arrayItemsMax = arrayItemsMaxOf(limits);
  let childDepth = 1;
  /** A child value: a container goes on the pending stack at `childDepth`, a number must be finite. */
  const child = (v: unknown): void => {
    if (typeof v === 'object') {
      if (isContainer(v)) {
        if (childDepth > limits.depthMax) throw bodyTooDeep(limits.depthMax);
        pending.push(v);
        depths.push(childDepth);
      }
    } else if (typeof v === 'number' && !Number.isFinite(v)) {
      throw nonFinite(what);
    }
  };
  while (pending.length > 0) {
    const node = pending.pop() as object;
    childDepth = (depths.pop() as number) + 1;
    if (Array.isArray(node)) {
      const n = node.length;
      if (n > arrayItemsMax) throw tooManyArrayItems(arrayItemsMax);
      values += n;
      if (values > valuesMax) throw tooManyValues(what, valuesMax);
      for (let i = 0; i < n; i++) child(node[i]);
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(node);
    if (proto !== Object.prototype && proto !== null) {
      const tag = Object.prototype.toString.call(node).slice(8, -1);
      // A codec that assigned `obj.__proto__ = x` would have replaced the
      // prototype instead of adding a key: refuse it as if the key were visible.
      if (tag === 'Object') throw invalidFieldName('__proto__');
      throw bodyMalformed(what, `values of type ${tag} are not supported`);
    }
    const keys = Object.keys(node);
    const n = keys.length;
    fields += n;
    if (fields > limits.fieldsMax) throw tooManyFields(limits.fieldsMax);
    values += n;
    if (values > valuesMax) throw tooManyValues(what, valuesMax);
    for (let i = 0; i < n; i++) {
      const key = keys[i] as string;
      if (key === '__proto__') throw invalidFieldName(key);
      child((node as Record<string, unknown>)[key]);
    }
  }
}

function nonFinite(what: string) {
  return bodyMalformed(what, 'NaN and Infinity are not allowed');
}
