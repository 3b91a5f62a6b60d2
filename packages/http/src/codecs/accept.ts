/**
 * Response serializer negotiation (API.md §2.3). Each serializer type gets
 * the quality of the most specific Accept range that matches it (exact type,
 * then `type/*`, then `*\/*`); the winner is the type whose range comes first
 * in q order (stable, so the client's order breaks ties), and among types
 * that one wildcard range matches, the server's preference: the request
 * body's type when it is a serializer, then JSON, YAML, MessagePack.
 * Without Accept, or when `*\/*` comes first, that preference decides alone.
 */
import { isToken, parseHeaderList, qualityOf } from './header-list.js';
import { isSerializerType, mediaTypeOf, SERIALIZER_MEDIA_TYPES } from './media-type.js';
import { INDENT_MAX, serializerFor } from './serializers.js';
import type { MediaRange, Serializer } from './types.js';

/** Accept ranges in q order (highest first, ties in the client's order); malformed ranges are ignored. */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of parseHeaderList(header)) {
    const range = element.value === '*' ? '*/*' : element.value;
    const slash = range.indexOf('/');
    if (slash < 0) continue;
    const type = range.slice(0, slash).trim();
    const subtype = range.slice(slash + 1).trim();
    if (!isToken(type) || !isToken(subtype) || (type === '*' && subtype !== '*')) continue;
    const q = qualityOf(element.params);
    if (q === undefined) continue;
    const params: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of Object.entries(element.params)) if (name !== 'q') params[name] = value;
    ranges.push({ type, subtype, q, params });
  }
  // Array.prototype.sort is stable (ES2019).
  return ranges.sort((a, b) => b.q - a.q);
}

/** Server preference among the serializer types after the request body's own type. */
const PREFERENCE: readonly string[] = [
  'application/json', 'application/x-yaml', 'application/x-msgpack',
  'application/x-json', 'application/yaml', 'application/msgpack',
];

export interface SerializerChoice {
  serializer: Serializer;
  /** From `indent=N` (0–16) on the matched range; undefined when absent or invalid. */
  indent: number | undefined;
}

/**
 * Choices by Accept and request Content-Type. Clients send the same few
 * headers on every request, and parsing them cost 0.7 µs for `*\/*` (curl),
 * 1 µs for `application/json` and 4.4 µs for a browser's list, per response
 * (Node 20). Keys are client input: bounded, cleared when full.
 */
const CHOICE_CACHE_ENTRIES_MAX = 256;
const choices = new Map<string, Readonly<SerializerChoice> | null>();

/** The serializer for a response, or null when nothing is acceptable (406, empty body). Shared: never mutate it. */
export function negotiateSerializer(accept: string | undefined, requestContentType: string | undefined): Readonly<SerializerChoice> | null {
  if (accept === undefined && requestContentType === undefined) return DEFAULT_CHOICE;
  // A NUL cannot appear in a header value: the key is unambiguous.
  const key = requestContentType === undefined ? accept as string : `${accept ?? ''}\0${requestContentType}`;
  let choice = choices.get(key);
  if (choice === undefined) {
    choice = negotiate(accept, requestContentType);
    if (choice !== null) Object.freeze(choice);
    if (choices.size >= CHOICE_CACHE_ENTRIES_MAX) choices.clear();
    choices.set(key, choice);
  }
  return choice;
}

function negotiate(accept: string | undefined, requestContentType: string | undefined): SerializerChoice | null {
  const requestType = mediaTypeOf(requestContentType);
  const preference = isSerializerType(requestType) ? [requestType, ...PREFERENCE.filter((t) => t !== requestType)] : PREFERENCE;
  const ranges = accept === undefined ? [] : parseAccept(accept);
  // No Accept, or nothing in it we can read: as if `*/*`.
  if (ranges.length === 0) return { serializer: serializerFor(preference[0] as string) as Serializer, indent: undefined };

  let bestType: string | undefined;
  let bestRange = ranges.length;
  for (const mediaType of preference) {
    const index = matchingRange(ranges, mediaType);
    if (index < bestRange && (ranges[index] as MediaRange).q > 0) {
      bestType = mediaType;
      bestRange = index;
    }
  }
  if (bestType === undefined) return null;
  return { serializer: serializerFor(bestType) as Serializer, indent: indentOf(ranges[bestRange] as MediaRange) };
}

/** No Accept and no request body type: the server's first preference. */
const DEFAULT_CHOICE: Readonly<SerializerChoice> = Object.freeze(negotiate(undefined, undefined) as SerializerChoice);

/**
 * Whether `accept` ranks `mediaType` strictly above every type a serializer
 * answers (JSON, YAML, MessagePack): a browser opening a page
 * (`text/html,…,*\/*;q=0.8`) ranks `text/html` so; an API client (none,
 * `*\/*`, a serializer type, or a tie) does not.
 */
export function ranksAboveSerializers(accept: string | undefined, mediaType: string): boolean {
  if (accept === undefined) return false;
  const ranges = parseAccept(accept);
  const q = qualityFor(ranges, mediaType);
  return q > 0 && Object.values(SERIALIZER_MEDIA_TYPES).every((types) => types.every((type) => qualityFor(ranges, type) < q));
}

/** The q the most specific range matching `mediaType` gives it (exact, then `type/*`, then `*\/*`); 0 when none matches. */
export function qualityFor(ranges: readonly MediaRange[], mediaType: string): number {
  const index = matchingRange(ranges, mediaType);
  return index < ranges.length ? (ranges[index] as MediaRange).q : 0;
}

/** Index of the most specific range matching `mediaType` (the first of equal specificity), or ranges.length. */
export function matchingRange(ranges: readonly MediaRange[], mediaType: string): number {
  const slash = mediaType.indexOf('/');
  const type = mediaType.slice(0, slash);
  const subtype = mediaType.slice(slash + 1);
  let best = ranges.length;
  let bestSpecificity = -1;
  for (let i = 0; i < ranges.length; i++) {
    const range = ranges[i] as MediaRange;
    let specificity: number;
    if (range.type === type && range.subtype === subtype) specificity = 2;
    else if (range.type === type && range.subtype === '*') specificity = 1;
    else if (range.type === '*') specificity = 0;
    else continue;
    if (specificity > bestSpecificity) {
      best = i;
      bestSpecificity = specificity;
    }
  }
  return best;
}

function indentOf(range: MediaRange): number | undefined {
  const indent = range.params['indent'];
  if (indent === undefined || !/^\d{1,2}$/.test(indent)) return undefined;
  const n = Number(indent);
  return n <= INDENT_MAX ? n : undefined;
}
