/** Public shapes of the body codecs (API.md §2.2, §2.3). */

export interface DecodeLimits {
  /** Maximum nesting depth of objects/arrays (API.md §13: 128); deeper → 400. */
  depthMax: number;
  /** Maximum number of object keys in one decoded value (API.md §13: 10,000 fields per document); beyond → 400. */
  fieldsMax: number;
  /** YAML alias expansions allowed (alias bombs). */
  yamlAliasesMax: number;
  /**
   * Values (scalars, containers, object keys) in one YAML body; beyond → 400
   * (DEFAULT_DECODE_LIMITS.yamlValuesMax when absent). YAML spends about 1 KB
   * of heap per item while parsing, so 1,000,000 items in a 5 MB body took
   * 20 s and GBs; JSON and MessagePack decode such a body in milliseconds, and
   * the document limits (@tessera/schema) bound what it may cost after that.
   */
  yamlValuesMax?: number;
  /**
   * UTF-16 units of one YAML scalar's source (quotes, escapes and line breaks
   * included); beyond → 400 `value_too_large` (DEFAULT_DECODE_LIMITS.yamlScalarCharsMax,
   * 2 Mi, when absent). yaml resolves a double-quoted scalar a character at a
   * time: an 8 MB one took 4-6 s and hundreds of MB before the document limit
   * on strings (1 MiB) could refuse it.
   */
  yamlScalarCharsMax?: number;
  /**
   * Items of one array in a body; beyond → 400 `too_many_values` (no bound when absent). The server sets it to
   * `valuesPerFieldMax` (10,000): a longer array can be no document's field, and searches and schemas are far
   * smaller. Checked before the value is built where the codec allows (JSON's depth pre-scan, MessagePack's
   * header scan, YAML's lexer), so a 1,000,000-item array costs milliseconds, not its decoded size (YAML: ~100 MB).
   */
  arrayItemsMax?: number;
}

/** A decoded request body: a structured value, or opaque bytes (stored content, §6). */
export type DecodedBody =
  | { kind: 'value'; value: unknown; mediaType: string }
  | { kind: 'opaque'; bytes: Buffer; mediaType: string };

/** A response serializer (JSON, YAML, MessagePack). */
export interface Serializer {
  /** Canonical media type, e.g. `application/json`. */
  mediaType: string;
  /** Which encoding: several media types share one. */
  format: 'json' | 'yaml' | 'msgpack';
  /** Full Content-Type header value, e.g. `application/json; charset=utf-8`. */
  contentType: string;
  /** Text formats may answer a string (UTF-8 on the wire). */
  encode(value: unknown, indent: number): Buffer | string;
}

/** One media range of an Accept header. */
export interface MediaRange {
  type: string;       // '*' allowed
  subtype: string;    // '*' allowed
  q: number;
  params: Record<string, string>;
}

export type ContentCoding = 'gzip' | 'deflate' | 'identity';
