/**
 * Stored content negotiation (API.md §6): which entry of a document a GET
 * returns — by the path's extension through the shipped media-type table
 * (mime-db, via mime-types), else by the highest-q `Accept` range, ties to
 * the later entry, no `Accept` meaning `*\/*` (the default, last entry) —
 * and the blob's bytes streamed from the shard in CONTENT_CHUNK_BYTES reads.
 * The JSON body is the first entry, `application/msgpack` `inplace`, and
 * matches every serializer type.
 */
import { bodyFormatOf, isSerializerType, mediaTypeOf, parseAccept, qualityFor } from '@tessera/http';
import type { ContentLink } from '@tessera/rpc';
import mime from 'mime-types';

/** Bytes per shard read when a blob is streamed out: memory stays bounded whatever the blob's size. */
export const CONTENT_READ_BYTES = 1024 * 1024;

/** The JSON body's entry type (INFO `data`). */
export const INPLACE_TYPE = 'application/msgpack';

/** A request body that is stored content: any Content-Type that is not a body codec (§2.2). */
export function isContentBody(contentType: string | undefined): boolean {
  return bodyFormatOf(mediaTypeOf(contentType)) === 'opaque';
}

/** A selector that can be a file extension: one dot-free word (`png`, `tar` but not `tar.gz`, `example.com` or `doe@mail.com`). */
const EXTENSION_SHAPE = /^[A-Za-z0-9][A-Za-z0-9+_-]*$/;

/**
 * The media type a path extension names (`png` → `image/png`), or undefined
 * when it is not one word the table knows. mime-types alone would look up
 * the text after the last dot of anything (`doe@mail.com` → `com`, a
 * Windows executable), which would take host names and e-mail addresses
 * for stored content.
 */
export function extensionType(extension: string): string | undefined {
  if (!EXTENSION_SHAPE.test(extension)) return undefined;
  const type = mime.lookup(extension);
  return type === false ? undefined : type;
}

/** What a GET of a document answers: its JSON body, one stored entry, or nothing acceptable (406). */
export type ContentChoice = { kind: 'body' } | { kind: 'stored'; entry: ContentLink } | { kind: 'none' };

/**
 * The entry `accept` (an Accept header, or the extension's type) selects:
 * each entry gets the q of the most specific range matching it (the body:
 * its best over the serializer types); the highest q > 0 wins, ties go to
 * the later entry. Without a readable Accept, the default (last) entry.
 */
export function chooseContent(accept: string | undefined, content: readonly ContentLink[]): ContentChoice {
  const ranges = accept === undefined ? [] : parseAccept(accept);
  if (ranges.length === 0) return content.length > 0 ? { kind: 'stored', entry: content[content.length - 1] as ContentLink } : { kind: 'body' };
  let best: ContentChoice = { kind: 'none' };
  let bestQ = 0;
  const bodyQ = Math.max(...SERIALIZER_TYPES.map((type) => qualityFor(ranges, type)));
  if (bodyQ > 0) {
    best = { kind: 'body' };
    bestQ = bodyQ;
  }
  for (const entry of content) {
    const q = qualityFor(ranges, mediaTypeOf(entry.type));
    if (q > 0 && q >= bestQ) {
      best = { kind: 'stored', entry };
      bestQ = q;
    }
  }
  return best;
}

const SERIALIZER_TYPES: readonly string[] = [
  'application/json', 'application/x-json', 'application/x-yaml', 'application/yaml', 'application/x-msgpack', 'application/msgpack',
].filter(isSerializerType);

/**
 * A blob's bytes as a stream of shard reads. The first read, made before
 * this resolves (so before the response starts), checks the whole blob's
 * checksum on the shard in bounded steps: a corrupted blob is refused with
 * its error, never half-sent as good data.
 */
export async function openBlob(entry: ContentLink, read: (from: number, length: number, verify: boolean) => Promise<Uint8Array>):
  Promise<AsyncIterable<Uint8Array>> {
  const first = await read(0, Math.min(CONTENT_READ_BYTES, entry.size), true);
  return (async function* chunks(): AsyncGenerator<Uint8Array> {
    yield first;
    for (let from = first.length; from < entry.size;) {
      const length = Math.min(CONTENT_READ_BYTES, entry.size - from);
      yield await read(from, length, false);
      from += length;
    }
  })();
}
