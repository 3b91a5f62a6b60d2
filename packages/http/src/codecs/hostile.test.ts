/**
 * Hostile bodies (STYLE §13): truncated encodings, random bytes, huge declared
 * lengths, 100,000-deep nesting, alias bombs and bad UTF-8 must end in a
 * TesseraError 400 — never another exception type, never a hang.
 */
import fc from 'fast-check';
import { encode } from '@msgpack/msgpack';
import { TesseraError } from '@tessera/errors';
import { decodeBody } from './decode.js';
import { DEFAULT_DECODE_LIMITS } from './limits.js';
import { jsonSerializer, msgpackSerializer, yamlSerializer } from './serializers.js';

const LIMITS = DEFAULT_DECODE_LIMITS;
const DEEP = 100_000;
const CASE_MS_MAX = 1000;

type Outcome = { ok: true } | { ok: false; error: TesseraError };

/**
 * Decodes, timing it by the CPU it took (a quadratic cost shows as seconds of CPU; wall time would also count
 * what other processes of a loaded machine took); anything thrown that is not a TesseraError fails the test.
 */
function attempt(body: Uint8Array | string, contentType: string | undefined): Outcome {
  const start = process.cpuUsage();
  try {
    decodeBody(Buffer.from(body), contentType, LIMITS);
    return { ok: true };
  } catch (err) {
    if (!(err instanceof TesseraError)) throw err;
    return { ok: false, error: err };
  } finally {
    const used = process.cpuUsage(start);
    expect((used.user + used.system) / 1000).toBeLessThan(CASE_MS_MAX);
  }
}

function expect400(body: Uint8Array | string, contentType: string | undefined, code?: string): TesseraError {
  const outcome = attempt(body, contentType);
  if (outcome.ok) throw new Error('expected a 400');
  expect(outcome.error.status).toBe(400);
  if (code !== undefined) expect(outcome.error.code).toBe(code);
  return outcome.error;
}

function expectValueOr400(body: Uint8Array | string, contentType: string | undefined): void {
  const outcome = attempt(body, contentType);
  if (!outcome.ok) expect(outcome.error.status).toBe(400);
}

const STRUCTURED_TYPES = ['application/json', 'application/yaml', 'application/msgpack', 'application/x-ndjson', 'application/x-www-form-urlencoded'];

const SAMPLE = {
  package: '0ad', version: '0.0.26-3', maintainer: { name: 'Debian Games Team', email: 'pkg-games@lists' },
  description: '0 A.D. is a "free" game.\nOf ancient warfare: [RTS].', installed_size: 28591, size: 7.5,
  depends: ['libc6', 'zlib1g'], tags: [], essential: false, homepage: null, 'é€𝄞': { nested: [[1, -2], { x: 'y' }] },
};

describe('truncated bodies', () => {
  // Whether every strict prefix is incomplete: a JSON object or a msgpack map
  // is; YAML and NDJSON prefixes often are documents of their own.
  const encodings: [string, Buffer, boolean][] = [
    ['application/json', Buffer.from(jsonSerializer.encode(SAMPLE, 2)), true],
    ['application/yaml', Buffer.from(yamlSerializer.encode(SAMPLE, 2)), false],
    ['application/msgpack', Buffer.from(msgpackSerializer.encode(SAMPLE, 0)), true],
    ['application/x-ndjson', Buffer.from(`${JSON.stringify(SAMPLE)}\n${JSON.stringify(SAMPLE)}\n`), false],
  ];
  it.each(encodings)('%s: every prefix decodes or is a 400', (type, full, allIncomplete) => {
    let refused = 0;
    for (let n = 1; n < full.length; n++) {
      const outcome = attempt(full.subarray(0, n), type);
      if (!outcome.ok) {
        expect(outcome.error.status).toBe(400);
        refused++;
      }
    }
    if (allIncomplete) expect(refused).toBe(full.length - 1);
    else expect(refused).toBeGreaterThan(0);
  });
  it('random values cut at random points (fast-check)', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), fc.double({ min: 0, max: 1, noNaN: true }), (value, cut) => {
      for (const serializer of [jsonSerializer, yamlSerializer, msgpackSerializer]) {
        const full = Buffer.from(serializer.encode(value, 2));
        expectValueOr400(full.subarray(0, Math.floor(full.length * cut)), serializer.mediaType);
      }
    }), { numRuns: 300 });
  });
});

describe('random garbage', () => {
  it.each(STRUCTURED_TYPES)('%s: random bytes decode or are a 400 (fast-check)', (type) => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => expectValueOr400(bytes, type)), { numRuns: 400 });
  });
  const textTokens = ['[', ']', '{', '}', '"', "'", ':', ',', '-', ' ', '  ', '\n', '\t', '&a ', '*a', '!!str ', '!x ', '#', '//', '/*', '*/',
    '\\', '?', '|', '>', '---', '...', 'a', '1', '1e999', 'NaN', 'true', 'null', '__proto__', '<<', '%YAML 1.2', '\u0000', '\ufeff', 'é'];
  it.each(['application/json', 'application/yaml', 'application/x-ndjson', 'application/x-www-form-urlencoded'])(
    '%s: random token soup decodes or is a 400 (fast-check)', (type) => {
      fc.assert(fc.property(fc.array(fc.constantFrom(...textTokens), { maxLength: 60 }), (tokens) => expectValueOr400(tokens.join(''), type)), { numRuns: 1500 });
    });
  it('msgpack: random header bytes and lengths decode or are a 400 (fast-check)', () => {
    const headerByte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0xc4, 0xc5, 0xc6, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xc7, 0xd4, 0xc1, 0xff));
    fc.assert(fc.property(fc.array(headerByte, { maxLength: 64 }), (bytes) => expectValueOr400(Uint8Array.from(bytes), 'application/msgpack')), { numRuns: 2000 });
  });
});

describe('huge declared lengths (msgpack)', () => {
  it.each([
    ['str32', [0xdb, 0xff, 0xff, 0xff, 0xff, 0x61, 0x62], 'declares 4294967295 bytes'],
    ['bin32', [0xc6, 0xff, 0xff, 0xff, 0xff, 0x00], 'declares 4294967295 bytes'],
    ['array32', [0xdd, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02], 'declares 4294967295 items'],
    ['map32', [0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 0x61, 0x01], 'declares 4294967295 items'],
    ['array32 inside a map', [0x81, 0xa1, 0x61, 0xdd, 0xff, 0xff, 0xff, 0xff], 'declares 4294967295 items'],
    ['str16 beyond the body', [0xda, 0xff, 0xff, 0x61], 'declares 65535 bytes'],
  ])('%s is refused from its header', (_name, bytes, message) => {
    const before = process.memoryUsage().arrayBuffers;
    const e = expect400(Uint8Array.from(bytes), 'application/msgpack', 'body_malformed');
    expect(e.message).toContain(message);
    // Nothing near the declared size was allocated.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('100,000-deep nesting', () => {
  const deepJson: [string, string][] = [
    ['arrays', '['.repeat(DEEP) + ']'.repeat(DEEP)],
    ['objects', '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP)],
    ['unclosed', '['.repeat(DEEP)],
    ['JSON5 with comments', '[/*c*/'.repeat(DEEP) + ']'.repeat(DEEP)],
  ];
  it.each(deepJson)('JSON %s', (_name, text) => {
    for (const type of [undefined, 'application/json', 'application/x-www-form-urlencoded']) expect400(text, type, 'body_too_deep');
    expect400(`{}\n${text}\n`, 'application/x-ndjson', 'body_too_deep');
  });
  it.each([
    ['flow sequences', '['.repeat(DEEP) + ']'.repeat(DEEP)],
    ['flow maps', '{a: '.repeat(DEEP) + '1' + '}'.repeat(DEEP)],
    ['block sequences', '- '.repeat(DEEP) + 'x\n'],
    ['explicit keys', '? '.repeat(DEEP) + 'x\n'],
    ['indented maps', Array.from({ length: 300 }, (_, i) => ' '.repeat(i) + 'k:').join('\n') + ' 1\n'],
  ])('YAML %s', (_name, text) => {
    expect400(text, 'application/yaml', 'body_too_deep');
  });
  it.each([
    ['fixarray', Buffer.alloc(DEEP, 0x91)],
    ['array16', Buffer.concat(Array.from({ length: DEEP }, () => Buffer.from([0xdc, 0x00, 0x01])))],
    ['fixmap', Buffer.concat(Array.from({ length: DEEP }, () => Buffer.from([0x81, 0xa1, 0x61])))],
  ])('msgpack %s', (_name, bytes) => {
    expect400(bytes, 'application/msgpack', 'body_too_deep');
  });
});

describe('YAML aliases', () => {
  const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++) {
    const [name, prev] = ['abcdefghi'[i], 'abcdefghi'[i - 1]];
    laughs.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  it('refuses a billion laughs quickly', () => {
    const e = expect400(laughs.join('\n') + '\n', 'application/yaml', 'body_malformed');
    expect(e.message).toContain('Excessive alias count');
  });
  it('bounds what aliases within the count expand to', () => {
    const big = `big: &b [${Array(2000).fill('0').join(',')}]\nrefs: [${Array(50).fill('*b').join(',')}]\n`;
    const e = expect400(big, 'application/yaml', 'body_malformed');
    expect(e.message).toContain('expands to more than');
  });
  it('refuses a cyclic anchor', () => {
    expect400('a: &a { b: *a }\n', 'application/yaml', 'body_too_deep');
    expect400('&a [*a]\n', 'application/yaml');
  });
});

describe('YAML costs yaml itself would make quadratic', () => {
  // yaml's own duplicate-key check compares each key with all earlier ones: 10,050 keys took 3-6 s.
  const keys = Array.from({ length: 10_050 }, (_, i) => `f${i}: ${i}`);
  it('a mapping of 10,050 keys is refused for its fields within the time limit', () => {
    expect400(`${keys.join('\n')}\n`, 'application/yaml', 'too_many_fields');
  });
  it('a duplicate key after 9,999 others is still found', () => {
    const e = expect400(`${keys.slice(0, 9_999).join('\n')}\nf17: again\n`, 'application/yaml', 'body_malformed');
    expect(e.message).toContain('Map keys must be unique at line 10000');
    expect400('a: 1\nb: {x: 1, x: 2}\n', 'application/yaml', 'body_malformed');
    expect400('- [1, {? [a] : 1, "k": 2, k: 3}]\n', 'application/yaml', 'body_malformed');
  });
  it('keys equal as text but not as values are distinct, as in yaml', () => {
    expect(decodeBody(Buffer.from('1: a\n"1": b\nx: {null: 1}\n'), 'application/yaml', LIMITS)).toMatchObject({ kind: 'value' });
  });
  // yaml resolves a double-quoted scalar a character at a time: 8 MB took 4-6 s and hundreds of MB.
  const chars = LIMITS.yamlScalarCharsMax as number;
  it.each([
    ['double-quoted', (n: number) => `text: "${'lorem ipsum '.repeat(n / 12 + 1)}"\n`],
    ['single-quoted', (n: number) => `text: '${'lorem ipsum '.repeat(n / 12 + 1)}'\n`],
    ['plain', (n: number) => `text: ${'lorem ipsum '.repeat(n / 12 + 1).trim()}\n`],
    ['block', (n: number) => `text: |\n${'  lorem ipsum\n'.repeat(n / 14 + 1)}`],
  ])('a %s scalar longer than yamlScalarCharsMax is refused before yaml resolves it', (_name, scalar) => {
    const e = expect400(scalar(4 * chars), 'application/yaml', 'value_too_large');
    expect(e.message).toContain(`longer than ${chars} characters`);
    expect(decodeBody(Buffer.from(scalar(chars / 4)), 'application/yaml', LIMITS)).toMatchObject({ kind: 'value' });
  });
});

describe('bad UTF-8', () => {
  const bad = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]];
  it.each(bad.map((b) => [Buffer.from(b).toString('hex'), b] as const))('%s in JSON, NDJSON, YAML and msgpack strings and keys', (_hex, b) => {
    const bytes = Buffer.from(b);
    const wrap = (before: string, after: string) => Buffer.concat([Buffer.from(before), bytes, Buffer.from(after)]);
    expect400(wrap('{"a": "', '"}'), 'application/json', 'body_malformed');
    expect400(wrap('{"', '": 1}'), 'application/json', 'body_malformed');
    expect400(wrap('{"a": 1}\n["', '"]\n'), 'application/x-ndjson', 'body_malformed');
    expect400(wrap('a: ', '\n'), 'application/yaml', 'body_malformed');
    expect400(wrap('"', '": 1\n'), 'application/yaml', 'body_malformed');
    expect400(Buffer.concat([Buffer.from([0x91, 0xa0 | bytes.length]), bytes]), 'application/msgpack', 'body_malformed');
    expect400(Buffer.concat([Buffer.from([0x81, 0xa0 | bytes.length]), bytes, Buffer.from([0x01])]), 'application/msgpack', 'body_malformed');
    const long = Buffer.concat([Buffer.from([0xd9, 40 + bytes.length]), Buffer.alloc(40, 0x61), bytes]);
    expect400(long, 'application/msgpack', 'body_malformed');
  });
  it('valid multi-byte text still decodes in every codec', () => {
    const v = { 'ключ': 'é€𝄞', list: ['日本'] };
    expect(decodeBody(Buffer.from(JSON.stringify(v)), 'application/json', LIMITS)).toMatchObject({ value: v });
    expect(decodeBody(Buffer.from(yamlSerializer.encode(v, 2)), 'application/yaml', LIMITS)).toMatchObject({ value: v });
    expect(decodeBody(Buffer.from(encode(v)), 'application/msgpack', LIMITS)).toMatchObject({ value: v });
  });
});
