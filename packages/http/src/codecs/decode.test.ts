import { spawnSync } from 'node:child_process';
import { encode } from '@msgpack/msgpack';
import { TesseraError } from '@tessera/errors';
import { decodeBody } from './decode.js';
import { DEFAULT_DECODE_LIMITS } from './limits.js';
import { isSerializerType, mediaTypeOf } from './media-type.js';
import type { DecodeLimits } from './types.js';

const LIMITS = DEFAULT_DECODE_LIMITS;

function value(body: string | Uint8Array, contentType?: string, limits: DecodeLimits = LIMITS): unknown {
  const decoded = decodeBody(Buffer.from(body), contentType, limits);
  if (decoded.kind !== 'value') throw new Error(`expected a value, got ${decoded.kind}`);
  return decoded.value;
}

function error(body: string | Uint8Array, contentType?: string, limits: DecodeLimits = LIMITS): TesseraError {
  try {
    decodeBody(Buffer.from(body), contentType, limits);
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
  throw new Error('expected a TesseraError');
}

const JSON_TYPES = [undefined, 'application/json', 'application/x-json', 'Application/JSON; charset=utf-8'];
const YAML_TYPES = ['application/yaml', 'application/x-yaml'];
const MSGPACK_TYPES = ['application/msgpack', 'application/x-msgpack'];
const NDJSON_TYPES = ['application/ndjson', 'application/x-ndjson'];
const FORM_TYPES = ['application/x-www-form-urlencoded', 'application/www-form-urlencoded'];

/** `{"a": {"a": … 1}}` with `depth` objects. */
function nestedJson(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{"a":1}' + '}'.repeat(depth - 1);
}

describe('mediaTypeOf / isSerializerType', () => {
  it('lower-cases type/subtype and strips parameters', () => {
    expect(mediaTypeOf('Application/X-YAML ; charset=UTF-8')).toBe('application/x-yaml');
    expect(mediaTypeOf('  text/plain  ')).toBe('text/plain');
    expect(mediaTypeOf(undefined)).toBe('');
    expect(mediaTypeOf('')).toBe('');
  });
  it('knows the serializer types of §2.2 and nothing else', () => {
    for (const t of ['application/json', 'application/x-json', 'application/yaml', 'application/x-yaml', 'application/msgpack', 'application/x-msgpack']) {
      expect(isSerializerType(t)).toBe(true);
    }
    for (const t of ['', 'application/x-ndjson', 'application/x-www-form-urlencoded', 'text/yaml', 'text/plain']) {
      expect(isSerializerType(t)).toBe(false);
    }
  });
});

describe('JSON bodies', () => {
  it.each(JSON_TYPES)('decodes plain JSON (%s)', (type) => {
    expect(value('{"a": [1, 2.5, "x", true, null], "b": {"c": -3}}', type)).toEqual({ a: [1, 2.5, 'x', true, null], b: { c: -3 } });
  });
  it('accepts comments and trailing commas through JSON5', () => {
    const text = `// leading comment
      { "a": 1, /* inline [[[ */ "b": [1, 2, ], // trailing
        'c': 'single', d: 0x10, }`;
    expect(value(text)).toEqual({ a: 1, b: [1, 2], c: 'single', d: 16 });
  });
  it('strips a UTF-8 BOM', () => {
    expect(value(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"é"}')]))).toEqual({ a: 'é' });
  });
  it.each(['{"a": NaN}', '{"a": Infinity}', '[-Infinity]', '{"a": 1e400}', 'NaN'])('refuses non-finite numbers: %s', (text) => {
    const e = error(text);
    expect([e.code, e.status]).toEqual(['body_malformed', 400]);
    expect(e.message).toContain('NaN and Infinity');
  });
  it('refuses invalid UTF-8', () => {
    for (const bytes of [[0x22, 0xff, 0x22], [0x22, 0xc0, 0x80, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22], [0x22, 0xe2, 0x82]]) {
      const e = error(Uint8Array.from(bytes));
      expect([e.code, e.status, e.message]).toEqual(['body_malformed', 400, 'Malformed JSON body: invalid UTF-8']);
    }
  });
  it('reports the parser message on malformed input', () => {
    const e = error('{"a": 1,, }', 'application/json');
    expect(e.status).toBe(400);
    expect(e.code).toBe('body_malformed');
    expect(e.message).toMatch(/^Malformed JSON body: JSON5: invalid character ',' at 1:9/);
  });
  it('gives {} for an empty body with no type or a serializer type', () => {
    for (const type of [...JSON_TYPES, ...YAML_TYPES, ...MSGPACK_TYPES]) expect(value('', type)).toEqual({});
  });
  it('keeps constructor and prototype as ordinary own fields', () => {
    const v = value('{"constructor": {"prototype": 1}, "toString": 2, "hasOwnProperty": 3}') as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['constructor', 'toString', 'hasOwnProperty']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(v['constructor']).toEqual({ prototype: 1 });
  });
  it('does not count brackets inside strings or comments toward depth', () => {
    const deepText = '['.repeat(500);
    expect(value(JSON.stringify({ a: deepText, b: 'x\\"' + deepText }))).toEqual({ a: deepText, b: 'x\\"' + deepText });
    expect(value(`{/* ${deepText} */ "a": 1, // ${deepText}\n 'b': '${deepText}\\'${deepText}'}`)).toEqual({ a: 1, b: `${deepText}'${deepText}` });
  });
});

describe('limits, in every codec', () => {
  const small: DecodeLimits = { depthMax: 3, fieldsMax: 4, yamlAliasesMax: 10 };
  const encodings: [string, (v: unknown) => string | Uint8Array][] = [
    ['application/json', (v) => JSON.stringify(v)],
    ['application/yaml', (v) => JSON.stringify(v)], // JSON is YAML flow style
    ['application/msgpack', (v) => encode(v)],
    ['application/x-ndjson', (v) => JSON.stringify(v) + '\n'],
  ];
  const unwrap = (type: string, v: unknown): unknown => (type === 'application/x-ndjson' ? (v as unknown[])[0] : v);

  it.each(encodings)('%s: depth just under and just over', (type, enc) => {
    const ok = { a: [{ b: 1 }] };        // depth 3
    const deep = { a: [{ b: [1] }] };    // depth 4
    expect(unwrap(type, value(enc(ok), type, small))).toEqual(ok);
    const e = error(enc(deep), type, small);
    expect([e.code, e.status]).toEqual(['body_too_deep', 400]);
  });
  it.each(encodings)('%s: fields just under and just over', (type, enc) => {
    const ok = { a: 1, b: { c: 2, d: 3 } };            // 4 keys
    const over = { a: 1, b: { c: 2, d: 3 }, e: 4 };    // 5 keys
    expect(unwrap(type, value(enc(ok), type, small))).toEqual(ok);
    const e = error(enc(over), type, small);
    expect([e.code, e.status]).toEqual(['too_many_fields', 400]);
  });
  it('applies the default depth of 128 (API.md §13)', () => {
    expect(value(nestedJson(128))).toBeDefined();
    expect(error(nestedJson(129)).code).toBe('body_too_deep');
    expect(value(nestedJson(128), 'application/yaml')).toBeDefined();
    expect(error(nestedJson(129), 'application/yaml').code).toBe('body_too_deep');
  });
  it('refuses __proto__ in every codec and never touches Object.prototype', () => {
    const json = '{"__proto__": {"polluted": 1}}';
    const bodies: [string, string | Uint8Array][] = [
      ['application/json', json],
      ['application/json', "{__proto__: {polluted: 1}, }"], // JSON5 path
      ['application/json', '{"a": [{"b": {"__proto__": {"polluted": 1}}}]}'],
      ['application/yaml', '__proto__:\n  polluted: 1\n'],
      ['application/yaml', json],
      ['application/msgpack', Uint8Array.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0x81, 0xa8, ...Buffer.from('polluted'), 0x01])],
      ['application/x-ndjson', `{"ok": 1}\n${json}\n`],
      ['application/x-www-form-urlencoded', json],
    ];
    for (const [type, body] of bodies) {
      const e = error(body, type);
      expect([type, e.code, e.status, e.message]).toEqual([type, 'invalid_field_name', 400, expect.stringContaining("Invalid field name '__proto__'")]);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
    }
  });
});

describe('the three serializer codecs agree', () => {
  it('decode equivalent input to the same object', () => {
    const expected = { name: 'tessera', tags: ['a', 'b'], nested: { n: 1, f: 0.5, t: true, z: null }, empty: {} };
    const json = `{ "name": "tessera", "tags": ["a", "b",], // comment
      "nested": { "n": 1, "f": 0.5, "t": true, "z": null }, "empty": {} }`;
    const yaml = `# comment
name: tessera
tags:
  - a
  - b
nested: { n: 1, f: 0.5, t: true, z: null }
empty: {}
`;
    expect(value(json, 'application/json')).toEqual(expected);
    expect(value(yaml, 'application/x-yaml')).toEqual(expected);
    expect(value(encode(expected), 'application/x-msgpack')).toEqual(expected);
  });
});

describe('YAML bodies', () => {
  it('decodes YAML 1.2 core (yes/no are strings, 0o17 is octal)', () => {
    expect(value('a: yes\nb: 0o17\nc: ~\nd: "1"\ne: 1.5\n', 'application/yaml')).toEqual({ a: 'yes', b: 15, c: null, d: '1', e: 1.5 });
  });
  it('expands a few aliases', () => {
    expect(value('base: &b {x: 1}\none: *b\ntwo: *b\n', 'application/yaml')).toEqual({ base: { x: 1 }, one: { x: 1 }, two: { x: 1 } });
  });
  it('refuses more than one document', () => {
    const e = error('a: 1\n---\nb: 2\n', 'application/yaml');
    expect([e.code, e.message]).toEqual(['body_malformed', 'Malformed YAML body: expected one document, found more']);
  });
  it('reports the parser message with line and column', () => {
    const e = error('a: 1\nb: [1, 2\nc: 3\n', 'application/yaml');
    expect(e.code).toBe('body_malformed');
    expect(e.message).toMatch(/^Malformed YAML body: .+ at line \d+, column \d+$/);
  });
  it('refuses duplicate keys, .nan and .inf', () => {
    expect(error('a: 1\na: 2\n', 'application/yaml').message).toContain('Map keys must be unique at line 2, column 1');
    expect(error('a: .nan\n', 'application/yaml').message).toContain('NaN and Infinity');
    expect(error('a: [-.inf]\n', 'application/yaml').message).toContain('NaN and Infinity');
  });
  it('keeps YAML 1.1 tags and directives from building non-JSON values', () => {
    expect(value('a: !!timestamp 2001-12-14\nb: !!set {x}\nc: !!binary aGk=\nd: !!omap [k: 1]\n', 'application/yaml'))
      .toEqual({ a: '2001-12-14', b: { x: null }, c: 'aGk=', d: [{ k: 1 }] });
    expect(value('%YAML 1.1\n---\nb: yes\nm: &m {x: 1}\nn: {<<: *m}\n', 'application/yaml'))
      .toEqual({ b: 'yes', m: { x: 1 }, n: { '<<': { x: 1 } } });
  });
  it('does not emit process warnings a client could provoke', () => {
    // yaml warns on the real process object, which jest's sandbox cannot
    // observe: decode in a child process and read its stderr.
    const script = `import { decodeBody } from ${JSON.stringify(new URL('./decode.js', import.meta.url).href)};
      const v = decodeBody(Buffer.from('? [a, b]\\n: 1\\nx: !custom 2\\n'), 'application/yaml', { depthMax: 8, fieldsMax: 8, yamlAliasesMax: 8 }).value;
      process.stdout.write(JSON.stringify(v));`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stdout).toBe('{"[ a, b ]":1,"x":"2"}');
    expect(child.stderr).toBe('');
  });
  it('refuses invalid UTF-8', () => {
    const e = error(Buffer.concat([Buffer.from('a: '), Buffer.from([0xfe, 0x41])]), 'application/yaml');
    expect([e.code, e.message]).toEqual(['body_malformed', 'Malformed YAML body: invalid UTF-8']);
  });
});

describe('MessagePack bodies', () => {
  const mp = (...bytes: number[]) => Uint8Array.from(bytes);
  it('decodes every scalar kind', () => {
    const v = { i: -5, u: 300, big: 2 ** 40, f: 1.25, s: 'é', t: true, n: null, arr: [1, [2]], bin: Uint8Array.from([1, 2]) };
    expect(value(encode(v), 'application/msgpack')).toEqual(v);
    expect(value(mp(0x81, 0x01, 0xa1, 0x78), 'application/msgpack')).toEqual({ 1: 'x' }); // integer key
  });
  it('reads float32, 16- and 32-bit lengths big-endian', () => {
    expect(value(mp(0x92, 0xca, 0x3f, 0xc0, 0x00, 0x00, 0xcb, 0xc0, 0x04, 0, 0, 0, 0, 0, 0), 'application/msgpack')).toEqual([1.5, -2.5]);
    const long = 'x'.repeat(70_000);
    expect(value(encode({ [long]: [long] }), 'application/msgpack')).toEqual({ [long]: [long] });
    expect(value(encode(Array(70_000).fill(1)), 'application/msgpack')).toHaveLength(70_000);
  });
  it('honours a depthMax above its preallocated levels', () => {
    const deep = (n: number) => Buffer.concat([Buffer.alloc(n, 0x91), Buffer.from([0x01])]);
    const limits = { ...LIMITS, depthMax: 1000 };
    expect(value(deep(1000), 'application/msgpack', limits)).toBeDefined();
    expect(error(deep(1001), 'application/msgpack', limits).code).toBe('body_too_deep');
    expect(error(deep(129), 'application/msgpack').code).toBe('body_too_deep');
    expect(value(deep(128), 'application/msgpack')).toBeDefined();
  });
  it('refuses bytes after the value', () => {
    const e = error(mp(0x01, 0x02), 'application/msgpack');
    expect(e.message).toBe('Malformed MessagePack body: 1 extra bytes after the value at offset 1');
  });
  it.each([
    ['map longer than the body', [0x82, 0xa1, 0x61, 0x01], 'map at offset 1 declares 2 items but only 3 bytes remain'],
    ['truncated uint16 in a map', [0x82, 0xa1, 0x61, 0x01, 0xa1, 0x62, 0xcd, 0x00], 'unexpected end of data at offset 6'],
    ['truncated string', [0xa5, 0x61, 0x62], 'string at offset 1 declares 5 bytes but only 2 bytes remain'],
    ['truncated float', [0xcb, 0x00, 0x00], 'unexpected end of data'],
    ['ext type', [0xd4, 0x01, 0x00], 'extension type'],
    ['timestamp ext', [0xd6, 0xff, 0, 0, 0, 0], 'extension type'],
    ['reserved byte', [0xc1], 'reserved byte 0xc1'],
    ['map key of type array', [0x81, 0x90, 0x01], 'neither a string nor an integer'],
    ['NaN float', [0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0], 'NaN and Infinity'],
    ['Infinity float32', [0xca, 0x7f, 0x80, 0, 0], 'NaN and Infinity'],
    ['bad UTF-8 string', [0xa2, 0xc3, 0x28], 'invalid UTF-8'],
    ['bad UTF-8 key', [0x81, 0xa1, 0xff, 0x01], 'invalid UTF-8'],
    ['surrogate in str8', [0xd9, 0x03, 0xed, 0xa0, 0x80], 'invalid UTF-8'],
  ])('refuses %s', (_name, bytes, message) => {
    const e = error(mp(...bytes), 'application/msgpack');
    expect([e.code, e.status]).toEqual(['body_malformed', 400]);
    expect(e.message).toContain(message);
  });
});

describe('NDJSON bodies', () => {
  it.each(NDJSON_TYPES)('decodes one value per non-empty line (%s)', (type) => {
    expect(value('{"a":1}\r\n\n  \n[2, 3]\n"x"\n{b: 1,} // c', type)).toEqual([{ a: 1 }, [2, 3], 'x', { b: 1 }]);
    expect(value('', type)).toEqual([]);
  });
  it('names the failing line', () => {
    const e = error('{"a":1}\n\n{"b":\n', 'application/x-ndjson');
    expect(e.code).toBe('body_malformed');
    expect(e.message).toMatch(/^NDJSON line 3: Malformed JSON body: JSON5: /);
    expect(error(`{}\n${nestedJson(129)}\n`, 'application/x-ndjson').message).toMatch(/^NDJSON line 2: Body nested deeper/);
  });
});

describe('form-urlencoded and opaque bodies', () => {
  it.each(FORM_TYPES)('is JSON if it parses (%s)', (type) => {
    expect(decodeBody(Buffer.from('{"a": 1}'), type, LIMITS)).toEqual({ kind: 'value', value: { a: 1 }, mediaType: type });
  });
  it('is opaque when it does not parse', () => {
    for (const body of [Buffer.from('a=1&b=2'), Buffer.from(''), Buffer.from([0x7b, 0xff, 0x7d])]) {
      const d = decodeBody(body, 'application/x-www-form-urlencoded', LIMITS);
      expect(d).toEqual({ kind: 'opaque', bytes: body, mediaType: 'application/x-www-form-urlencoded' });
    }
  });
  it.each([
    ['{"title": ', /at 1:11$/],
    ['  [1, 2', /at 1:8$/],
    ['\n{"a": 1,\n "b": }', /at 3:7$/],
  ])('text opening with { or [ that does not parse is a 400 naming where it breaks (%j)', (text, where) => {
    const e = error(text, 'application/x-www-form-urlencoded');
    expect([e.code, e.status]).toEqual(['body_malformed', 400]);
    expect(e.message).toMatch(/^Malformed JSON body: /);
    expect(e.message).toMatch(where);
  });
  it('keeps limits on JSON that parses', () => {
    expect(error(nestedJson(129), 'application/x-www-form-urlencoded').code).toBe('body_too_deep');
  });
  it('keeps any other type as the same bytes', () => {
    const body = Buffer.from([0x00, 0xff, 0x7b]);
    const d = decodeBody(body, 'Image/PNG', LIMITS);
    expect(d.kind).toBe('opaque');
    expect(d.kind === 'opaque' && d.bytes).toBe(body);
    expect(d.mediaType).toBe('image/png');
  });
});

describe('arrayItemsMax', () => {
  const limits: DecodeLimits = { ...LIMITS, arrayItemsMax: 1000 };
  const items = (n: number) => Array.from({ length: n }, (_, i) => i);

  it('refuses an array of one item more in every codec, and takes one at the limit', () => {
    for (const [body, type] of [
      [JSON.stringify({ values: items(1001) }), 'application/json'],
      [`values: [${items(1001).join(', ')}]\n`, 'application/yaml'],
      [`values:\n${items(1001).map((i) => `  - ${i}`).join('\n')}\n`, 'application/yaml'],
      [encode({ values: items(1001) }), 'application/msgpack'],
      [JSON.stringify({ values: [items(1001)] }), 'application/x-ndjson'],
    ] as const) {
      const err = error(body, type, limits);
      expect([type, err.code, err.status]).toEqual([type, 'too_many_values', 400]);
    }
    expect(value(JSON.stringify({ values: items(1000) }), 'application/json', limits)).toEqual({ values: items(1000) });
    expect(value(`values: [${items(1000).join(', ')}]\n`, 'application/yaml', limits)).toEqual({ values: items(1000) });
    expect(value(encode({ values: items(1000) }), 'application/msgpack', limits)).toEqual({ values: items(1000) });
    // Without the limit, nothing bounds an array but the other limits.
    expect((value(JSON.stringify({ values: items(5000) }), 'application/json') as { values: unknown[] }).values).toHaveLength(5000);
  });

  it('refuses a long array before the value is built: a body malformed after it is refused for the array', () => {
    // Each would be body_malformed if the decoder got as far as the end of the body.
    const json = `{"values": [${items(5000).join(',')}, oops`;
    expect(error(json, 'application/json', limits).code).toBe('too_many_values');
    expect(error(json, 'application/json').code).toBe('body_malformed');
    const yaml = `values: [${items(5000).join(', ')}, {{{`;
    expect(error(yaml, 'application/yaml', limits).code).toBe('too_many_values');
    expect(error(yaml, 'application/yaml').code).toBe('body_malformed');
    const yamlBlock = `values:\n${items(5000).map((i) => `  - ${i}`).join('\n')}\n  - [oops\n`;
    expect(error(yamlBlock, 'application/yaml', limits).code).toBe('too_many_values');
    // MessagePack: an array32 header of 5,000 items, then a stray byte: refused from the header, not for the byte.
    const header = Buffer.from([0x81, 0xa1, 0x76, 0xdd, 0x00, 0x00, 0x13, 0x88]);
    const msgpack = Buffer.concat([header, Buffer.alloc(5000, 0x01), Buffer.from([0xc1])]);
    expect(error(msgpack, 'application/msgpack', limits).code).toBe('too_many_values');
    expect(error(msgpack, 'application/msgpack').code).toBe('body_malformed');
  });

  it('YAML refuses a mapping of more entries than fieldsMax while lexing', () => {
    const yaml = `${items(2000).map((i) => `k${i}: ${i}`).join('\n')}\nbad: [oops\n`;
    const fieldLimits: DecodeLimits = { ...LIMITS, fieldsMax: 1000 };
    expect(error(yaml, 'application/yaml', fieldLimits).code).toBe('too_many_fields');
    expect(error(yaml, 'application/yaml').code).toBe('body_malformed');
  });
});
