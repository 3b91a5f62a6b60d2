/**
 * Selectors (API.md §1.3): `a.b.c` drills to a value; `{a,b.c}` keeps only
 * those keys (nested paths allowed).
 */
import { apiErrors } from '../errors.js';
import { isPlainObject } from '@tessera/schema';

const MISSING = Symbol('missing');

/** `{a,b.c}`: a selector that keeps several paths, as opposed to one that drills (`a.b`). */
export function isSelectorSet(selector: string): boolean {
  const s = selector.trim();
  return s.startsWith('{') && s.endsWith('}');
}

/** The top-level keys a selector reads: one for a drill (`a.b` → `a`), each path's first for a set. */
export function selectorTopKeys(selector: string): string[] {
  const s = selector.trim();
  if (!isSelectorSet(s)) return [s.split('.', 1)[0]!];
  return s.slice(1, -1).split(',').map((part) => part.trim()).filter((path) => path.length > 0).map((path) => path.split('.', 1)[0]!);
}

export function applySelector(value: unknown, selector: string): unknown {
  const s = selector.trim();
  if (isSelectorSet(s)) {
    const out: Record<string, unknown> = {};
    for (const part of s.slice(1, -1).split(',')) {
      const path = part.trim();
      if (path.length === 0) continue;
      const found = drill(value, path);
      if (found !== MISSING) setPath(out, path, found);
    }
    return out;
  }
  const found = drill(value, s);
  if (found === MISSING) throw apiErrors.selectorNotFound(selector);
  return found;
}

/**
 * `applySelector` where a missing drill path is `null` instead of a 404: a
 * search hit, and the echo of a write (applied already: a 404 would tell the
 * client it was not).
 */
export function selectOrNull(value: unknown, selector: string | undefined): unknown {
  if (selector === undefined) return value;
  const s = selector.trim();
  if (isSelectorSet(s)) return applySelector(value, s);
  const found = drill(value, s);
  return found === MISSING ? null : found;
}

function drill(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (isPlainObject(current) && Object.prototype.hasOwnProperty.call(current, key)) current = current[key];
    else if (Array.isArray(current) && /^\d+$/.test(key) && Number(key) < current.length) current = current[Number(key)];
    else return MISSING;
  }
  return current;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i] as string;
    const next = node[key];
    if (!isPlainObject(next)) {
      const created: Record<string, unknown> = {};
      Object.defineProperty(node, key, { value: created, enumerable: true, writable: true, configurable: true });
      node = created;
    } else node = next;
  }
  Object.defineProperty(node, keys[keys.length - 1] as string, { value, enumerable: true, writable: true, configurable: true });
}
