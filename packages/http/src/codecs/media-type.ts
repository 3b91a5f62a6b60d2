/**
 * Media types of request bodies (API.md §2.2): which decoder a Content-Type
 * selects, and which types are also response serializers (§2.3).
 */

export { mediaTypeOf } from '@tessera/documents';

/** The decoders of API.md §2.2; `opaque` keeps the bytes as stored content. */
export type BodyFormat = 'json' | 'form' | 'yaml' | 'msgpack' | 'ndjson' | 'opaque';

const FORMAT_BY_MEDIA_TYPE: ReadonlyMap<string, BodyFormat> = new Map<string, BodyFormat>([
  ['', 'json'],
  ['application/json', 'json'],
  ['application/x-json', 'json'],
  ['application/www-form-urlencoded', 'form'],
  ['application/x-www-form-urlencoded', 'form'],
  ['application/yaml', 'yaml'],
  ['application/x-yaml', 'yaml'],
  ['application/msgpack', 'msgpack'],
  ['application/x-msgpack', 'msgpack'],
  ['application/ndjson', 'ndjson'],
  ['application/x-ndjson', 'ndjson'],
]);

/** Decoder for a media type as returned by `mediaTypeOf` ('' = no Content-Type = JSON). */
export function bodyFormatOf(mediaType: string): BodyFormat {
  return FORMAT_BY_MEDIA_TYPE.get(mediaType) ?? 'opaque';
}

/** The serializer formats and their media types, canonical (preferred) type first. */
export const SERIALIZER_MEDIA_TYPES = {
  json: ['application/json', 'application/x-json'],
  yaml: ['application/x-yaml', 'application/yaml'],
  msgpack: ['application/x-msgpack', 'application/msgpack'],
} as const;

export type SerializerFormat = keyof typeof SERIALIZER_MEDIA_TYPES;

/** True for the JSON, YAML and MessagePack media types (not ndjson, not form-urlencoded). */
export function isSerializerType(mediaType: string): boolean {
  const format = FORMAT_BY_MEDIA_TYPE.get(mediaType);
  return mediaType !== '' && (format === 'json' || format === 'yaml' || format === 'msgpack');
}
