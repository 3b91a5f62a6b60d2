import { rewriteLegacy } from './legacy.js';

describe('rewriteLegacy (ChaiScript compound assignments)', () => {
  it('leaves Lua without compound operators alone (same string)', () => {
    const body = 'if a ~= b and c >= 1 then _doc.x = _doc.x - 1 end';
    expect(rewriteLegacy(body)).toBe(body);
  });

  it.each([
    ['_doc.n += 1', '_doc.n = _doc.n + (1)'],
    ['_doc.n -= 2;', '_doc.n = _doc.n - (2);'],
    ['  total *= factor', '  total = total * (factor)'],
    ['_doc["price"] /= 2', '_doc["price"] = _doc["price"] / (2)'],
    ['_doc.a += 1; _doc.b -= 2;', '_doc.a = _doc.a + (1); _doc.b = _doc.b - (2);'],
    ['_doc.n += 1 -- count it', '_doc.n = _doc.n + (1) -- count it'],
    ['_doc.s += "x";', '_doc.s = _doc.s + ("x");'],
    ['_doc.n += _old_doc.n * 2', '_doc.n = _doc.n + (_old_doc.n * 2)'],
  ])('%s', (input, output) => {
    expect(rewriteLegacy(input)).toBe(output);
  });

  it('rewrites line by line', () => {
    expect(rewriteLegacy('local a = 1\n_doc.n += a\nreturn nil')).toBe('local a = 1\n_doc.n = _doc.n + (a)\nreturn nil');
  });
});
