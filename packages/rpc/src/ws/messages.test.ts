import { encode } from '@msgpack/msgpack';
import { TesseraError } from '@tessera/errors';
import { createDecoder, decodeMessage, encodeCall, encodeError, encodeHello, encodeResult, MessageKind, ProtocolViolation } from './messages.js';
import { Outbox } from './outbox.js';

describe('RPC messages', () => {
  const decoder = createDecoder(1 << 20);

  it('round-trips each kind of message', () => {
    expect(decodeMessage(decoder, encodeCall(7, 'doc.get', { index: '/a/', shard: 1, id: 'x' }, 3000)))
      .toEqual({ kind: MessageKind.call, id: 7, method: 'doc.get', params: { index: '/a/', shard: 1, id: 'x' }, timeoutMs: 3000 });
    expect(decodeMessage(decoder, encodeResult(7, [1, 'two', null]))).toEqual({ kind: MessageKind.result, id: 7, value: [1, 'two', null] });
    expect(decodeMessage(decoder, encodeError(8, new TesseraError('version_conflict', 409, 'Version mismatch!', { details: { at: 3 } }))))
      .toEqual({ kind: MessageKind.error, id: 8, code: 'version_conflict', status: 409, message: 'Version mismatch!', details: { at: 3 } });
    const hello = { name: 'node1', role: 'node', protocol: 1, messageBytesMax: 1 << 20, info: { dataDir: '/d' } };
    expect(decodeMessage(decoder, encodeHello(hello))).toEqual({ kind: MessageKind.hello, hello });
  });

  it('leaves out object keys whose value is undefined, as the in-process transport would see them', () => {
    const message = decodeMessage(decoder, encodeResult(1, { id: 'a', body: undefined, list: [1, undefined] }));
    expect(message).toEqual({ kind: MessageKind.result, id: 1, value: { id: 'a', list: [1, null] } });
    expect(Object.keys((message as { value: object }).value)).toEqual(['id', 'list']);
  });

  it('keeps the envelope of a small call small', () => {
    expect(encodeCall(7, 'doc.get', null, 30_000).byteLength).toBeLessThanOrEqual(16);
  });

  it('returns frames that later encodes do not overwrite', () => {
    const first = encodeResult(1, 'first');
    const copy = Uint8Array.from(first);
    encodeResult(2, 'second'.repeat(100));
    expect(first).toEqual(copy);
  });

  it.each([
    ['undecodable bytes', Uint8Array.of(0xc1)],
    ['truncated MessagePack', encodeCall(1, 'x', { a: 'long string' }, 0).subarray(0, 8)],
    ['not an array', encode({ kind: 1 })],
    ['an unknown kind', encode([42, 1])],
    ['a fractional id', encode([MessageKind.result, 1.5, null])],
    ['a call without a method', encode([MessageKind.call, 1, 5, null, 0])],
    ['a call with a negative timeout', encode([MessageKind.call, 1, 'x', null, -1])],
    ['an error with a status outside 4xx–5xx', encode([MessageKind.error, 1, 'x', 200, 'ok'])],
    ['a hello without a name', encode([MessageKind.hello, { role: 'node', protocol: 1, messageBytesMax: 1 << 20 }])],
    ['an array longer than the frame could hold', Uint8Array.of(0xdd, 0x7f, 0xff, 0xff, 0xff)],
  ])('refuses %s as a protocol violation', (_name, frame) => {
    expect(() => decodeMessage(decoder, frame)).toThrow(ProtocolViolation);
  });
});

describe('Outbox', () => {
  it('is a FIFO across compactions', () => {
    const outbox = new Outbox<number>();
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 100; i++) outbox.push(next++);
      for (let i = 0; i < 60; i++) expect(outbox.shift()).toBe(expected++);
    }
    expect(outbox.length).toBe(next - expected);
    expect(outbox.drain()).toEqual(Array.from({ length: next - expected }, (_, i) => expected + i));
    expect(outbox.length).toBe(0);
    expect(outbox.shift()).toBeUndefined();
  });
});
