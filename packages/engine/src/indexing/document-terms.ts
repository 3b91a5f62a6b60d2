/**
 * A stored document → what the write buffer indexes (API.md §5.8, §8.1–§8.4):
 * terms (with positions for text), field lengths, and value columns. Every
 * term name comes from @tessera/schema's terms.ts, the functions the query
 * side uses, so both meet on the same strings.
 *
 * Per `_index` mode of each value (INTERFACE table):
 *
 * | part          | text                                         | keyword / boolean          | integer, positive, floating, date, datetime |
 * |---------------|----------------------------------------------|----------------------------|---------------------------------------------|
 * | field terms   | `<prefix>S<token>` with positions, `Z<prefix>S<stem>` | `<prefix>K<kw>`, `<prefix>Bt` | `<prefix>N<tok>` + `<prefix><hex step>.N<bucket>` |
 * | global terms  | `S<token>`, `ZS<stem>`                        | `K<kw>`, `Bt`              | `N<tok>` + `<hex step>.N<bucket>`             |
 * | field values  | string at `spec.slot`                        | keyword string / boolean 0-1 number at `spec.slot` | number (dates: epoch seconds) at `spec.slot` |
 * | global values | the same at `globalValueSlot(typeChar)`       |                            |                                             |
 *
 * Positions: per term namespace (a field prefix, or `''` for global terms)
 * positions start at the field's `_position` and continue across the values
 * of an array (and, for global terms, across fields) with a gap of
 * POSITION_GAP, like Xapian's `increase_termpos`. Field lengths (BM25) are
 * the positions used, keyed by `spec.prefix`; global text gets the field `''`.
 * `_weight` is not folded into frequencies: BM25 weighs fields at query time.
 *
 * Schema growth: the caller passes the shard's schema. When folding would
 * grow it (`changed`: the body has fields the schema lacks, e.g. a schema
 * update that has not reached this shard yet), only values of fields the
 * given schema already types are indexed; new fields are left out rather than
 * defining them here, since the coordinator owns schema changes.
 */
import {
  accuracyTerms, fieldSpec, fieldTerm, type FieldSpec, globalTerm, type IndexedValue, indexedValues,
  isDateType, isNumericType, parseType, type Schema, TYPE_CHARS, valueToken,
} from '@tessera/schema';
import { type AnalyzerOptions, NO_POSITION } from '../analysis/analyzer.js';
import { addGeoAccuracyTerms } from './geo-terms.js';
import { type DeferredText, type RunBatch, textBatch } from './text-analysis.js';
import { analyzeRun, runStart } from './text-runs.js';

export { POSITION_GAP } from './text-runs.js';
import type { IndexableDocument } from '../segments/write-buffer.js';

/** API.md §5.8: value slot of `_id` (strings, or numbers for numeric IDs). */
export const ID_SLOT = 0;
/** API.md §5.8: value slot of `_version` (numbers). */
export const VERSION_SLOT = 1;

/**
 * Slots of global values (`_index: global_values`), one per type char, in
 * the range API.md §5.8 reserves (< 20; 0 and 1 are `_id` and `_version`).
 * Strings (text, keyword) and numbers live in separate columns, so a slot
 * number names a column of one kind only.
 */
export const GLOBAL_VALUE_SLOTS: Readonly<Record<string, number>> = { S: 10, K: 11, N: 12, B: 13, D: 14, T: 15, U: 16, G: 17 };

/** The global value slot of a type char (`S`, `K`, `N`, `B`, `D`, `T`, `U`, `G`). */
export function globalValueSlot(typeChar: string): number {
  const slot = GLOBAL_VALUE_SLOTS[typeChar];
  if (slot === undefined) throw new RangeError(`no global value slot for type char '${typeChar}'`);
  return slot;
}

/** Type char and token of a document ID: `_id`'s `_type` in the schema, else `K` for strings, `N` for numbers. */
function idSpec(schema: Schema, id: string | number): Pick<FieldSpec, 'type' | 'typeChar' | 'boolTerm'> {
  const node = schema._id as Record<string, unknown> | undefined;
  const declared = node !== undefined && typeof node._type === 'string' ? parseType(node._type, '_id').base : undefined;
  const type = declared !== undefined && declared !== 'object' ? declared : typeof id === 'number' ? 'integer' : 'keyword';
  // A numeric type with a string ID (or the reverse) keeps the ID as text: exact, like `_bool_term`.
  const numeric = isNumericType(type) || isDateType(type);
  if (numeric !== (typeof id === 'number')) return { type: 'keyword', typeChar: TYPE_CHARS[type], boolTerm: true };
  return { type, typeChar: TYPE_CHARS[type], boolTerm: true };
}

/** The ID term of a document (API.md §5.8): `Q` + type char + ID (`QKdoc`); `_id` is a `_bool_term` (exact case). */
export function idTerm(schema: Schema, id: string | number): string {
  return `Q${valueToken(idSpec(schema, id), id)}`;
}

/** Token lists of the document being collected: scratch reused across documents (collection is synchronous). */
const scratchTerms: string[] = [];
const scratchPositions: number[] = [];
/** Scratch length beyond which it is released after the document. */
const SCRATCH_TOKENS_KEPT = 65_536;

/** What one document yields, collected value by value; one instance reused for every document (`reset`). */
class DocumentCollector {
  /** Text values go to the analysis thread (documentTerms' `deferText`). */
  batch: RunBatch | undefined;
  text: DeferredText | undefined;
  /** Tokens collected into the scratch lists. */
  tokens = 0;
  /** Next free position per namespace (field prefix, `''` = global). */
  readonly nextPosition = new Map<string, number>();
  /** Token count per field prefix. */
  readonly lengths = new Map<string, number>();
  readonly numbers = new Map<number, number[]>();
  readonly strings = new Map<number, string[]>();

  /** Start a document. */
  reset(deferText: boolean): this {
    this.batch = deferText ? textBatch() : undefined;
    this.text = undefined;
    this.tokens = 0;
    this.nextPosition.clear();
    this.lengths.clear();
    this.numbers.clear();
    this.strings.clear();
    return this;
  }

  /** A token; NO_POSITION for terms without one (the write buffer drops a term's positions if any occurrence has none). */
  add(term: string, position: number): void {
    scratchTerms[this.tokens] = term;
    scratchPositions[this.tokens] = position;
    this.tokens++;
  }

  number(slot: number, value: number): void {
    const list = this.numbers.get(slot);
    if (list === undefined) this.numbers.set(slot, [value]);
    else list.push(value);
  }

  string(slot: number, value: string): void {
    const list = this.strings.get(slot);
    if (list === undefined) this.strings.set(slot, [value]);
    else list.push(value);
  }

  result(): IndexableDocument {
    const fieldLengths: Array<{ field: string; length: number }> = [];
    for (const [field, length] of this.lengths) fieldLengths.push({ field, length });
    const numbers: Array<{ slot: number; values: number[] }> = [];
    for (const [slot, values] of this.numbers) numbers.push({ slot, values });
    const strings: Array<{ slot: number; values: string[] }> = [];
    for (const [slot, values] of this.strings) strings.push({ slot, values });
    const terms = scratchTerms.slice(0, this.tokens);
    const positions = scratchPositions.slice(0, this.tokens);
    // Don't keep a huge document's terms alive in the scratch.
    if (scratchTerms.length > SCRATCH_TOKENS_KEPT) scratchTerms.length = scratchPositions.length = 0;
    return this.text === undefined ? { terms, positions, fieldLengths, numbers, strings } : { terms, positions, fieldLengths, numbers, strings, text: this.text };
  }
}

/** The collector of `documentTerms` (synchronous: one document at a time). */
const collector = new DocumentCollector();

/**
 * One text value into namespace `prefix` (a field's, or `''`), positional
 * terms only when `positional`: analysed now, or queued for the analysis
 * thread (its length then arrives with its terms).
 */
function indexText(c: DocumentCollector, spec: FieldSpec, text: string, prefix: string, positional: boolean): void {
  const analyzer = analyzerOptionsOf(spec);
  if (c.batch !== undefined) {
    c.batch.run(c.text ??= c.batch.document(), analyzer, prefix, spec.position, positional, text);
    return;
  }
  const n = analyzeRun(c.nextPosition, analyzer, text, prefix, runStart(c.nextPosition, prefix, spec.position), positional, (term, position) => c.add(term, position));
  c.lengths.set(prefix, (c.lengths.get(prefix) ?? 0) + n);
}

/** A field's analyzer options, one object per spec (an analysis batch tells analyzers apart by identity). */
const ANALYZER_OPTIONS = new WeakMap<FieldSpec, AnalyzerOptions>();

export function analyzerOptionsOf(spec: FieldSpec): AnalyzerOptions {
  let options = ANALYZER_OPTIONS.get(spec);
  if (options === undefined) {
    options = { language: spec.stemLanguage ?? spec.language, stemStrategy: spec.stemStrategy, stopStrategy: spec.stopStrategy };
    ANALYZER_OPTIONS.set(spec, options);
  }
  return options;
}

function addValue(c: DocumentCollector, v: IndexedValue): void {
  const spec = v.spec;
  const index = spec.index;
  const value = v.value;
  if (spec.type === 'text') {
    const text = String(value);
    if (index.fieldTerms) indexText(c, spec, text, spec.prefix, spec.positions);
    if (index.globalTerms) indexText(c, spec, text, '', spec.positions);
    if (index.fieldValues) c.string(spec.slot, text);
    if (index.globalValues) c.string(globalValueSlot(spec.typeChar), text);
    return;
  }
  if (index.fieldTerms) c.add(fieldTerm(spec, value), NO_POSITION);
  if (index.globalTerms) c.add(globalTerm(spec, value), NO_POSITION);
  if (spec.type === 'geo') addGeoAccuracyTerms(c, spec, value as string);
  // Numbers, dates and times (seconds) have accuracy terms; other types have no accuracy.
  if (typeof value === 'number') {
    if (index.fieldTerms) for (const t of accuracyTerms(spec, value)) c.add(t, NO_POSITION);
    if (index.globalTerms) for (const t of accuracyTerms(spec, value, '')) c.add(t, NO_POSITION);
  }
  if (!index.fieldValues && !index.globalValues) return;
  if (typeof value === 'string') {
    // Keywords and UUIDs: exact strings.
    const s = value;
    if (index.fieldValues) c.string(spec.slot, s);
    if (index.globalValues) c.string(globalValueSlot(spec.typeChar), s);
    return;
  }
  const n = spec.type === 'boolean' ? (value === true ? 1 : 0) : (value as number);
  if (index.fieldValues) c.number(spec.slot, n);
  if (index.globalValues) c.number(globalValueSlot(spec.typeChar), n);
}

export interface DocumentTermsOptions {
  /** `_version`, kept as a number at VERSION_SLOT when given. */
  readonly version?: number;
  /** Epoch seconds of `now` for date math in the body (stored forms have none; for completeness). */
  readonly now?: number;
  /** Analyse text values on the analysis thread (text-analysis.ts): the result's `text` resolves later. */
  readonly deferText?: boolean;
}

/**
 * Terms, lengths and values of a stored document body. Throws the schema's
 * 400 errors when the body does not fit the schema (a stored body normally
 * does: the coordinator folded it into the same schema before storing it).
 */
export function documentTerms(schema: Schema, body: unknown, id: string | number, options: DocumentTermsOptions = {}): IndexableDocument {
  const folded = indexedValues(schema, body, options.now === undefined ? {} : { now: options.now });
  const c = collector.reset(options.deferText === true);
  c.add(idTerm(schema, id), NO_POSITION);
  if (typeof id === 'number') c.number(ID_SLOT, id);
  else c.string(ID_SLOT, id);
  if (options.version !== undefined) c.number(VERSION_SLOT, options.version);
  let known: Map<string, boolean> | undefined;
  for (const v of folded.values) {
    if (folded.changed) {
      known ??= new Map();
      let has = known.get(v.path);
      if (has === undefined) known.set(v.path, (has = fieldSpec(schema, v.path) !== undefined));
      if (!has) continue;
    }
    addValue(c, v);
  }
  return c.result();
}
