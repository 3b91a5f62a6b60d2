/**
 * Text values as runs for the analysis thread (text-analysis.ts), and the
 * rule both sides share for a run's positions and length.
 *
 * A run is one text value analysed into one namespace (a field's prefix, or
 * `''` for global terms). Its first position is the field's `_position`, or
 * — after an earlier value of the same document in that namespace — that
 * value's end plus POSITION_GAP (Xapian's `increase_termpos`). Its length is
 * the positions it took (BM25 field length).
 *
 * The thread answers tokens as ids of its term dictionary (one TermHash, the
 * write buffer's own structure): a term's string crosses threads once, the
 * first time it is seen, instead of once per occurrence.
 */
import { stemTerm, textTerm } from '@tessera/schema';
import { analyzerFor, type AnalyzerOptions, NO_POSITION } from '../analysis/analyzer.js';
import { TermHash } from '../postings/term-hash.js';

/** Position gap between two values of one field (Xapian's `increase_termpos` idiom). */
export const POSITION_GAP = 100;

/** First position of a new value in namespace `prefix` of a document: after the previous value plus the gap, or `start`. */
export function runStart(nextPosition: ReadonlyMap<string, number>, prefix: string, start: number): number {
  const next = nextPosition.get(prefix);
  return next === undefined ? start : next + POSITION_GAP;
}

/**
 * Analyse `text` into namespace `prefix` from position `first`, emitting
 * each term (positions only when `positional`), and record where the next
 * value of the namespace starts. Returns the run's length.
 */
export function analyzeRun(nextPosition: Map<string, number>, analyzer: AnalyzerOptions, text: string, prefix: string, first: number,
  positional: boolean, emit: (term: string, position: number) => void): number {
  const end = analyzerFor(analyzer).analyze(text, (term, position, z) => {
    emit(z ? stemTerm(prefix, term) : textTerm(prefix, term), positional ? position : NO_POSITION);
  }, first);
  if (end > first || !nextPosition.has(prefix)) nextPosition.set(prefix, end);
  return end - first;
}

/** Int32 fields per run in `TextRunsRequest.runs`. */
export const RUN_FIELDS = 5;

/** Documents' text runs, as sent to the analysis thread. */
export interface TextRunsRequest {
  readonly id: number;
  readonly texts: string[];
  /** Per run, RUN_FIELDS ints: document (ascending), analyzer index, prefix index, the field's `_position`, positional (1/0). */
  readonly runs: Int32Array;
  readonly analyzers: AnalyzerOptions[];
  readonly prefixes: string[];
}

/** Tokens of a request's runs as term ids of `dictionary`. */
export interface TextRunsAnswer {
  readonly id: number;
  /** Names the dictionary the ids belong to (a new one when the thread restarts or resets its dictionary). */
  readonly dictionary: string;
  readonly termIds: Int32Array;
  readonly positions: Int32Array;
  /** Per run: the end of its tokens in `termIds`, and its length. */
  readonly runEnds: Int32Array;
  readonly runLengths: Int32Array;
  /** Terms this request added to the dictionary: ids `firstNewId`, `firstNewId + 1`, … */
  readonly newTerms: string[];
  readonly firstNewId: number;
}

/** A term dictionary with a name (answers carry it, so ids are never read against another dictionary). */
/** Terms after which a dictionary is replaced by an empty one (a new name), so hostile input cannot grow it without bound. */
export const DICTIONARY_TERMS_MAX = 1 << 21;

export class NamedDictionary {
  readonly terms = new TermHash();
  constructor(readonly name: string) {}
}

/** Analyse every run of `request` with ids from `dictionary`. */
export function analyzeRuns(request: Omit<TextRunsRequest, 'id'>, dictionary: NamedDictionary): Omit<TextRunsAnswer, 'id'> {
  const { texts, runs, analyzers, prefixes } = request;
  const runCount = runs.length / RUN_FIELDS;
  const firstNewId = dictionary.terms.size;
  let termIds: Int32Array = new Int32Array(1024);
  let positions: Int32Array = new Int32Array(1024);
  let count = 0;
  const runEnds = new Int32Array(runCount);
  const runLengths = new Int32Array(runCount);
  const terms = dictionary.terms;
  const emit = (term: string, position: number): void => {
    if (count === termIds.length) {
      termIds = grow(termIds);
      positions = grow(positions);
    }
    termIds[count] = terms.idOf(term);
    positions[count++] = position;
  };
  const nextPosition = new Map<string, number>();
  let doc = -1;
  for (let r = 0; r < runCount; r++) {
    const at = r * RUN_FIELDS;
    if (runs[at] !== doc) {
      doc = runs[at]!;
      nextPosition.clear();
    }
    const prefix = prefixes[runs[at + 2]!]!;
    const first = runStart(nextPosition, prefix, runs[at + 3]!);
    runLengths[r] = analyzeRun(nextPosition, analyzers[runs[at + 1]!]!, texts[r]!, prefix, first, runs[at + 4] === 1, emit);
    runEnds[r] = count;
  }
  return {
    dictionary: dictionary.name, termIds: termIds.slice(0, count), positions: positions.slice(0, count), runEnds, runLengths,
    newTerms: terms.names.slice(firstNewId), firstNewId,
  };
}

function grow(a: Int32Array): Int32Array {
  const bigger = new Int32Array(a.length * 2);
  bigger.set(a);
  return bigger;
}
