import { encode } from '@msgpack/msgpack';
import fc from 'fast-check';
import { DEFAULT_DECODE_LIMITS } from './limits.js';
import { decodeSequence, msgpackValueLength, type SequenceFormat, type SequenceItem } from './sequence.js';

async function all(chunks: Buffer[], format: SequenceFormat, itemBytesMax = 1 << 20): Promise<SequenceItem[]> {
  const out: SequenceItem[] = [];
  for await (const items of decodeSequence(chunks, format, DEFAULT_DECODE_LIMITS, itemBytesMax)) out.push(...items);
  return out;
}

function splitAt(buf: Buffer, points: number[]): Buffer[] {
  const cuts = [...new Set(points.map((p) => p % (buf.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let last = 0;
  for (const c of cuts) { out.push(buf.subarray(last, c)); last = c; }
  out.push(buf.subarray(last));
  return out;
}

const docs = fc.array(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__'), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null))), { maxLength: 20 });

describe('decodeSequence', () => {
  it('gives the same items however the body is split (all three formats)', async () => {
    await fc.assert(fc.asyncProperty(docs, fc.array(fc.nat(), { maxLength: 8 }), async (values, points) => {
      const bodies: Array<[SequenceFormat, Buffer]> = [
        ['ndjson', Buffer.from(values.map((v) => JSON.stringify(v)).join('\n'))],
        ['json', Buffer.from(JSON.stringify(values, null, 1))],
        ['msgpack', Buffer.concat(values.map((v) => Buffer.from(encode(v))))],
      ];
      for (const [format, body] of bodies) {
        const items = await all(splitAt(body, points), format);
        expect(items.map((i) => i.value)).toEqual(values);
        expect(items.every((i) => i.error === undefined)).toBe(true);
      }
    }));
  });

  it('reports a bad item and goes on', async () => {
    const items = await all([Buffer.from('{"a":1}\n{"b":\n{"c":3}\n\n{"__proto__":{}}\n')], 'ndjson');
    expect(items.map((i) => [i.index, i.value, i.error?.status])).toEqual([[0, { a: 1 }, undefined], [1, undefined, 400], [2, { c: 3 }, undefined], [3, undefined, 400]]);
    const arr = await all([Buffer.from('[{"a":1}, {"b": NaN}, // comment, with ] inside\n {"c": "],["}, ]')], 'json');
    expect(arr.map((i) => [i.value, i.error?.status])).toEqual([[{ a: 1 }, undefined], [undefined, 400], [{ c: '],[' }, undefined]]);
  });

  it('bounds the size of an item', async () => {
    const items = await all([Buffer.from(`{"a":"${'x'.repeat(100)}"}\n{"b":1}\n`)], 'ndjson', 50);
    expect(items.map((i) => i.error?.status ?? i.value)).toEqual([400, { b: 1 }]);
    await expect(all([Buffer.from([0xdb, 0xff, 0xff, 0xff, 0xff])], 'msgpack', 50)).rejects.toMatchObject({ status: 400 });
  });

  it('refuses broken framing with a 400', async () => {
    await expect(all([Buffer.from('{"a":1}')], 'json')).rejects.toMatchObject({ status: 400 });
    await expect(all([Buffer.from('[{"a":1}')], 'json')).rejects.toMatchObject({ status: 400 });
    await expect(all([Buffer.from('[1] x')], 'json')).rejects.toMatchObject({ status: 400 });
    await expect(all([Buffer.from([0x92, 0x01])], 'msgpack')).rejects.toMatchObject({ status: 400 });
  });

  it('measures MessagePack values', () => {
    const v = Buffer.from(encode({ a: [1, 2, { b: 'x'.repeat(300) }], c: 1.5 }));
    expect(msgpackValueLength(v, 0)).toBe(v.length);
    expect(msgpackValueLength(v.subarray(0, v.length - 1), 0)).toBe(-1);
  });
});
