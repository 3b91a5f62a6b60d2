/**
 * Error catalogue of the body codecs and content negotiation. Every code is
 * stable (clients and the docs table match on it); the message carries the
 * detail, e.g. the parser's own message for a malformed body.
 */
import { TesseraError } from '@tessera/errors';

export const CODEC_ERROR_STATUS = {
  /** The body does not parse as its Content-Type says (API.md §2.2). */
  body_malformed: 400,
  /** Objects/arrays nested deeper than `depthMax` (API.md §13: 128). */
  body_too_deep: 400,
  /** More object keys than `fieldsMax` in one value (API.md §13: 10,000). */
  too_many_fields: 400,
  /** An array with more items than `arrayItemsMax` (the document limit on a field's values has the same code). */
  too_many_values: 400,
  /** One YAML scalar's source is longer than `yamlScalarCharsMax` (the document limit of a string value has the same code). */
  value_too_large: 400,
  /** A key no codec may create (`__proto__`) or a dotted name with an empty segment. */
  invalid_field_name: 400,
  /** An opaque body where an object is required (API.md §2.2). */
  unsupported_media_type: 415,
  /** No serializer or content coding acceptable (API.md §2.3). */
  not_acceptable: 406,
} as const;

export type CodecErrorCode = keyof typeof CODEC_ERROR_STATUS;

function codecError(code: CodecErrorCode, message: string, cause?: unknown): TesseraError {
  return new TesseraError(code, CODEC_ERROR_STATUS[code], message, cause === undefined ? undefined : { cause });
}

/** `what` names the format (`JSON`, `YAML`…); `detail` is the parser's message. */
export function bodyMalformed(what: string, detail: string, cause?: unknown): TesseraError {
  return codecError('body_malformed', `Malformed ${what} body: ${detail}`, cause);
}

export function bodyTooDeep(depthMax: number): TesseraError {
  return codecError('body_too_deep', `Body nested deeper than ${depthMax} levels`);
}

/** A body naming more values than `valuesMax` (or YAML aliases expanding past what the body's size allows). */
export function tooManyValues(what: string, valuesMax: number): TesseraError {
  return bodyMalformed(what, `value expands to more than ${valuesMax} values`);
}

/** One scalar of a text body (its source: quotes, escapes and line breaks included) is longer than `charsMax`. */
export function scalarTooLong(what: string, charsMax: number): TesseraError {
  return codecError('value_too_large', `${what} scalar longer than ${charsMax} characters`);
}

export function tooManyArrayItems(itemsMax: number): TesseraError {
  return codecError('too_many_values', `Body has an array of more than ${itemsMax} items`);
}

export function tooManyFields(fieldsMax: number): TesseraError {
  return codecError('too_many_fields', `Body has more than ${fieldsMax} fields`);
}

export function invalidFieldName(name: string): TesseraError {
  return codecError('invalid_field_name', `Invalid field name '${name}'`);
}

export function unsupportedMediaType(mediaType: string): TesseraError {
  return codecError('unsupported_media_type',
    mediaType === '' ? 'A structured body is required' : `Content-Type '${mediaType}' is not a structured body type`);
}

export function notAcceptable(what: string): TesseraError {
  return codecError('not_acceptable', `No acceptable ${what}`);
}
