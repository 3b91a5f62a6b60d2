/**
 * The path grammar of API.md §1.1:
 *   path = "/" [ indexes "/" ] [ id ] [ "." selector ]
 * (the `:method` suffix is removed by the HTTP layer). The raw path is split
 * first and the pieces percent-decoded after, so `%2F`, `%2C`, `%2E`, `%3A`
 * in an ID stay part of it; `+` decodes to a space (API.md §1.1).
 */
import { apiErrors } from '../errors.js';

export const INDEX_PATH_BYTES_MAX = 243;
export const DOCUMENT_ID_BYTES_MAX = 245;

export interface ParsedPath {
  /** Index paths in canonical form (`/a/b/`); empty for the root. */
  indexes: readonly string[];
  /** Document ID text (percent-decoded), when the path names a document. */
  id: string | undefined;
  /** Selector after the first `.` of the last segment (or a leading-`.` segment). */
  selector: string | undefined;
}

/** Characters never allowed in an index segment (besides `/`). */
const FORBIDDEN_IN_INDEX = /[\\*?"<>|\s,#:]/;

export function parsePath(rawPath: string, options: { allowWildcards?: boolean } = {}): ParsedPath {
  if (!rawPath.startsWith('/')) throw apiErrors.badPath(`Path must start with '/': ${rawPath}`);
  const lastSlash = rawPath.lastIndexOf('/');
  const indexPart = rawPath.slice(1, lastSlash);
  let last = rawPath.slice(lastSlash + 1);

  let selector: string | undefined;
  if (last.length > 0) {
    // The first raw '.' after the first character starts a selector; a last
    // segment beginning with '.' is a selector on the index or the root.
    const dot = last.startsWith('.') ? 0 : last.indexOf('.', 1);
    if (dot >= 0) {
      selector = decodePiece(last.slice(dot + 1));
      last = last.slice(0, dot);
      if (selector.length === 0) throw apiErrors.badPath('Empty selector');
    }
  }
  const id = last.length > 0 ? decodePiece(last) : undefined;
  if (id !== undefined) {
    if (Buffer.byteLength(id) > DOCUMENT_ID_BYTES_MAX) {
      throw apiErrors.badId(`Document ID longer than ${DOCUMENT_ID_BYTES_MAX} bytes`);
    }
  }

  return { indexes: indexList(indexPart, options.allowWildcards === true), id, selector };
}

/**
 * Validated index lists by raw text. Clients name few indexes, and
 * validation was a tenth of a cached GET's time (profiled), so remember
 * them; the map is cleared when it reaches its bound, never grows past it.
 */
const INDEX_LIST_CACHE_ENTRIES_MAX = 4096;
const indexListCache = new Map<string, readonly string[]>();

function indexList(indexPart: string, allowWildcards: boolean): readonly string[] {
  if (indexPart.length === 0) return [];
  const key = allowWildcards ? `*${indexPart}` : indexPart;
  let list = indexListCache.get(key);
  if (list === undefined) {
    list = Object.freeze(indexPart.split(',').map((item) => canonicalIndex(item, allowWildcards)));
    if (indexListCache.size >= INDEX_LIST_CACHE_ENTRIES_MAX) indexListCache.clear();
    indexListCache.set(key, list);
  }
  return list;
}

/** Validate one raw list item (`a/b`) and return `/a/b/`. */
function canonicalIndex(rawItem: string, allowWildcard: boolean): string {
  if (rawItem.length === 0) throw apiErrors.badIndexName(rawItem, 'empty name');
  const segments = rawItem.split('/').map(decodePiece);
  segments.forEach((segment, i) => {
    const isLast = i === segments.length - 1;
    const name = allowWildcard && isLast && segment.endsWith('*') ? segment.slice(0, -1) : segment;
    if (segment.length === 0) throw apiErrors.badIndexName(rawItem, 'empty segment');
    if (segment === '.' || segment === '..') throw apiErrors.badIndexName(rawItem, `segment '${segment}' is not allowed`);
    if (FORBIDDEN_IN_INDEX.test(name)) throw apiErrors.badIndexName(rawItem, 'contains a forbidden character');
    if (name.indexOf('.', 1) > 0) throw apiErrors.badIndexName(rawItem, "'.' is allowed only as the first character of a segment");
  });
  const path = `/${segments.join('/')}/`;
  if (Buffer.byteLength(path) > INDEX_PATH_BYTES_MAX) {
    throw apiErrors.badIndexName(rawItem, `longer than ${INDEX_PATH_BYTES_MAX} bytes`);
  }
  return path;
}

/** Percent-decode one piece; `+` is a space, as Xapiand's path decoder reads it (a literal plus is `%2B`). */
export function decodePiece(piece: string): string {
  if (piece.indexOf('%') < 0 && piece.indexOf('+') < 0) return piece;
  try {
    return decodeURIComponent(piece.replaceAll('+', ' '));
  } catch {
    throw apiErrors.badPath(`Bad percent-encoding in '${piece}'`);
  }
}

/** Internal indexes (`/.xapiand/`, `/.tessera/` and below) refuse writes (403). */
export function isInternalIndex(index: string): boolean {
  return index.startsWith('/.xapiand/') || index.startsWith('/.tessera/');
}
