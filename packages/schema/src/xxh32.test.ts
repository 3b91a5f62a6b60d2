import { xxh32 } from './xxh32.js';

describe('xxh32', () => {
  test('reference vectors of xxHash', () => {
    expect(xxh32('', 0)).toBe(0x02cc5d05);
    expect(xxh32('', 1)).toBe(0x0b2cb792);
    expect(xxh32('a', 0)).toBe(0x550d7456);
    expect(xxh32('abc', 0)).toBe(0x32d153ff);
    expect(xxh32('Nobody inspects the spammish repetition', 0)).toBe(0xe2293b2f);
  });

  test('strings hash as their UTF-8 bytes', () => {
    expect(xxh32('żółw.', 7)).toBe(xxh32(new TextEncoder().encode('żółw.'), 7));
  });

  test('slot vectors of API.md §5.8 and §7.2', () => {
    expect(xxh32('types.', 'S'.charCodeAt(0))).toBe(1680431078);
    expect(xxh32('name.', 'S'.charCodeAt(0))).toBe(864931271);
    expect(xxh32('age.', 'N'.charCodeAt(0))).toBe(1926944900);
  });
});
