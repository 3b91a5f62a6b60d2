/**
 * Test helpers around IndexableDocument's flat token lists: build one from
 * terms with their positions, and read one back per term, as the write
 * buffer indexes it.
 */
import { NO_TOKEN_POSITION, type IndexableDocument } from './write-buffer.js';

/** A term of a document: its positions, or null with a frequency (default 1). */
export interface TermOccurrences {
  readonly term: string;
  readonly positions: readonly number[] | null;
  readonly freq?: number;
}

/** A document from per-term occurrences (tokens listed term after term). */
export function tokenDocument(terms: readonly TermOccurrences[], rest: Omit<IndexableDocument, 'terms' | 'positions'> = {}): IndexableDocument {
  const tokens: string[] = [];
  const positions: number[] = [];
  for (const t of terms) {
    if (t.positions === null) {
      for (let k = 0; k < (t.freq ?? 1); k++) {
        tokens.push(t.term);
        positions.push(NO_TOKEN_POSITION);
      }
      continue;
    }
    for (const p of t.positions) {
      tokens.push(t.term);
      positions.push(p);
    }
  }
  return { terms: tokens, positions, ...rest };
}

/** Per term: frequency, and ascending positions unless an occurrence had none (null). */
export function termsOfDocument(doc: IndexableDocument): Map<string, { freq: number; positions: number[] | null }> {
  const out = new Map<string, { freq: number; positions: number[] | null }>();
  doc.terms.forEach((term, i) => {
    const position = doc.positions[i]!;
    const entry = out.get(term);
    if (entry === undefined) {
      out.set(term, { freq: 1, positions: position < 0 ? null : [position] });
      return;
    }
    entry.freq++;
    entry.positions = entry.positions === null || position < 0 ? null : [...entry.positions, position];
  });
  for (const entry of out.values()) entry.positions?.sort((a, b) => a - b);
  return out;
}
