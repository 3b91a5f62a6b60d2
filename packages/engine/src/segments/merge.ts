/**
 * Merge: several segments → one, dropping deleted docs. Docids are global to
 * the shard, so the merged docids are the union of the inputs' live docids
 * (a k-way merge; a docid live in two inputs is a bug, since adding a docid
 * deletes its older copies) and ordinals are renumbered. Terms are merged in
 * byte order; a term's postings are a k-way merge by docid, copying
 * frequencies and positions. A term keeps positions only if every input that
 * has it has them.
 *
 * Runs in slices (YieldBudget) with an await between, so a merge on the main
 * thread never holds the event loop for longer than one slice. The shard runs
 * it on the segment worker (background.ts), where nothing else waits.
 */
import assert from 'node:assert/strict';
import { NO_MORE_DOCS } from '../postings/constants.js';
import { PostingsIterator } from '../postings/postings-iterator.js';
import type { Bitset } from '../values/bitset.js';
import { gatherNumeric, gatherStrings } from '../values/gather.js';
import { compareBytes } from '../values/string-dictionary.js';
import type { SegmentReader } from './segment-reader.js';
import { SegmentWriter } from './segment-writer.js';
import type { TermsIterator } from './term-dictionary.js';
import { YieldBudget } from './yield-budget.js';

const TERMS_PER_CHECK = 128;

/**
 * Encode the merge of `readers`, leaving out the ordinals set in `deleted[i]`
 * (default: each reader's current deletions; pass snapshots to merge a
 * consistent state while deletes go on).
 */
export async function mergeSegments(readers: readonly SegmentReader[], deleted?: readonly Bitset[], budget = new YieldBudget()): Promise<Uint8Array> {
  assert.ok(readers.length >= 1 && readers.length < 0xffff, 'merge needs 1 to 65,534 segments');
  const dels = deleted ?? readers.map((r) => r.deleted);
  const k = readers.length;

  // 1. Merged docids: k-way merge of live docids.
  let total = 0;
  for (let r = 0; r < k; r++) total += readers[r]!.docCount - dels[r]!.count();
  const docids = new Uint32Array(total);
  const sourceIndex = new Uint16Array(total);
  const sourceOrdinal = new Uint32Array(total);
  const newOrdinal = readers.map((r) => new Int32Array(r.docCount).fill(-1));
  const cursor = new Int32Array(k);
  const nextLive = (r: number): void => {
    const reader = readers[r]!;
    let c = cursor[r]!;
    while (c < reader.docCount && dels[r]!.has(c)) c++;
    cursor[r] = c;
  };
  for (let r = 0; r < k; r++) nextLive(r);
  for (let i = 0; i < total; i++) {
    let best = -1;
    let bestDocid = NO_MORE_DOCS;
    for (let r = 0; r < k; r++) {
      const c = cursor[r]!;
      if (c >= readers[r]!.docCount) continue;
      const d = readers[r]!.docids[c]!;
      assert.ok(d !== bestDocid, 'a docid is live in two segments');
      if (d < bestDocid) {
        bestDocid = d;
        best = r;
      }
    }
    docids[i] = bestDocid;
    sourceIndex[i] = best;
    sourceOrdinal[i] = cursor[best]!;
    newOrdinal[best]![cursor[best]!] = i;
    cursor[best]! += 1;
    nextLive(best);
    if ((i & 0xfff) === 0 && budget.due()) await budget.pause();
  }
  const writer = new SegmentWriter(docids);

  // 2. Terms: k-way merge of the dictionaries.
  const terms: TermsIterator[] = readers.map((r) => r.terms(''));
  const has = new Uint8Array(k);
  for (let r = 0; r < k; r++) has[r] = terms[r]!.next() ? 1 : 0;
  const iterators = readers.map(() => new PostingsIterator());
  const active = new Int32Array(k);
  let termsDone = 0;
  for (;;) {
    // The smallest current term and the inputs holding it.
    let smallest = -1;
    for (let r = 0; r < k; r++) {
      if (has[r] === 0) continue;
      if (smallest < 0) {
        smallest = r;
        continue;
      }
      const a = terms[r]!;
      const b = terms[smallest]!;
      if (compareBytes(a.termBytes, 0, a.termLength, b.termBytes, b.termLength) < 0) smallest = r;
    }
    if (smallest < 0) break;
    const s = terms[smallest]!;
    let activeCount = 0;
    let hasPositions = true;
    for (let r = 0; r < k; r++) {
      if (has[r] === 0) continue;
      const t = terms[r]!;
      if (compareBytes(t.termBytes, 0, t.termLength, s.termBytes, s.termLength) !== 0) continue;
      active[activeCount++] = r;
      if (!t.info.hasPositions) hasPositions = false;
      iterators[r]!.reset(readers[r]!, t.info).next();
    }
    writer.startTerm(s.termBytes, s.termLength, hasPositions);
    for (;;) {
      let best = -1;
      let bestDocid = NO_MORE_DOCS;
      for (let a = 0; a < activeCount; a++) {
        const d = iterators[active[a]!]!.docid;
        if (d < bestDocid) {
          bestDocid = d;
          best = active[a]!;
        }
      }
      if (best < 0) break;
      const it = iterators[best]!;
      const target = newOrdinal[best]![it.ordinal]!;
      if (target >= 0) writer.addDoc(target, it.freq, hasPositions ? it.positions() : null, 0);
      it.next();
    }
    writer.finishTerm();
    for (let a = 0; a < activeCount; a++) has[active[a]!] = terms[active[a]!]!.next() ? 1 : 0;
    if (++termsDone % TERMS_PER_CHECK === 0 && budget.due()) await budget.pause();
  }

  // 3. Norms and field statistics, recomputed over the kept docs.
  const fields = new Set<string>();
  for (const r of readers) for (const f of r.fieldNames()) fields.add(f);
  for (const field of [...fields].sort()) {
    const sources = readers.map((r) => r.fieldNorms(field));
    const norms = new Uint16Array(total);
    let docCount = 0;
    let sumLength = 0;
    for (let i = 0; i < total; i++) {
      const src = sources[sourceIndex[i]!];
      const length = src === null || src === undefined ? 0 : src[sourceOrdinal[i]!]!;
      norms[i] = length;
      if (length > 0) {
        docCount++;
        sumLength += length;
      }
    }
    writer.addField(field, norms, docCount, sumLength);
  }
  if (budget.due()) await budget.pause();

  // 4. Doc values.
  const numericSlots = new Set<number>();
  const stringSlots = new Set<number>();
  for (const r of readers) {
    for (const slot of r.numericSlots()) numericSlots.add(slot);
    for (const slot of r.stringSlots()) stringSlots.add(slot);
  }
  for (const slot of numericSlots) writer.addNumeric(slot, gatherNumeric(readers.map((r) => r.numericColumn(slot)), sourceIndex, sourceOrdinal));
  for (const slot of stringSlots) writer.addStrings(slot, gatherStrings(readers.map((r) => r.stringColumn(slot)), sourceIndex, sourceOrdinal));
  if (budget.due()) await budget.pause();
  return writer.finish();
}
