/**
 * Interned method and header-name strings. The parser compares the head text
 * against these in place (`startsWith` at an offset, candidates grouped by
 * length), so the common methods and header names cost no string allocation
 * and later comparisons against them hit V8's pointer-equality fast path.
 */

/** Methods Tessera knows (API.md §3). Anything else is still a valid token, answered 405 by the router. */
export const KNOWN_METHODS: readonly string[] = Object.freeze([
  'GET', 'HEAD', 'PUT', 'POST', 'UPDATE', 'UPSERT', 'PATCH', 'DELETE', 'INFO', 'SEARCH', 'COUNT',
  'COMMIT', 'DUMP', 'RESTORE', 'OPTIONS', 'OPEN', 'CLOSE', 'WAL', 'CHECK', 'FLUSH', 'QUIT',
]);

/** Lower-case header names seen on nearly every request, or that the parser itself reads. */
const KNOWN_HEADER_NAMES: readonly string[] = [
  'host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'expect', 'accept',
  'accept-encoding', 'accept-language', 'user-agent', 'authorization', 'cookie', 'keep-alive', 'te',
  'trailer', 'upgrade', 'origin', 'referer', 'cache-control', 'pragma', 'content-encoding',
  'x-http-method-override', 'http-method-override', 'x-forwarded-for', 'x-request-id', 'if-match',
  'if-none-match', 'if-modified-since', 'range',
];

/** 'content-length' → 'Content-Length', the spelling most clients send. */
function titleCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}

interface Spelling {
  readonly text: string;
  readonly interned: string;
}

function byLength(entries: readonly Spelling[]): Spelling[][] {
  const table: Spelling[][] = [];
  for (const entry of entries) (table[entry.text.length] ??= []).push(entry);
  return table;
}

const METHOD_TABLE = byLength(KNOWN_METHODS.map((m) => ({ text: m, interned: m })));

const HEADER_TABLE = byLength(KNOWN_HEADER_NAMES.flatMap((name) => {
  const title = titleCase(name);
  const upper = name.toUpperCase();
  const spellings = [{ text: name, interned: name }, { text: title, interned: name }];
  if (upper !== title) spellings.push({ text: upper, interned: name });
  return spellings;
}));

function lookup(table: Spelling[][], s: string, start: number, end: number): string | undefined {
  const candidates = table[end - start];
  if (candidates === undefined) return undefined;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    if (s.startsWith(c.text, start)) return c.interned;
  }
  return undefined;
}

/** The interned method if `s[start, end)` is a known method spelled in upper case. */
export function internMethodAt(s: string, start: number, end: number): string | undefined {
  return lookup(METHOD_TABLE, s, start, end);
}

/** The interned lower-case name if `s[start, end)` is a known header name in a common spelling. */
export function internHeaderNameAt(s: string, start: number, end: number): string | undefined {
  return lookup(HEADER_TABLE, s, start, end);
}

/** The interned upper-case method for any spelling of a known method, else undefined. */
export function knownMethod(name: string): string | undefined {
  const exact = internMethodAt(name, 0, name.length);
  if (exact !== undefined) return exact;
  const upper = name.toUpperCase();
  return internMethodAt(upper, 0, upper.length);
}

/** RFC 9110 §5.6.2 token. */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
