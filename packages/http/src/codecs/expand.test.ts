import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { expandDottedFields } from './expand.js';

function expandError(value: unknown, options?: Parameters<typeof expandDottedFields>[1]): TesseraError {
  try {
    expandDottedFields(value, options);
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
  throw new Error('expected a TesseraError');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe('expandDottedFields', () => {
  it('nests dotted keys and merges objects (API.md §2.2)', () => {
    expect(expandDottedFields({ 'a.b': 1, a: { c: 2 } })).toEqual({ a: { b: 1, c: 2 } });
    expect(expandDottedFields({ a: { c: 2 }, 'a.b': 1 })).toEqual({ a: { c: 2, b: 1 } });
    expect(expandDottedFields({ 'x.y.z': true, 'x.y.w': false })).toEqual({ x: { y: { z: true, w: false } } });
  });
  it('lets the later key win a clash', () => {
    expect(expandDottedFields({ a: 1, 'a.b': 2 })).toEqual({ a: { b: 2 } });
    expect(expandDottedFields({ 'a.b': 2, a: 1 })).toEqual({ a: 1 });
    expect(expandDottedFields({ 'a.b': 1, 'a.b.c': 2 })).toEqual({ a: { b: { c: 2 } } });
    expect(expandDottedFields({ a: { b: { c: 1, d: 1 } }, 'a.b': { d: 2 } })).toEqual({ a: { b: { c: 1, d: 2 } } });
    expect(expandDottedFields({ a: [1], 'a.0': 2 })).toEqual({ a: { 0: 2 } });
  });
  it('expands inside arrays and nested objects, at any depth', () => {
    expect(expandDottedFields([{ 'a.b': 1 }, [{ 'c.d': { 'e.f': 2 } }], 3])).toEqual([{ a: { b: 1 } }, [{ c: { d: { e: { f: 2 } } } }], 3]);
  });
  it('keeps verbatim keys as they are, with the rest of a path after one', () => {
    const body = { _meta: { 'x.y': 1 }, 'q.r': 1, _params: { 'p.q': [{ 'r.s': 1 }] }, _aggs: { 'max_bal._max': 1 }, _aggregations: { 'a.b': {} } };
    expect(expandDottedFields(body)).toEqual({ _meta: { 'x.y': 1 }, q: { r: 1 }, _params: { 'p.q': [{ 'r.s': 1 }] }, _aggs: { 'max_bal._max': 1 }, _aggregations: { 'a.b': {} } });
    expect(expandDottedFields({ 'doc._meta.a.b': 1, doc: { _meta: { c: 2 } } })).toEqual({ doc: { _meta: { 'a.b': 1, c: 2 } } });
    expect(expandDottedFields({ 'a._meta': { 'x.y': 1 } })).toEqual({ a: { _meta: { 'x.y': 1 } } });
    expect(expandDottedFields({ _other: { 'x.y': 1 } }, { verbatimKeys: new Set(['_other']) })).toEqual({ _other: { 'x.y': 1 } });
    expect(expandDottedFields({ _meta: { 'x.y': 1 } }, { verbatimKeys: new Set() })).toEqual({ _meta: { x: { y: 1 } } });
  });
  it('leaves comment keys ("" and #…) and their values as they are', () => {
    expect(expandDottedFields({ '': { 'a.b': 1 }, '#c.d': { 'e.f': 2 }, 'g.h': 3 })).toEqual({ '': { 'a.b': 1 }, '#c.d': { 'e.f': 2 }, g: { h: 3 } });
  });
  it.each(['a..b', '.a', 'a.', '.', 'a.b.'])('refuses an empty segment in %j', (key) => {
    const e = expandError({ [key]: 1 });
    expect([e.code, e.status, e.message]).toEqual(['invalid_field_name', 400, `Invalid field name '${key}'`]);
  });
  it('refuses __proto__ as a key or a segment, and keeps constructor/prototype ordinary', () => {
    expect(expandError({ 'a.__proto__.polluted': 1 }).message).toBe("Invalid field name '__proto__'");
    expect(expandError(JSON.parse('{"_meta": {"__proto__": {"polluted": 1}}}')).message).toBe("Invalid field name '__proto__'");
    expect(Object.prototype).not.toHaveProperty('polluted');
    const out = expandDottedFields({ 'constructor.prototype': 1, 'toString.x': 2 }) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['constructor', 'toString']);
    expect(Object.getOwnPropertyDescriptor(out, 'constructor')?.value).toEqual({ prototype: 1 });
  });
  it('never mutates its input and returns new objects', () => {
    const input = deepFreeze({ a: { b: 1 }, 'a.c': 2, list: [{ 'x.y': 1 }], _meta: { m: 1 }, '_meta.n': 2 });
    const out = expandDottedFields(input) as Record<string, Record<string, unknown>>;
    expect(out).toEqual({ a: { b: 1, c: 2 }, list: [{ x: { y: 1 } }], _meta: { m: 1, n: 2 } });
    expect(out['a']).not.toBe(input.a);
    expect(out['_meta']).not.toBe(input._meta);
  });
  it('checks the depth it builds', () => {
    const path = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`).join('.');
    // n segments under the root object: n objects deep.
    expect(() => expandDottedFields({ [path(128)]: 1 })).not.toThrow();
    expect(expandError({ [path(129)]: 1 }).code).toBe('body_too_deep');
    expect(() => expandDottedFields({ [path(3)]: [1] }, { depthMax: 4 })).not.toThrow();
    expect(expandError({ [path(3)]: [1] }, { depthMax: 3 }).code).toBe('body_too_deep');
    expect(expandError({ 'a._meta.x': { y: { z: 1 } } }, { depthMax: 4 }).code).toBe('body_too_deep');
    expect(expandError({ [path(100_000)]: 1 }).code).toBe('body_too_deep');
  });
});

describe('expandDottedFields properties (fast-check)', () => {
  const segment = fc.constantFrom('a', 'b', 'c', 'constructor', '_meta', '#x', 'é');
  const dottedKey = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('.'));
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
      fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(dottedKey, tie('value'), { maxKeys: 4 })),
  }));

  it('expanding an expanded value is the identity', () => {
    fc.assert(fc.property(value, (v) => {
      const once = expandDottedFields(v);
      expect(expandDottedFields(once)).toEqual(once);
    }), { numRuns: 500 });
  });

  it('a flat dotted object equals the nested object built by hand', () => {
    // Prefix-free paths (no path is a prefix of another), so no key order matters.
    const name = fc.constantFrom('a', 'b', 'c', 'd', 'constructor', 'toString', 'é', 'x_y');
    const paths = fc.uniqueArray(fc.array(name, { minLength: 1, maxLength: 4 }), { maxLength: 8, selector: (p) => p.join('.') })
      .map((ps) => ps.filter((p) => !ps.some((q) => q !== p && q.length > p.length && p.every((s, i) => q[i] === s))));
    fc.assert(fc.property(paths, fc.array(fc.integer(), { minLength: 8, maxLength: 8 }), (ps, leaves) => {
      const flat: Record<string, unknown> = {};
      const nested: Record<string, unknown> = {};
      ps.forEach((p, i) => {
        flat[p.join('.')] = leaves[i];
        let node = nested;
        for (const s of p.slice(0, -1)) {
          if (!Object.hasOwn(node, s)) Object.defineProperty(node, s, { value: {}, enumerable: true, writable: true, configurable: true });
          node = node[s] as Record<string, unknown>;
        }
        Object.defineProperty(node, p[p.length - 1] as string, { value: leaves[i], enumerable: true, writable: true, configurable: true });
      });
      expect(expandDottedFields(flat)).toEqual(nested);
    }), { numRuns: 500 });
  });
});
