/**
 * Aliases (API.md §16.2): an index path standing for one or more indexes,
 * `{"_indexes": ["/logs/2026-11/", "/logs/2026-10/"], "_write_index":
 * "/logs/2026-11/"}`, in the cluster state. A request naming an alias is
 * resolved once, before its handler runs, from the one cluster state current
 * then: the handler sees concrete indexes only, so a search running while the
 * alias is replaced searches the old set or the new one, never a mix.
 *
 * * Reads over indexes (SEARCH, COUNT, index GET/HEAD/INFO, COMMIT) go to
 *   every index of the alias.
 * * Single-index APIs (documents, stored content, POST, RESTORE, DUMP) go to
 *   `_write_index`, or to the only index; several and no write index → 400.
 * * Index PUT/UPDATE/DELETE on an alias's name → 409: it is not an index.
 *
 * The indexes named need not exist yet: a write through the alias creates its
 * write index (templates apply); a missing index searches as empty.
 */
import { isPlainObject } from '@tessera/schema';
import { apiErrors } from '../errors.js';
import { parsePath, type ParsedPath } from '../request/path.js';
import { isReservedIndex } from './reserved.js';

/** An alias as stored in the cluster state and answered by `GET /.aliases/<name>`. */
export interface IndexAlias {
  _indexes: string[];
  _write_index?: string;
}

export const ALIASES_MAX = 10_000;
export const ALIAS_INDEXES_MAX = 1000;

const ALIAS_KEYS = new Set(['_indexes', '_write_index']);

/** `logs/current`, `/logs/current/`… as the canonical index path `/logs/current/` (400 if not an index path). */
export function canonicalAliasName(raw: string): string {
  const text = raw.startsWith('/') ? raw : `/${raw}`;
  const parsed = parsePath(text.endsWith('/') ? text : `${text}/`);
  const name = parsed.indexes[0];
  if (parsed.indexes.length !== 1 || parsed.id !== undefined || parsed.selector !== undefined || name === undefined) {
    throw apiErrors.badIndexName(raw, 'an alias name is one index path');
  }
  if (isReservedIndex(name)) throw apiErrors.reservedIndexName(name);
  return name;
}

/** Validate an alias body; index paths come back canonical, the write index among `_indexes`. */
export function parseAlias(name: string, body: unknown, isAlias: (path: string) => boolean): IndexAlias {
  if (!isPlainObject(body)) throw apiErrors.badAlias(name, 'an alias must be an object');
  for (const key of Object.keys(body)) {
    if (key.length === 0 || key.startsWith('#')) continue;
    if (!ALIAS_KEYS.has(key)) throw apiErrors.badAlias(name, `unknown key '${key}' (expected _indexes, _write_index)`);
  }
  const indexPath = (value: unknown, what: string): string => {
    if (typeof value !== 'string') throw apiErrors.badAlias(name, `${what} must be an index path string`);
    const path = canonicalAliasName(value);
    if (path === name) throw apiErrors.badAlias(name, 'an alias cannot name itself');
    if (isAlias(path)) throw apiErrors.badAlias(name, `${path} is an alias: an alias names indexes only`);
    return path;
  };
  const write = body._write_index === undefined ? undefined : indexPath(body._write_index, "'_write_index'");
  const given = body._indexes ?? (write === undefined ? undefined : [write]);
  if (!Array.isArray(given) || given.length === 0 || given.length > ALIAS_INDEXES_MAX) {
    throw apiErrors.badAlias(name, `'_indexes' must be a list of 1 to ${ALIAS_INDEXES_MAX} index paths`);
  }
  const indexes = [...new Set(given.map((v, i) => indexPath(v, `'_indexes'[${i}]`)))];
  if (write !== undefined && !indexes.includes(write)) throw apiErrors.badAlias(name, `'_write_index' ${write} is not one of '_indexes'`);
  return write === undefined ? { _indexes: indexes } : { _indexes: indexes, _write_index: write };
}

/** How a request uses the indexes it names. */
export type IndexUse = 'read' | 'write' | 'define';

/**
 * The request's path with every alias replaced by what it stands for here
 * (the same path object when it names none, the common case).
 */
export function resolveAliases(path: ParsedPath, use: IndexUse, aliases: Readonly<Record<string, IndexAlias>> | undefined): ParsedPath {
  if (aliases === undefined || !path.indexes.some((index) => Object.hasOwn(aliases, index))) return path;
  if (use === 'define') throw apiErrors.indexNamesAlias(path.indexes.find((index) => Object.hasOwn(aliases, index)) as string);
  if (use === 'write') {
    // A list is refused by the handler (single-index APIs); only a lone alias resolves.
    if (path.indexes.length !== 1) return path;
    const name = path.indexes[0] as string;
    return { ...path, indexes: [writeIndexOf(name, aliases[name] as IndexAlias)] };
  }
  const out = new Set<string>();
  for (const index of path.indexes) {
    const alias = Object.hasOwn(aliases, index) ? aliases[index] : undefined;
    if (alias === undefined) out.add(index);
    else for (const target of alias._indexes) out.add(target);
  }
  return { ...path, indexes: [...out] };
}

function writeIndexOf(name: string, alias: IndexAlias): string {
  if (alias._write_index !== undefined) return alias._write_index;
  if (alias._indexes.length === 1) return alias._indexes[0] as string;
  throw apiErrors.aliasNeedsWriteIndex(name);
}
