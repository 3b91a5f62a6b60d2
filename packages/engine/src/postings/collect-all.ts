/**
 * Test helper: drain a postings iterator into plain arrays (allocates; never
 * use it on a query path).
 */
import { NO_MORE_DOCS } from './constants.js';

/** What both postings iterators offer. */
export interface DocIterator {
  docid: number;
  freq: number;
  next(): number;
  advance(target: number): number;
  positions(): Int32Array;
  readonly withPositions: boolean;
}

export interface CollectedPosting {
  docid: number;
  freq: number;
  /** Present when `withPositions` was asked; empty for terms without positions. */
  positions?: number[];
}

export function collectAll(iterator: DocIterator, withPositions = false): CollectedPosting[] {
  const out: CollectedPosting[] = [];
  for (let docid = iterator.next(); docid !== NO_MORE_DOCS; docid = iterator.next()) {
    const posting: CollectedPosting = { docid, freq: iterator.freq };
    if (withPositions) posting.positions = iterator.withPositions ? Array.from(iterator.positions().subarray(0, iterator.freq)) : [];
    out.push(posting);
  }
  return out;
}
