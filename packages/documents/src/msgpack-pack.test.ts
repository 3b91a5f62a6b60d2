import { Decoder, Encoder } from '@msgpack/msgpack';
import { packMessagePack } from './msgpack-pack.js';

describe('packMessagePack', () => {
  const decoder = new Decoder();
  const reference = new Encoder({ ignoreUndefined: true });

  // What records and RPC messages hold: JSON's kinds of value, byte strings, and the shapes of the shard protocol.
  const values: Array<[string, unknown]> = [
    ['a call envelope', [1, 7, 'doc.get', { index: '/a/', shard: 1, id: 'x' }, 30_000]],
    ['ASCII, Latin-1 and astral text, short and long', { a: 'plain', b: 'café', c: '日本語', d: '🙂'.repeat(40), e: 'x'.repeat(70_000), f: '' }],
    ['a lone surrogate', { s: 'a\ud800b', t: 'a'.repeat(100) + '\udc00' }],
    ['integers and floats', [0, 1, -1, 127, 128, -33, 255, 65_535, 2 ** 31 - 1, -(2 ** 31), 1.5, -0.25, 1e300]],
    ['booleans and null', [true, false, null]],
    ['nested objects and arrays', { hits: [{ id: 1, score: 0.5, bodyJson: '{"k":"v"}', sortValues: ['a', 2] }], total: 1 }],
  ];

  it.each(values)('writes %s as @msgpack/msgpack does, byte for byte', (_name, value) => {
    expect(Buffer.from(packMessagePack(value)).equals(Buffer.from(reference.encode(value)))).toBe(true);
  });

  it('reads back what the shard protocol relies on: undefined fields dropped, undefined items nil, bytes as bytes, large integers exact', () => {
    const decoded = decoder.decode(packMessagePack({
      id: 'a', body: undefined, list: [1, undefined], bytes: Uint8Array.of(1, 2, 3), big: 2 ** 40, neg: -(2 ** 52), max: Number.MAX_SAFE_INTEGER,
    })) as Record<string, unknown>;
    expect(Object.keys(decoded)).toEqual(['id', 'list', 'bytes', 'big', 'neg', 'max']);
    expect(decoded.list).toEqual([1, null]);
    expect(Buffer.from(decoded.bytes as Uint8Array).equals(Buffer.of(1, 2, 3))).toBe(true);
    expect([decoded.big, decoded.neg, decoded.max]).toEqual([2 ** 40, -(2 ** 52), Number.MAX_SAFE_INTEGER]);
  });

  it('returns values that later encodes do not overwrite, across a buffer replaced after a large one', () => {
    const first = packMessagePack({ n: 'first' });
    const copy = Buffer.from(first);
    packMessagePack('y'.repeat(2 << 20));
    for (let i = 0; i < 1000; i++) packMessagePack({ i, filler: 'z'.repeat(100) });
    expect(Buffer.from(first).equals(copy)).toBe(true);
  });

  it('refuses a function', () => {
    expect(() => packMessagePack({ f: () => 1 })).toThrow(TypeError);
  });
});
