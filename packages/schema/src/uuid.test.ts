import { canonicalUuid, isCondensedUuid, isUuidString } from './uuid.js';

describe('uuid', () => {
  test('canonical UUIDs of versions 1–5 in any case, lower-cased', () => {
    expect(canonicalUuid('5759B016-10C0-4526-A981-47D6D19F6FB4')).toBe('5759b016-10c0-4526-a981-47d6d19f6fb4');
    expect(canonicalUuid('c1e7d0f0-1f6e-11ee-be56-0242ac120002')).toBe('c1e7d0f0-1f6e-11ee-be56-0242ac120002');
    expect(isUuidString('5759b016-10c0-4526-a981-47d6d19f6fb4')).toBe(true);
  });

  test('condensed forms are kept verbatim, never decoded', () => {
    expect(isCondensedUuid('~notmet')).toBe(true);
    expect(canonicalUuid('~NotMet')).toBe('~NotMet');
  });

  test('other text is not a UUID', () => {
    for (const s of ['5759b016-10c0-4526-a981-47d6d19f6fb', '5759b016-10c0-0526-a981-47d6d19f6fb4', '5759b016-10c0-4526-c981-47d6d19f6fb4',
      '~', '~a.b', 'x5759b016-10c0-4526-a981-47d6d19f6fb4', '']) {
      expect(canonicalUuid(s)).toBeUndefined();
    }
  });
});
