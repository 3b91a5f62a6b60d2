/**
 * Where a version sits in a shard's history, on every copy: the primary term
 * it was written in and the seq that primary gave it. Within a term one
 * primary numbers its changes in order; a newer term's primary started from
 * everything acknowledged before it. So (term, seq) orders every version of a
 * document — across deletions too, where `_version` restarts at 1 (API.md
 * §5.6) and cannot order a re-created document after its deletion.
 */
import type { StoredDocument } from '../documents/types.js';

export interface Origin {
  readonly term: number;
  readonly seq: number;
}

/** The term of versions written before terms were recorded. */
export const FIRST_TERM = 1;

export function originOf(doc: StoredDocument): Origin {
  return { term: doc.term ?? FIRST_TERM, seq: doc.originSeq ?? doc.seq };
}

/** `a` comes after `b` in the shard's history. */
export function isNewer(a: Origin, b: Origin): boolean {
  return a.term > b.term || (a.term === b.term && a.seq > b.seq);
}
