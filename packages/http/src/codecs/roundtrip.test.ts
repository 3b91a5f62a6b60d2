import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { decodeBody } from './decode.js';
import { DEFAULT_DECODE_LIMITS } from './limits.js';
import { jsonSerializer, msgpackSerializer, serializerFor, yamlSerializer } from './serializers.js';
import type { Serializer } from './types.js';

// JSON-like values as a client could send them in any of the three codecs:
// no -0 and no undefined (JSON has neither), no NaN/Infinity (refused), no
// `__proto__` key (refused). Strings cover every code point but lone surrogates.
const text = fc.string({ unit: 'binary', maxLength: 12 });
const key = fc.oneof(text, fc.constantFrom('constructor', 'prototype', 'toString', '', '#c', 'a.b', 'null', 'true', '1', '- x', ': y'))
  .filter((k) => k !== '__proto__');
const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (x === 0 ? 0 : x)),
  text,
  // Blanks, line breaks and YAML indicators: what trips block scalars and plain scalars.
  fc.string({ unit: fc.constantFrom(' ', '\n', '\t', '\r', ':', '-', '#', '"', "'", '\\', 'a', '?', '|', '>', '&', '*', '!', '{', '[', ',', '\u0085', '\u2028', '\ufeff', '\u00a0'), maxLength: 12 }),
  fc.constantFrom('', 'yes', 'no', 'null', '~', '0x10', '1e3', '.inf', '- a', '#', 'a: b', '[1]', '"', "'", '\t', ' lead', 'trail ', 'multi\nline\n', '\u0085', '\u2028', '\ufeff'),
);
const { value: jsonLike } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('value'), { maxLength: 5 }), fc.dictionary(key, tie('value'), { maxKeys: 5 })),
}));

function roundTrip(serializer: Serializer, value: unknown, indent: number): unknown {
  const body = Buffer.from(serializer.encode(value, indent));
  const decoded = decodeBody(body, serializer.contentType, DEFAULT_DECODE_LIMITS);
  if (decoded.kind !== 'value') throw new Error(`decoded as ${decoded.kind}`);
  return decoded.value;
}

describe('serializers', () => {
  it('name the matched type and add a charset to text formats', () => {
    expect(jsonSerializer.contentType).toBe('application/json; charset=utf-8');
    expect(yamlSerializer.contentType).toBe('application/x-yaml; charset=utf-8');
    expect(msgpackSerializer.contentType).toBe('application/x-msgpack');
    expect(serializerFor('application/msgpack')?.contentType).toBe('application/msgpack');
    expect(serializerFor('application/yaml')?.contentType).toBe('application/yaml; charset=utf-8');
    expect(serializerFor('application/x-json')?.contentType).toBe('application/x-json; charset=utf-8');
    expect(serializerFor('text/html')).toBeUndefined();
  });
  it('indent JSON as asked and write real YAML', () => {
    expect(jsonSerializer.encode({ a: [1] }, 0).toString()).toBe('{"a":[1]}');
    expect(jsonSerializer.encode({ a: [1] }, 4).toString()).toBe('{\n    "a": [\n        1\n    ]\n}');
    expect(yamlSerializer.encode({ a: [1, { b: 'yes' }], c: '0x10' }, 2).toString()).toBe('a:\n  - 1\n  - b: yes\nc: "0x10"\n');
    expect(yamlSerializer.encode({ a: { b: 1 } }, 4).toString()).toBe('a:\n    b: 1\n');
  });
  it('write repeated objects out in full, not as YAML aliases', () => {
    const shared = { x: 1 };
    expect(yamlSerializer.encode({ a: shared, b: shared }, 2).toString()).toBe('a:\n  x: 1\nb:\n  x: 1\n');
  });
  it('answer null for undefined', () => {
    for (const s of [jsonSerializer, yamlSerializer, msgpackSerializer]) {
      expect(decodeBody(Buffer.from(s.encode(undefined, 0)), s.contentType, DEFAULT_DECODE_LIMITS)).toEqual({ kind: 'value', value: null, mediaType: s.mediaType });
    }
  });
  it('encode documents deeper than msgpack\'s default 100 levels', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 140; i++) deep = [deep];
    expect(() => msgpackSerializer.encode(deep, 0)).not.toThrow();
  });
});

describe('round trips (fast-check)', () => {
  it.each([
    ['JSON', jsonSerializer, 0], ['JSON indented', jsonSerializer, 2],
    ['YAML', yamlSerializer, 2], ['YAML indent 1', yamlSerializer, 1], ['YAML indent 0', yamlSerializer, 0], ['YAML indent 5', yamlSerializer, 5],
    ['MessagePack', msgpackSerializer, 0],
  ] as const)('%s: encode → decode is the identity', (_name, serializer, indent) => {
    fc.assert(fc.property(jsonLike, (value) => {
      expect(roundTrip(serializer, value, indent)).toEqual(value);
    }), { numRuns: 300 });
  });
  it('every codec decodes what another encoded to the same value', () => {
    fc.assert(fc.property(jsonLike, (value) => {
      const fromJson = roundTrip(jsonSerializer, value, 0);
      expect(roundTrip(yamlSerializer, fromJson, 2)).toEqual(fromJson);
      expect(roundTrip(msgpackSerializer, fromJson, 0)).toEqual(fromJson);
    }), { numRuns: 200 });
  });
  it('a decoded value never carries a __proto__ key in from a serializer', () => {
    // The serializers write what they are given; the decoders refuse it.
    const hostile = JSON.parse('{"a": {"__proto__": {"polluted": 1}}}') as unknown;
    for (const s of [jsonSerializer, yamlSerializer, msgpackSerializer]) {
      let caught: unknown;
      try { roundTrip(s, hostile, 0); } catch (err) { caught = err; }
      expect(caught).toBeInstanceOf(TesseraError);
      expect((caught as TesseraError).code).toBe('invalid_field_name');
      expect(Object.prototype).not.toHaveProperty('polluted');
    }
  });
});

describe('YAML edge cases found by the round trip', () => {
  it.each([['\ufeff'], [{ '\ufeff': 1 }], [{ '\ufeffk': '\ufeffv' }]])('keeps a leading U+FEFF: %j', (value) => {
    expect(roundTrip(yamlSerializer, value, 2)).toEqual(value);
  });
});

describe('YAML multi-line strings', () => {
  it('are block literals where they read back the same', () => {
    expect(yamlSerializer.encode({ d: 'first\n * item\n\nlast' }, 2).toString()).toBe('d: |-\n  first\n   * item\n\n  last\n');
  });
  it.each([
    [' \n', 2], ['\n a', 2], [{ k: ' \n' }, 2], [{ k: 'a\n \nb' }, 2], [[{ b: ' x\n' }], 1], [{ a: ' x\n' }, 4], [{ a: 'x\n  y' }, 3],
  ] as const)('are double-quoted where a literal would not round-trip: %j (indent %d)', (value, indent) => {
    expect(roundTrip(yamlSerializer, value, indent)).toEqual(value);
  });
});
