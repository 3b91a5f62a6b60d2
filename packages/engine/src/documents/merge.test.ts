import { mergeDocument } from './merge.js';

describe('mergeDocument', () => {
  it('merges objects key by key, recursively', () => {
    const base = { a: 1, o: { x: 1, deep: { k: 'v', keep: true } }, s: 'old' };
    const merged = mergeDocument(base, { o: { y: 2, deep: { k: 'w' } }, s: 'new', added: [1] });
    expect(merged).toEqual({ a: 1, o: { x: 1, y: 2, deep: { k: 'w', keep: true } }, s: 'new', added: [1] });
  });

  it('replaces scalars, arrays and null, and objects by non-objects and back', () => {
    const base = { arr: [1, 2, 3], n: { x: 1 }, obj: { x: 1 }, nul: { x: 1 }, scalar: 5 };
    const merged = mergeDocument(base, { arr: [9], n: 7, obj: [1], nul: null, scalar: { now: 'object' } });
    expect(merged).toEqual({ arr: [9], n: 7, obj: [1], nul: null, scalar: { now: 'object' } });
  });

  it('never modifies its inputs', () => {
    const base = { o: { x: 1 }, a: [1] };
    const partial = { o: { y: 2 }, a: [2] };
    const baseCopy = structuredClone(base);
    const partialCopy = structuredClone(partial);
    mergeDocument(base, partial);
    expect(base).toEqual(baseCopy);
    expect(partial).toEqual(partialCopy);
  });

  it('treats undefined as absent', () => {
    expect(mergeDocument({ a: 1 }, { a: undefined, b: undefined })).toEqual({ a: 1 });
  });

  it('keeps a __proto__ key an own field and never touches a prototype', () => {
    const partial: Record<string, unknown> = {};
    Object.defineProperty(partial, '__proto__', { value: { polluted: true }, enumerable: true, writable: true, configurable: true });
    const merged = mergeDocument({ a: 1 }, partial);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((merged as { polluted?: unknown }).polluted).toBeUndefined();
    // Merging into an existing own __proto__ field merges, as for any other key.
    const again = mergeDocument(merged, partial);
    expect(Object.getOwnPropertyDescriptor(again, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('does not read inherited properties of the base', () => {
    const merged = mergeDocument({}, { toString: { x: 1 } });
    expect(merged).toEqual({ toString: { x: 1 } });
  });
});
