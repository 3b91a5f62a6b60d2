/**
 * @tessera/schema: the index schema as pure, synchronous functions (API.md
 * §5.7, §5.8, §7.1, §7.2, §8). The coordinator folds documents into the
 * schema before routing a write; each shard's engine resolves field specs and
 * term names to index and query.
 */
export { schemaErrors } from './errors.js';
export { xxh32 } from './xxh32.js';
export {
  type BaseType, DATE_UNIT_SECONDS, DATE_UNITS, type DateUnit, DEFAULT_DATE_ACCURACY, DEFAULT_INDEX,
  DEFAULT_NUMERIC_ACCURACY, type FieldType, type IndexMode, indexName, isDateType, isDateUnit, isNumericType,
  isTimeType, parseIndex, parseType, type ScalarType, TIME_UNITS, TYPE_CHARS, typeName,
} from './types.js';
export { DATE_VALUE_KEYS, FIELD_OPTION_KEYS, isPlainObject, ROOT_CONTROL_KEYS, VALUE_KEYS } from './keys.js';
export { LANGUAGE_NAMES, normaliseLanguage } from './languages.js';
export { checkOptionsForType, IMMUTABLE_OPTIONS, normaliseOption, SLOT_MAX, SLOT_MIN } from './options.js';
export {
  DEFAULT_DETECTION, type Detected, type DetectionFlags, describeType, detectType, STRING_DETECTORS,
  type StringDetector,
} from './detect.js';
export {
  type DateParseOptions, dateUnitStart, formatDate, isDateOnlyString, isDateString, parseDate, YEAR_MAX, YEAR_MIN,
} from './dates.js';
export { type Converted, type ConvertOptions, convertValue, type IndexValue, KEYWORD_BYTES_MAX } from './convert.js';
export { defaultSlot, type FieldSpec, type StemStrategy, type StopStrategy } from './spec.js';
export {
  createSchema, describeSchema, fieldSpec, mergeSchema, searchableFields, type Schema, type SchemaNode,
} from './schema.js';
export { foldDocument, type FoldOptions, type FoldResult, type IndexedValue, indexedValues, type NormalisedDocument } from './fold.js';
export { namespacePaths, PARTIAL_PATH_MIDDLES_MAX } from './namespace-paths.js';
export { type UuidFieldMode, UUID_FIELD_NAME } from './spec.js';
export { canonicalUuid, CONDENSED_UUID_RE, isCondensedUuid, isUuidString, UUID_RE } from './uuid.js';
export {
  formatTime, formatTimedelta, isTimedeltaString, isTimeString, parseTimedeltaString, parseTimeString, TIMEDELTA_SECONDS_MAX,
} from './times.js';
export { DEFAULT_GEO_ACCURACY, GEO_VALUE_KEYS, geoValueToken, isEwktString } from './geo.js';
export {
  accuracyBucket, accuracyPrefix, accuracyTerms, accuracyTypeChar, fieldTerm, globalTerm, sortableNumber, sortableToken, stemTerm,
  type TermSpec, textTerm, valueToken,
} from './terms.js';
export { checkDocumentLimits, DOCUMENT_LIMITS_DEFAULTS, type DocumentLimits } from './document-limits.js';
