/**
 * Flush: encode a (frozen) write buffer into an immutable segment. Live docs
 * are renumbered in docid order (segment ordinals), terms written in UTF-8
 * byte order, norms and doc values gathered by the new ordinals. Runs in
 * slices of YieldBudget.sliceMs with an await between.
 */
import { gatherNumeric, gatherStrings } from '../values/gather.js';
import { SegmentWriter } from './segment-writer.js';
import type { WriteBuffer } from './write-buffer.js';
import { YieldBudget } from './yield-budget.js';

/** Terms handled between two budget checks. */
const TERMS_PER_CHECK = 256;

export async function flushWriteBuffer(buffer: WriteBuffer, budget = new YieldBudget()): Promise<Uint8Array> {
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
  const names = [...buffer.terms.keys()];
  const encoded = names.map((t) => Buffer.from(t, 'utf8'));
  const byBytes = new Uint32Array(names.length).map((_, i) => i);
  byBytes.sort((a, b) => Buffer.compare(encoded[a]!, encoded[b]!));
  if (budget.due()) await budget.pause();

  let entries = new Int32Array(1024);
  let starts = new Uint32Array(1024);
  for (let t = 0; t < byBytes.length; t++) {
    if (t % TERMS_PER_CHECK === 0 && budget.due()) await budget.pause();
    const name = names[byBytes[t]!]!;
    const postings = buffer.terms.get(name)!;
    const termBytes = encoded[byBytes[t]!]!;
    writer.startTerm(termBytes, termBytes.length, postings.hasPositions);
    const { ordinals, freqs, positions, hasPositions } = postings;
    const positionsArray = hasPositions ? positions : null;
    if (buffer.inDocidOrder) {
      let p = 0;
      for (let i = 0; i < postings.count; i++) {
        const target = newOrdinal[ordinals[i]!]!;
        if (target >= 0) writer.addDoc(target, freqs[i]!, positionsArray, p);
        p += freqs[i]!;
      }
    } else {
      // Out of docid order: sort this term's live postings by their new ordinal.
      if (entries.length < postings.count) {
        entries = new Int32Array(postings.count * 2);
        starts = new Uint32Array(postings.count * 2);
      }
      let m = 0;
      let p = 0;
      for (let i = 0; i < postings.count; i++) {
        starts[i] = p;
        p += freqs[i]!;
        if (newOrdinal[ordinals[i]!]! >= 0) entries[m++] = i;
      }
      const sorted = entries.subarray(0, m).sort((a, b) => newOrdinal[ordinals[a]!]! - newOrdinal[ordinals[b]!]!);
      for (let k = 0; k < m; k++) {
        const i = sorted[k]!;
        writer.addDoc(newOrdinal[ordinals[i]!]!, freqs[i]!, positionsArray, starts[i]!);
      }
    }
    writer.finishTerm();
  }

  for (const field of buffer.fieldNames()) {
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
