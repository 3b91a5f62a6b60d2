/**
 * The `terms` and `values` of `INFO /idx/<id>` (API.md §5.8), computed from a
 * stored document body with the same function that indexes it
 * (documentTerms), so INFO shows exactly what the shard holds for it.
 *
 * * `terms`: each term name split on `.` into nested keys (`age.<64>.Nc059`
 *   → `terms.age["<64>"].Nc059`), the leaf `{wdf, pos?}`: `wdf` is the
 *   term's occurrences in the document, `pos` its positions when the term is
 *   positional. A term that is also the parent of longer ones (a keyword
 *   holding a `.`) keeps `wdf`/`pos` beside its children. `term_freq` (the
 *   number of documents holding the term) is a property of the index, not of
 *   one document, so it is left out here.
 * * `values`: slot (decimal string) → the value, or the list of values when
 *   the document has several in that slot: 0 `_id`, 1 `_version`, a field's
 *   `_slot` or its hashed slot (schema defaultSlot, §5.8). Strings as they are
 *   indexed (text and keyword values raw), numbers as numbers (dates and
 *   times in seconds, booleans 0/1).
 */
import type { Schema } from '@tessera/schema';
import { NO_POSITION } from '../analysis/analyzer.js';
import { documentTerms } from './document-terms.js';

export interface TermInfo {
  wdf: number;
  pos?: number[];
  [child: string]: unknown;
}

export interface DocumentInfo {
  readonly terms: Record<string, unknown>;
  readonly values: Record<string, unknown>;
}

/** INFO's terms and values of a stored document `body` with ID `id` and `_version` `version`. */
export function documentInfo(schema: Schema, body: unknown, id: string | number, version: number): DocumentInfo {
  const doc = documentTerms(schema, body, id, { version });
  const byTerm = new Map<string, { wdf: number; positions: number[]; positional: boolean }>();
  for (let i = 0; i < doc.terms.length; i++) {
    const term = doc.terms[i]!;
    const position = doc.positions[i]!;
    let entry = byTerm.get(term);
    if (entry === undefined) byTerm.set(term, entry = { wdf: 0, positions: [], positional: true });
    entry.wdf++;
    if (position === NO_POSITION) entry.positional = false;
    else entry.positions.push(position);
  }
  const terms: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const term of [...byTerm.keys()].sort()) {
    const entry = byTerm.get(term)!;
    const leaf = nestedLeaf(terms, term);
    leaf.wdf = entry.wdf;
    if (entry.positional && entry.positions.length > 0) leaf.pos = entry.positions.sort((a, b) => a - b);
  }
  const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const slots: Array<{ slot: number; values: readonly (number | string)[] }> = [...(doc.numbers ?? []), ...(doc.strings ?? [])];
  slots.sort((a, b) => a.slot - b.slot);
  for (const { slot, values: list } of slots) {
    const key = String(slot);
    const existing = values[key];
    // A slot holds one kind of value per field; both kinds only if two fields share a `_slot`.
    const all = existing === undefined ? [...list] : [...(Array.isArray(existing) ? existing : [existing]), ...list];
    values[key] = all.length === 1 ? all[0] : all;
  }
  return { terms: plain(terms), values: plain(values) };
}

/** The object for `term` inside `root`, creating the nested keys its `.`-separated parts name. */
function nestedLeaf(root: Record<string, unknown>, term: string): TermInfo {
  let node = root;
  for (const part of term.split('.')) {
    let next = node[part];
    if (next === undefined || next === null || typeof next !== 'object') {
      next = Object.create(null) as Record<string, unknown>;
      node[part] = next;
    }
    node = next as Record<string, unknown>;
  }
  return node as TermInfo;
}

/** Null-prototype maps (term parts like `__proto__` are data) back to plain objects for the codecs. */
function plain(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) Object.defineProperty(out, key, { value: plain(v as Record<string, unknown>), enumerable: true, writable: true, configurable: true });
    else Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
