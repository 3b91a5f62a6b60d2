/**
 * Response serializers (API.md §2.3): JSON, YAML (real YAML, not JSON text)
 * and MessagePack, one instance per accepted media type so the response
 * Content-Type is the type the client asked for (`application/msgpack`
 * asked → `application/msgpack` answered).
 */
import { packMessagePack } from '@tessera/documents';
import { Document, visit } from 'yaml';
import { SERIALIZER_MEDIA_TYPES, type SerializerFormat } from './media-type.js';
import type { Serializer } from './types.js';

/** Indents accepted from `Accept: …; indent=N` (API.md §2.3). */
export const INDENT_MAX = 16;

const YAML_INDENT_DEFAULT = 2;

function encodeJson(value: unknown, indent: number): string {
  // JSON.stringify(undefined) is undefined: answer `null` rather than no body.
  // A string, not a Buffer: the server writes head and body in one string
  // write, which saves a copy and a writev per response.
  return JSON.stringify(value, null, indent) ?? 'null';
}

const YAML_OPTIONS = {
  version: '1.2',
  schema: 'core',
  // Repeated objects are written out again, not as &anchors/*aliases that
  // a simple client may not resolve.
  aliasDuplicateObjects: false,
  // No folding of long strings: lines stay as the value has them.
  lineWidth: 0,
} as const;

function encodeYaml(value: unknown, indent: number): Buffer {
  // YAML has no unindented block form: indent 0 (compact) keeps the default.
  const options = { ...YAML_OPTIONS, indent: indent > 0 ? indent : YAML_INDENT_DEFAULT };
  const doc = new Document(value ?? null, options);
  visit(doc, {
    Scalar(_key, node, path) {
      if (typeof node.value === 'string' && blockScalarUnsafe(node.value, path.length <= 1, options.indent)) node.type = 'QUOTE_DOUBLE';
    },
  });
  let text = doc.toString(options);
  // yaml leaves a leading U+FEFF in a plain scalar or key, which a reader
  // takes for a byte order mark and drops; quoting keeps it.
  if (text.charCodeAt(0) === 0xfeff) {
    text = doc.toString({ ...options, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'QUOTE_DOUBLE' });
  }
  return Buffer.from(text, 'utf8');
}

const WHITESPACE_ONLY_LINE = /(^|\n)[ \t]+(\n|$)/;
const LINE_STARTING_WITH_WHITESPACE = /(^|\n)[ \t]/;

/**
 * Multi-line strings are written as block literals (`|`), except where yaml
 * 2.9 writes a literal that reads back differently: at the document root, with
 * a line of only blanks, or with a line starting with a blank under an indent
 * other than 2 (wrong indentation indicator). Those are double-quoted. Found
 * by the round-trip property test (roundtrip.test.ts).
 */
function blockScalarUnsafe(text: string, atRoot: boolean, indent: number): boolean {
  if (!text.includes('\n')) return false;
  return atRoot || WHITESPACE_ONLY_LINE.test(text) || (indent !== YAML_INDENT_DEFAULT && LINE_STARTING_WITH_WHITESPACE.test(text));
}

/** msgpackr (@tessera/documents `packMessagePack`): the bytes @msgpack/msgpack writes, 2–4× faster; no depth limit to trip over. */
function encodeMsgpack(value: unknown): Buffer {
  return packMessagePack(value ?? null);
}

const ENCODERS: Record<SerializerFormat, { charset: boolean; encode(value: unknown, indent: number): Buffer | string }> = {
  json: { charset: true, encode: encodeJson },
  yaml: { charset: true, encode: encodeYaml },
  msgpack: { charset: false, encode: encodeMsgpack },
};

function makeSerializers(): Map<string, Serializer> {
  const byType = new Map<string, Serializer>();
  for (const format of Object.keys(SERIALIZER_MEDIA_TYPES) as SerializerFormat[]) {
    const { charset, encode } = ENCODERS[format];
    for (const mediaType of SERIALIZER_MEDIA_TYPES[format]) {
      byType.set(mediaType, Object.freeze({ mediaType, format, contentType: charset ? `${mediaType}; charset=utf-8` : mediaType, encode }));
    }
  }
  return byType;
}

const SERIALIZERS: ReadonlyMap<string, Serializer> = makeSerializers();

/** The serializer answering with `mediaType` (a lower-cased serializer type), or undefined. */
export function serializerFor(mediaType: string): Serializer | undefined {
  return SERIALIZERS.get(mediaType);
}

function canonical(format: SerializerFormat): Serializer {
  return SERIALIZERS.get(SERIALIZER_MEDIA_TYPES[format][0]) as Serializer;
}

/** `application/json; charset=utf-8` */
export const jsonSerializer: Serializer = canonical('json');
/** `application/x-yaml; charset=utf-8` */
export const yamlSerializer: Serializer = canonical('yaml');
/** `application/x-msgpack` */
export const msgpackSerializer: Serializer = canonical('msgpack');
