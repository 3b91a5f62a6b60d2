/**
 * Building a segment's doc values from other columns: flush (one source, the
 * write buffer, reordered by docid) and merge (several segments). New
 * ordinal i takes source `sources[sourceIndex[i]]` at ordinal `sourceOrdinal[i]`.
 * The result is compacted: single-valued when no doc has two values.
 */
import { NumericColumn } from './numeric-column.js';
import { StringColumn } from './string-column.js';
import { StringDictionary } from './string-dictionary.js';

export function gatherNumeric(sources: readonly (NumericColumn | null)[], sourceIndex: Uint16Array | Uint8Array, sourceOrdinal: Uint32Array): NumericColumn {
  const n = sourceOrdinal.length;
  let multi = false;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const column = sources[sourceIndex[i]!];
    if (column === null || column === undefined) continue;
    const count = column.valueCount(sourceOrdinal[i]!);
    if (count > 1) multi = true;
    total += count;
  }
  const min = new Float64Array(n).fill(NaN);
  if (!multi) {
    for (let i = 0; i < n; i++) {
      const column = sources[sourceIndex[i]!];
      if (column !== null && column !== undefined) min[i] = column.min[sourceOrdinal[i]!]!;
    }
    return new NumericColumn(n, min, min, null, min);
  }
  const max = new Float64Array(n).fill(NaN);
  const offsets = new Uint32Array(n + 1);
  const values = new Float64Array(total);
  let p = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = p;
    const column = sources[sourceIndex[i]!];
    if (column === null || column === undefined) continue;
    const ordinal = sourceOrdinal[i]!;
    min[i] = column.min[ordinal]!;
    max[i] = column.max[ordinal]!;
    const count = column.valueCount(ordinal);
    for (let k = 0; k < count; k++) values[p++] = column.valueAt(ordinal, k);
  }
  offsets[n] = p;
  return new NumericColumn(n, min, max, offsets, values);
}

export function gatherStrings(sources: readonly (StringColumn | null)[], sourceIndex: Uint16Array | Uint8Array, sourceOrdinal: Uint32Array): StringColumn {
  const n = sourceOrdinal.length;
  // Strings still used by a gathered doc, per source, then one merged dictionary.
  const used = sources.map((column) => (column === null ? null : new Uint8Array(column.dictionary.count)));
  let multi = false;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const s = sourceIndex[i]!;
    const column = sources[s];
    if (column === null || column === undefined) continue;
    const ordinal = sourceOrdinal[i]!;
    const count = column.valueCount(ordinal);
    if (count > 1) multi = true;
    total += count;
    for (let k = 0; k < count; k++) used[s]![column.ordAt(ordinal, k)] = 1;
  }
  const strings = new Set<string>();
  sources.forEach((column, s) => {
    if (column === null) return;
    const mask = used[s]!;
    for (let o = 0; o < mask.length; o++) if (mask[o] === 1) strings.add(column.dictionary.term(o));
  });
  const dictionary = StringDictionary.build([...strings]);
  const remap = sources.map((column, s) => {
    if (column === null) return null;
    const mask = used[s]!;
    const map = new Int32Array(mask.length).fill(-1);
    for (let o = 0; o < mask.length; o++) if (mask[o] === 1) map[o] = dictionary.lookup(column.dictionary.term(o));
    return map;
  });
  const min = new Int32Array(n).fill(-1);
  const max = multi ? new Int32Array(n).fill(-1) : min;
  const offsets = multi ? new Uint32Array(n + 1) : null;
  const ords = multi ? new Int32Array(total) : min;
  let p = 0;
  for (let i = 0; i < n; i++) {
    if (offsets !== null) offsets[i] = p;
    const s = sourceIndex[i]!;
    const column = sources[s];
    if (column === null || column === undefined) continue;
    const map = remap[s]!;
    const ordinal = sourceOrdinal[i]!;
    const count = column.valueCount(ordinal);
    let lo = -1;
    let hi = -1;
    for (let k = 0; k < count; k++) {
      const ord = map[column.ordAt(ordinal, k)]!;
      if (multi) ords[p++] = ord;
      if (lo < 0 || ord < lo) lo = ord;
      if (ord > hi) hi = ord;
    }
    min[i] = lo;
    if (multi) max[i] = hi;
  }
  if (offsets !== null) offsets[n] = p;
  return new StringColumn(n, dictionary, min, max, offsets, ords);
}
