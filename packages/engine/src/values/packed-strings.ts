/**
 * A list of strings as one string and their lengths, for a structured clone
 * to another thread: cloning one string and one Uint32Array is a copy of
 * their bytes, where an array of 10,000 short strings is cloned string by
 * string on the sending thread (the segment worker's flushes carry a write
 * buffer's terms and doc-value strings this way).
 */
export interface PackedStrings {
  readonly text: string;
  /** Length of each string, UTF-16 code units. */
  readonly lengths: Uint32Array;
}

export function packStrings(strings: readonly string[]): PackedStrings {
  const lengths = new Uint32Array(strings.length);
  for (let i = 0; i < strings.length; i++) lengths[i] = strings[i]!.length;
  return { text: strings.join(''), lengths };
}

export function unpackStrings(packed: PackedStrings): string[] {
  const out = new Array<string>(packed.lengths.length);
  let at = 0;
  for (let i = 0; i < out.length; i++) {
    const end = at + packed.lengths[i]!;
    out[i] = packed.text.slice(at, end);
    at = end;
  }
  return out;
}
