import { gunzipSync, inflateSync } from 'node:zlib';
import { encodeContent, negotiateEncoding } from './encoding.js';

describe('negotiateEncoding', () => {
  it('is identity without Accept-Encoding or with an empty one', () => {
    expect(negotiateEncoding(undefined)).toBe('identity');
    expect(negotiateEncoding('')).toBe('identity');
    expect(negotiateEncoding(' , ')).toBe('identity');
  });
  it('takes known codings in the client q order, ties in the client order', () => {
    expect(negotiateEncoding('gzip, deflate, br')).toBe('gzip');
    expect(negotiateEncoding('deflate, gzip')).toBe('deflate');
    expect(negotiateEncoding('gzip;q=0.5, deflate')).toBe('deflate');
    expect(negotiateEncoding('br;q=1, zstd, identity;q=0.1')).toBe('identity');
    expect(negotiateEncoding('x-gzip')).toBe('gzip');
    expect(negotiateEncoding('GZIP')).toBe('gzip');
  });
  it('reads * as a coding the list does not name', () => {
    expect(negotiateEncoding('*')).toBe('identity');
    expect(negotiateEncoding('identity;q=0, *')).toBe('gzip');
    expect(negotiateEncoding('identity;q=0, gzip;q=0, *')).toBe('deflate');
    expect(negotiateEncoding('br, *;q=0.5')).toBe('identity');
  });
  it('lets q=0 exclude', () => {
    expect(negotiateEncoding('gzip;q=0, deflate;q=0.1')).toBe('deflate');
    expect(negotiateEncoding('gzip;q=0')).toBeNull();
    expect(negotiateEncoding('identity;q=0, gzip;q=0, deflate;q=0, *;q=0')).toBeNull();
  });
  it('gives null (406) when only unknown codings are listed', () => {
    expect(negotiateEncoding('br')).toBeNull();
    expect(negotiateEncoding('br, zstd;q=0.5, compress')).toBeNull();
  });
  it('ignores entries with a malformed q', () => {
    expect(negotiateEncoding('gzip;q=2, deflate')).toBe('deflate');
  });
  it('answers a repeated header from its cache, also past the cache bound', () => {
    for (let round = 0; round < 2; round++) {
      expect(negotiateEncoding('br')).toBeNull();
      expect(negotiateEncoding('deflate, gzip')).toBe('deflate');
    }
    for (let i = 0; i < 600; i++) negotiateEncoding(`gzip;q=0.${i % 10}, x${i}`);
    expect(negotiateEncoding('br')).toBeNull();
    expect(negotiateEncoding('deflate, gzip')).toBe('deflate');
  });
});

describe('encodeContent', () => {
  const body = Buffer.from('{"hits": ['.repeat(200) + ']}'.repeat(200));
  it('compresses with gzip and zlib deflate, reversibly', () => {
    const gz = encodeContent(body, 'gzip');
    expect(gz.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(gunzipSync(gz)).toEqual(body);
    const zl = encodeContent(body, 'deflate');
    expect(zl[0]).toBe(0x78); // zlib header, as HTTP "deflate" means
    expect(inflateSync(zl)).toEqual(body);
    expect(zl.length).toBeLessThan(body.length);
  });
  it('returns the same buffer for identity', () => {
    expect(encodeContent(body, 'identity')).toBe(body);
  });
});
