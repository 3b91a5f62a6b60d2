/**
 * Request body → value (API.md §2.2). The Content-Type picks the decoder;
 * every decoder enforces the same limits (depth, fields, `__proto__`,
 * NaN/Infinity) before or while it builds the value, and a malformed body is
 * a TesseraError 400 carrying the parser's message — never another exception.
 */
import { NOT_JSON, parseJsonText, tryParseJsonText } from './json.js';
import { bodyFormatOf, mediaTypeOf } from './media-type.js';
import { decodeMsgpack } from './msgpack.js';
import { parseNdjsonText } from './ndjson.js';
import type { DecodedBody, DecodeLimits } from './types.js';
import { decodeUtf8, tryDecodeUtf8 } from './utf8.js';
import { parseYamlText } from './yaml.js';

/** Optional whitespace, then `{` or `[` (a form field name cannot start so unencoded). */
const LOOKS_LIKE_JSON = /^[\t\n\r ]*[{[]/;

export function decodeBody(body: Buffer, contentType: string | undefined, limits: DecodeLimits): DecodedBody {
  const mediaType = mediaTypeOf(contentType);
  const format = bodyFormatOf(mediaType);
  switch (format) {
    case 'json':
      if (body.length === 0) return { kind: 'value', value: {}, mediaType };
      return { kind: 'value', value: parseJsonText(decodeUtf8(body, 'JSON'), limits, 'JSON'), mediaType };
    case 'yaml':
      if (body.length === 0) return { kind: 'value', value: {}, mediaType };
      return { kind: 'value', value: parseYamlText(decodeUtf8(body, 'YAML'), limits), mediaType };
    case 'msgpack':
      if (body.length === 0) return { kind: 'value', value: {}, mediaType };
      return { kind: 'value', value: decodeMsgpack(body, limits), mediaType };
    case 'ndjson':
      return { kind: 'value', value: parseNdjsonText(decodeUtf8(body, 'NDJSON'), limits), mediaType };
    case 'form': {
      // curl -d sends JSON as form-urlencoded: JSON if it parses, else stored bytes…
      const text = tryDecodeUtf8(body);
      if (text === undefined) return { kind: 'opaque', bytes: body, mediaType };
      // …but text opening as an object or array was meant as JSON: a typo is a 400 saying where, not a 415.
      if (LOOKS_LIKE_JSON.test(text)) return { kind: 'value', value: parseJsonText(text, limits, 'JSON'), mediaType };
      const value = tryParseJsonText(text, limits, 'JSON');
      if (value === NOT_JSON) return { kind: 'opaque', bytes: body, mediaType };
      return { kind: 'value', value, mediaType };
    }
    case 'opaque':
      return { kind: 'opaque', bytes: body, mediaType };
  }
}
