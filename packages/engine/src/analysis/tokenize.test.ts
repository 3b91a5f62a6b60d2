import fc from 'fast-check';
import { startsWithLetter, tokenize, tokens } from './tokenize.js';

describe('tokenize', () => {
  it('splits the API.md §8.4 examples', () => {
    expect(tokens("He's wearing a T-shirt")).toEqual(["he's", 'wearing', 'a', 't', 'shirt']);
    expect(tokens('Mail john.doe@example.com now')).toEqual(['mail', 'john', 'doe', 'example', 'com', 'now']);
  });

  it('emits 0-based positions in order and returns the count', () => {
    const seen: Array<[string, number]> = [];
    const count = tokenize('  one, two;three  ', (token, position) => { seen.push([token, position]); });
    expect(seen).toEqual([['one', 0], ['two', 1], ['three', 2]]);
    expect(count).toBe(3);
    expect(tokenize('', () => { throw new Error('no tokens expected'); })).toBe(0);
    expect(tokenize(' -- ... ', () => { throw new Error('no tokens expected'); })).toBe(0);
  });

  it('keeps an apostrophe only between letters, normalising ’ to \'', () => {
    expect(tokens("rock'n'roll")).toEqual(["rock'n'roll"]);
    expect(tokens('he’s')).toEqual(["he's"]);
    expect(tokens("'quoted' dogs' 90's o'")).toEqual(['quoted', 'dogs', '90', 's', 'o']);
    expect(tokens("a''b")).toEqual(['a', 'b']);
    expect(tokens("l'été")).toEqual(["l'été"]);
    expect(tokens("x'1")).toEqual(['x', '1']);
  });

  it('handles accents, combining marks, digits and CJK runs', () => {
    expect(tokens('Crème Brûlée ÉCOLE')).toEqual(['crème', 'brûlée', 'école']);
    // "e" + U+0301 COMBINING ACUTE ACCENT stays one token.
    expect(tokens('cafe\u0301 ok')).toEqual(['cafe\u0301', 'ok']);
    expect(tokens('version 1.74.0 x86_64')).toEqual(['version', '1', '74', '0', 'x86', '64']);
    expect(tokens('東京タワー、日本')).toEqual(['東京タワー', '日本']);
    expect(tokens('٣٤ Ⅻ ½')).toEqual(['٣٤', 'ⅻ', '½']);
    expect(tokens('Straße ΟΔΟΣ')).toEqual(['straße', 'οδος']);
  });

  it('treats astral letters as letters, emoji and lone surrogates as separators', () => {
    expect(tokens('𠀀𠀁 x')).toEqual(['𠀀𠀁', 'x']);
    expect(tokens('𝐀bc')).toEqual(['𝐀bc']);
    expect(tokens('a😀b')).toEqual(['a', 'b']);
    expect(tokens('a\ud800b\udc00c')).toEqual(['a', 'b', 'c']);
  });

  it('startsWithLetter distinguishes letters from digits and marks', () => {
    expect(startsWithLetter('abc')).toBe(true);
    expect(startsWithLetter('école')).toBe(true);
    expect(startsWithLetter('1abc')).toBe(false);
    expect(startsWithLetter('\u0301a')).toBe(false);
    expect(startsWithLetter('')).toBe(false);
  });

  it('tokens never contain separators and are lower-case (property)', () => {
    const valid = /^[\p{L}\p{N}\p{M}]+(?:'[\p{L}\p{N}\p{M}]+)*$/u;
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
      let expected = 0;
      const count = tokenize(text, (token, position) => {
        expect(position).toBe(expected++);
        expect(token).toMatch(valid);
        expect(token.toLowerCase()).toBe(token);
      });
      expect(count).toBe(expected);
    }), { numRuns: 2000 });
  });

  it('agrees with a reference regex on ASCII text (property)', () => {
    const reference = (text: string): string[] =>
      text.toLowerCase().match(/(?:[\p{L}\p{N}\p{M}]*[\p{L}\p{M}]'(?=\p{L}))*[\p{L}\p{N}\p{M}]+/gu) ?? [];
    const alphabet = fc.constantFrom('a', 'B', '1', "'", ' ', '-', '.', '@', 'é');
    fc.assert(fc.property(fc.array(alphabet, { maxLength: 60 }).map((a) => a.join('')), (text) => {
      expect(tokens(text)).toEqual(reference(text));
    }), { numRuns: 2000 });
  });

  it('gives each token its [start, end) in the text, which highlighting marks (property: the slice lower-cased is the token)', () => {
    const spans: Array<[string, number, number]> = [];
    tokenize('Rock’n’Roll, t-shirt 𝔘x', (token, _p, start, end) => { spans.push([token, start, end]); });
    expect(spans).toEqual([["rock'n'roll", 0, 11], ['t', 13, 14], ['shirt', 15, 20], ['𝔘x', 21, 24]]);
    const alphabet = fc.constantFrom('a', 'B', '1', "'", '’', ' ', '-', 'é', '𝔘');
    fc.assert(fc.property(fc.array(alphabet, { maxLength: 40 }).map((a) => a.join('')), (text) => {
      tokenize(text, (token, _p, start, end) => {
        expect(text.slice(start, end).toLowerCase().replaceAll('\u2019', "'")).toBe(token);
      });
    }), { numRuns: 1000 });
  });
});
