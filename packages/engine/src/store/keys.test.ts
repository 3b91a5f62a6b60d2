import { decodeIdTag, docidKey, documentKey, encodeIdTag, oplogKey, oplogKeySeq } from './keys.js';
import { decodeDocumentRecord, decodeOplogEntry, encodeBody, encodeDocumentRecord, encodeOplogEntry } from './records.js';
import { crc32 } from 'node:zlib';
import { encode } from '@msgpack/msgpack';

describe('store keys', () => {
  it('tells numeric and string IDs apart', () => {
    expect(documentKey(1).equals(documentKey('1'))).toBe(false);
    expect(decodeIdTag(encodeIdTag(1))).toBe(1);
    expect(decodeIdTag(encodeIdTag('1'))).toBe('1');
  });

  it('round-trips IDs', () => {
    for (const id of [0, 1, -1, 2.5, -1e300, Number.MAX_SAFE_INTEGER, 'doc', '', 'ünïcødé/☃', 'a'.repeat(245)]) {
      expect(decodeIdTag(encodeIdTag(id))).toBe(id);
    }
    expect(Object.is(decodeIdTag(encodeIdTag(-0)), 0)).toBe(true);
  });

  it('orders numeric IDs numerically, and docids and seqs by value', () => {
    const numbers = [-1e10, -2.5, -1, 0, 0.5, 1, 2, 10, 1e10];
    const keys = numbers.map((n) => documentKey(n));
    const sorted = [...keys].sort(Buffer.compare);
    expect(sorted.map((k) => decodeIdTag(k, 1))).toEqual(numbers);
    expect(Buffer.compare(docidKey(255), docidKey(256))).toBe(-1);
    expect(Buffer.compare(oplogKey(2 ** 32), oplogKey(2 ** 32 + 1))).toBe(-1);
    expect(oplogKeySeq(oplogKey(2 ** 40 + 3))).toBe(2 ** 40 + 3);
  });
});

describe('store records', () => {
  it('splices the body into a record that is plain msgpack of the whole object, after its CRC-32 frame', () => {
    const body = { a: 1, nested: { list: [1, 'two', null] } };
    const record = encodeDocumentRecord({ id: 'x', docid: 3, version: 2, seq: 300 }, encodeBody(body));
    const plain = Buffer.from(encode({ id: 'x', docid: 3, version: 2, seq: 300, body }));
    expect(record[0]).toBe(0xc1);
    expect(record.readUInt32BE(1)).toBe(crc32(plain));
    expect(record.subarray(5).equals(plain)).toBe(true);
    expect(decodeDocumentRecord(record)).toEqual({ id: 'x', docid: 3, version: 2, seq: 300, body });
    // A record written before the frame (bare msgpack) still reads.
    expect(decodeDocumentRecord(plain)).toEqual({ id: 'x', docid: 3, version: 2, seq: 300, body });
  });

  it('a flipped bit in a framed record or oplog entry is store_corrupted, never decoded', () => {
    const record = encodeDocumentRecord({ id: 'x', docid: 3, version: 2, seq: 300 }, encodeBody({ text: 'uniq220x' }));
    const entry = encodeOplogEntry({ seq: 7, id: 5, docid: 2, version: 3, op: 'put' }, encodeBody({ b: 'value' }));
    for (let i = 0; i < record.length * 8; i += 7) {
      const copy = Buffer.from(record);
      copy[i >> 3] ^= 1 << (i & 7);
      if (i >> 3 === 0) continue; // the frame marker itself: then the bytes are not msgpack at all
      expect(() => decodeDocumentRecord(copy)).toThrow(expect.objectContaining({ code: 'store_corrupted', status: 500 }));
    }
    const copy = Buffer.from(entry);
    copy[copy.length - 2] ^= 0x20;
    expect(() => decodeOplogEntry(copy)).toThrow(expect.objectContaining({ code: 'store_corrupted' }));
  });

  it('round-trips oplog entries of puts and deletes', () => {
    const body = { b: [1] };
    expect(decodeOplogEntry(encodeOplogEntry({ seq: 7, id: 5, docid: 2, version: 3, op: 'put' }, encodeBody(body))))
      .toEqual({ seq: 7, id: 5, docid: 2, version: 3, op: 'put', body });
    expect(decodeOplogEntry(encodeOplogEntry({ seq: 8, id: 5, docid: 2, version: 4, op: 'delete' }, undefined)))
      .toEqual({ seq: 8, id: 5, docid: 2, version: 4, op: 'delete' });
  });

  it('asserts the record shape before writing and after reading', () => {
    expect(() => encodeDocumentRecord({ id: 'x', docid: 0, version: 1, seq: 1 }, encodeBody({}))).toThrow('docid');
    expect(() => decodeDocumentRecord(encode({ id: 'x', docid: 1, version: 1, seq: 1, body: [] }))).toThrow('body');
  });
});
