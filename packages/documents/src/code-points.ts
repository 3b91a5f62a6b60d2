/**
 * The one order of strings: code point order (UTF-8 byte order), which the
 * segments' dictionaries, the shards' sorts and the coordinator's merge of
 * their pages all use. JavaScript's `<` compares UTF-16 units instead, which
 * differs beyond the Basic Multilingual Plane (`'\u{1F600}' < '\uFF5E'`).
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
