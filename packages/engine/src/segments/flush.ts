/**
 * Flush: encode a (frozen) write buffer into an immutable segment. Live docs
 * are renumbered in docid order (segment ordinals), terms written in UTF-8
 * byte order, norms and doc values gathered by the new ordinals. Runs in
 * slices of YieldBudget.sliceMs with an await between; the shard runs it on
 * the segment worker (background.ts) over the buffer's snapshot.
 */
import { BufferedPostings, DecodedTerm, PostingsCursor } from '../postings/buffered-postings.js';
import { gatherNumeric, gatherStrings } from '../values/gather.js';
import { SegmentWriter } from './segment-writer.js';
import { NumericColumn } from '../values/numeric-column.js';
import type { StringColumn } from '../values/string-column.js';
import { buildStringColumn } from '../values/column-builder.js';
import { unpackStrings } from '../values/packed-strings.js';
import { exactFieldLength, type FlushSnapshot } from './write-buffer.js';
import { YieldBudget } from './yield-budget.js';

/** What a flush reads of a frozen write buffer: the WriteBuffer itself, or its snapshot on the segment worker. */
export interface FlushSource {
  readonly docCount: number;
  readonly deleted: Uint8Array;
  readonly inDocidOrder: boolean;
  readonly docidOf: Uint32Array;
  readonly postings: BufferedPostings;
  fieldNames(): string[];
  fieldNorms(field: string): Uint16Array | null;
  fieldLength(field: string, ordinal: number): number;
  numericSlots(): number[];
  numericColumn(slot: number): NumericColumn | null;
  stringSlots(): number[];
  stringColumn(slot: number): StringColumn | null;
}

/** Terms handled between two budget checks. */
const TERMS_PER_CHECK = 256;

/** A FlushSource over a write buffer's snapshot (WriteBuffer.flushSnapshot), on the thread that received it. */
export function flushSourceOf(s: FlushSnapshot): FlushSource {
  const fields = new Map(s.fields.map((f) => [f.name, f]));
  const numeric = new Map(s.numeric.map((c) => [c.slot, new NumericColumn(c.docCount, c.min, c.max, c.offsets, c.values)]));
  const strings = new Map(s.strings.map((c) => [c.slot, buildStringColumn({ ...c, strings: unpackStrings(c.strings) })]));
  return {
    docCount: s.docCount,
    deleted: s.deleted,
    inDocidOrder: s.inDocidOrder,
    docidOf: s.docidOf,
    postings: BufferedPostings.fromSnapshot(s.postings),
    fieldNames: () => [...fields.keys()],
    fieldNorms: (field) => fields.get(field)?.lengths ?? null,
    fieldLength: (field, ordinal) => {
      const f = fields.get(field);
      return f === undefined || ordinal >= f.lengths.length ? 0 : exactFieldLength(f, ordinal);
    },
    numericSlots: () => [...numeric.keys()],
    numericColumn: (slot) => numeric.get(slot) ?? null,
    stringSlots: () => [...strings.keys()],
    stringColumn: (slot) => strings.get(slot) ?? null,
  };
}

export async function flushWriteBuffer(buffer: FlushSource, budget = new YieldBudget()): Promise<Uint8Array> {
  const n = buffer.docCount;
  // Live ordinals in docid order → segment ordinals.
  const live: number[] = [];
  for (let o = 0; o < n; o++) if (buffer.deleted[o] === 0) live.push(o);
  if (!buffer.inDocidOrder) live.sort((a, b) => buffer.docidOf[a]! - buffer.docidOf[b]!);
  const count = live.length;
  const order = new Uint32Array(live);
  const newOrdinal = new Int32Array(n).fill(-1);
  const docids = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    newOrdinal[order[i]!] = i;
    docids[i] = buffer.docidOf[order[i]!]!;
  }
  const writer = new SegmentWriter(docids);

  // Terms in UTF-8 byte order.
  const postings = buffer.postings;
  const names = postings.names;
  const byBytes = termIdsInByteOrder(postings);
  if (budget.due()) await budget.pause();
  let termBytes = Buffer.allocUnsafe(256);

  const cursor = new PostingsCursor();
  const decoded = new DecodedTerm();
  let positions = new Int32Array(256);
  let entries = new Int32Array(1024);
  for (let t = 0; t < byBytes.length; t++) {
    if (t % TERMS_PER_CHECK === 0 && budget.due()) await budget.pause();
    const id = byBytes[t]!;
    const name = names[id]!;
    if (termBytes.length < name.length * 3) termBytes = Buffer.allocUnsafe(name.length * 3);
    const termLength = termBytes.write(name, 0, 'utf8');
    if (buffer.inDocidOrder) {
      cursor.reset(postings, id);
      const hasPositions = cursor.withPositions;
      writer.startTerm(termBytes, termLength, hasPositions);
      while (cursor.next()) {
        const target = newOrdinal[cursor.ordinal]!;
        if (target < 0) continue;
        if (hasPositions) {
          if (positions.length < cursor.freq) positions = new Int32Array(Math.max(cursor.freq, positions.length * 2));
          cursor.readPositions(positions);
        }
        writer.addDoc(target, cursor.freq, hasPositions ? positions : null, 0);
      }
    } else {
      // Out of docid order: sort this term's live postings by their new ordinal.
      decoded.decode(postings, id, true);
      writer.startTerm(termBytes, termLength, decoded.withPositions);
      if (entries.length < decoded.count) entries = new Int32Array(decoded.count * 2);
      const ordinals = decoded.ordinals;
      let m = 0;
      for (let i = 0; i < decoded.count; i++) if (newOrdinal[ordinals[i]!]! >= 0) entries[m++] = i;
      const sorted = entries.subarray(0, m).sort((a, b) => newOrdinal[ordinals[a]!]! - newOrdinal[ordinals[b]!]!);
      const positionsArray = decoded.withPositions ? decoded.positions : null;
      for (let k = 0; k < m; k++) {
        const i = sorted[k]!;
        writer.addDoc(newOrdinal[ordinals[i]!]!, decoded.freqs[i]!, positionsArray, decoded.positionsStart[i]!);
      }
    }
    writer.finishTerm();
  }

  // Sorted: the segment's bytes do not depend on the order fields were first met.
  for (const field of buffer.fieldNames().sort()) {
    const lengths = buffer.fieldNorms(field)!;
    const norms = new Uint16Array(count);
    let docCount = 0;
    let sumLength = 0;
    for (let i = 0; i < count; i++) {
      const o = order[i]!;
      norms[i] = o < lengths.length ? lengths[o]! : 0;
      const exact = buffer.fieldLength(field, o);
      if (exact > 0) {
        docCount++;
        sumLength += exact;
      }
    }
    writer.addField(field, norms, docCount, sumLength);
  }
  const single = new Uint8Array(count);
  for (const slot of buffer.numericSlots()) writer.addNumeric(slot, gatherNumeric([buffer.numericColumn(slot)], single, order));
  for (const slot of buffer.stringSlots()) writer.addStrings(slot, gatherStrings([buffer.stringColumn(slot)], single, order));
  if (budget.due()) await budget.pause();
  return writer.finish();
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** The buffer's term ids sorted by their names' UTF-8 bytes. */
function termIdsInByteOrder(postings: BufferedPostings): Uint32Array {
  const names = postings.names;
  const ids = new Uint32Array(names.length);
  if (!names.some((name) => SURROGATE.test(name))) {
    // Without surrogates UTF-16 unit order (the default sort, no comparator call) is code point order, i.e. UTF-8 byte order.
    const sorted = names.slice().sort();
    for (let i = 0; i < ids.length; i++) ids[i] = postings.termId(sorted[i]!);
    return ids;
  }
  // Astral characters (and lone surrogates, encoded as U+FFFD): compare the bytes themselves.
  for (let i = 0; i < ids.length; i++) ids[i] = i;
  const encoded = names.map((name) => Buffer.from(name, 'utf8'));
  return ids.sort((a, b) => Buffer.compare(encoded[a]!, encoded[b]!));
}
