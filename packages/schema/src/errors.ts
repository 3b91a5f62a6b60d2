/**
 * Error catalogue of the schema package (API.md §8). Every error is a 400
 * (user input) except `strict_missing_type` (412, §8.8). Codes are stable;
 * messages that Xapiand clients match on are kept exact
 * ("Type mismatch 'integer' -> 'text'", "Type of field 'x' is missing").
 */
import { TesseraError } from '@tessera/errors';

const e = (code: string, status: number, message: string) => new TesseraError(code, status, message);

export const schemaErrors = {
  typeMismatch: (type: string, detected: string) => e('type_mismatch', 400, `Type mismatch '${type}' -> '${detected}'`),
  strictMissingType: (path: string) => e('strict_missing_type', 412, `Type of field '${path}' is missing`),
  typeUndetectable: (path: string, why: string) =>
    e('type_undetectable', 400, `Type of field '${path}' cannot be detected (${why}); set '_type'`),
  invalidType: (path: string, type: string) => e('invalid_type', 400, `Invalid type '${type}' for field '${path}'`),
  unsupportedType: (path: string, type: string) =>
    e('invalid_type', 400, `Type '${type}' of field '${path}' is not supported yet`),
  invalidOption: (path: string, option: string, why: string) =>
    e('invalid_field_option', 400, `Invalid '${option}' for field '${path}': ${why}`),
  optionNotForType: (path: string, option: string, type: string) =>
    e('invalid_field_option', 400, `Option '${option}' is not valid for field '${path}' of type '${type}'`),
  conflictingOption: (path: string, option: string) =>
    e('invalid_field_option', 400, `Conflicting values of '${option}' for field '${path}'`),
  unknownReservedKey: (key: string) => e('invalid_reserved_key', 400, `Unknown reserved key '${key}'`),
  schemaImmutable: (field: string, option: string) =>
    e('schema_immutable', 400, `It is not allowed to change '${option}' of field '${field}'`),
  badSchema: (why: string) => e('invalid_body', 400, why),
  badDocument: (why: string) => e('invalid_body', 400, why),
  invalidValue: (path: string, type: string, why: string) =>
    e('invalid_value', 400, `Invalid '${type}' value for field '${path}': ${why}`),
  invalidDate: (value: string) => e('invalid_date', 400, `Invalid date ${value}`),
  keywordTooLong: () => e('keyword_too_long', 400, 'Keyword too long'),
  // Per-document limits (document-limits.ts), checked before anything is written.
  tooManyValues: (path: string, max: number) => e('too_many_values', 400, `Field '${path}' has more than ${max} values`),
  documentTooLarge: (what: string) => e('document_too_large', 400, `Document ${what}`),
  valueTooLarge: (path: string, max: number) => e('value_too_large', 400, `A value of field '${path}' is longer than ${max} bytes`),
};
