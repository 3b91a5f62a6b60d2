/**
 * Request paths of the path grammar (API.md §1.1): index paths end in `/`,
 * a document path is the index path and the ID, and every piece is
 * percent-encoded so that the characters the grammar gives a meaning
 * (`/ . : , +` and the rest) stay part of the name. A raw `.` in an ID would
 * start a selector (and a write would be refused), so it is sent as `%2E`.
 */
import type { DocumentId, Indexes } from './types.js';

function encodePiece(piece: string): string {
  return encodeURIComponent(piece).replace(/\./g, '%2E');
}

/** `bank` → `/bank/`, `/logs/2026/` stays; each segment is encoded. A segment may start with `.` (`/.tessera/`). */
function onePath(index: string): string {
  const segments = index.split('/').filter((s) => s.length > 0);
  if (segments.length === 0) throw new TypeError(`not an index path: ${JSON.stringify(index)}`);
  return `/${segments.map((s) => encodeURIComponent(s)).join('/')}/`;
}

/** The path of one index or a list (`['a', 'b']` → `/a,b/`). */
export function indexPath(indexes: Indexes): string {
  const list = typeof indexes === 'string' ? [indexes] : indexes;
  if (list.length === 0) throw new TypeError('no index given');
  return `/${list.map((i) => onePath(i).slice(1, -1)).join(',')}/`;
}

/** The path of a document; `extension` selects stored content by file type (`png`). */
export function documentPath(index: string, id: DocumentId, extension?: string): string {
  return `${indexPath(index)}${encodePiece(String(id))}${extension === undefined ? '' : `.${extension}`}`;
}

/** The path of an entry of an administration collection (`/.templates/<name>`). */
export function entryPath(collection: 'templates' | 'aliases' | 'keys', name: string): string {
  return `/.${collection}/${collection === 'aliases' ? onePath(name).slice(1, -1) : encodePiece(name)}`;
}

export type QueryValue = string | number | boolean | undefined;

/** `?a=1&b=true` of the parameters that are set; `''` when none is. */
export function queryString(params: Readonly<Record<string, QueryValue>>): string {
  const parts = Object.entries(params)
    .filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}
