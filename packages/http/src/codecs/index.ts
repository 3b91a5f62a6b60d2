/** Body codecs and content negotiation (API.md §2.2, §2.3): the public API of `http/src/codecs/`. */
export type { ContentCoding, DecodedBody, DecodeLimits, MediaRange, Serializer } from './types.js';
export { DEFAULT_DECODE_LIMITS } from './limits.js';
export {
  CODEC_ERROR_STATUS, type CodecErrorCode,
  bodyMalformed, bodyTooDeep, invalidFieldName, notAcceptable, tooManyFields, unsupportedMediaType,
} from './errors.js';
export { bodyFormatOf, isSerializerType, mediaTypeOf, type BodyFormat } from './media-type.js';
export { decodeBody } from './decode.js';
export { DEFAULT_VERBATIM_KEYS, expandDottedFields, type ExpandOptions } from './expand.js';
export { INDENT_MAX, jsonSerializer, msgpackSerializer, serializerFor, yamlSerializer } from './serializers.js';
export { matchingRange, negotiateSerializer, parseAccept, qualityFor, ranksAboveSerializers, type SerializerChoice } from './accept.js';
export { encodeContent, negotiateEncoding } from './encoding.js';
export { decodeSequence, msgpackValueLength, sequenceFormatOf, type SequenceFormat, type SequenceItem } from './sequence.js';
