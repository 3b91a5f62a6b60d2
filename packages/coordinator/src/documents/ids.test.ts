import { convertId, detectIdType, generateId } from './ids.js';

describe('document IDs (API.md §1.2)', () => {
  it('detects the type from the first ID', () => {
    expect(detectIdType('1')).toBe('integer');
    expect(detectIdType('-12')).toBe('integer');
    expect(detectIdType('1.5')).toBe('float');
    expect(detectIdType('7E2A6F1C-0D3B-4C5A-9E8F-1A2B3C4D5E6F')).toBe('uuid');
    expect(detectIdType('doc')).toBe('keyword');
    expect(detectIdType('01')).toBe('keyword');
    expect(detectIdType('99999999999999999999')).toBe('float');
  });

  it('converts later IDs or refuses them', () => {
    expect(convertId('42', 'integer')).toBe(42);
    expect(() => convertId('x', 'integer')).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => convertId('-1', 'positive')).toThrow(expect.objectContaining({ status: 400 }));
    expect(convertId('1.25', 'float')).toBe(1.25);
    expect(convertId('7E2A6F1C-0D3B-4C5A-9E8F-1A2B3C4D5E6F', 'uuid')).toBe('7e2a6f1c-0d3b-4c5a-9e8f-1a2b3c4d5e6f');
    expect(convertId('~notmet', 'uuid')).toBe('~notmet');
    expect(() => convertId('nope', 'uuid')).toThrow(expect.objectContaining({ status: 400 }));
    expect(convertId(12, 'keyword')).toBe('12');
  });

  it('generates IDs of the index type', () => {
    expect(generateId('integer', 41)).toBe(42);
    expect(generateId('keyword', 0)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(generateId('uuid', 0)).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(Array.from({ length: 1000 }, () => generateId('keyword', 0))).size).toBe(1000);
  });
});
