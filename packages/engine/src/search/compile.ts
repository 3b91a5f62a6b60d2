/**
 * Query (shard-independent AST, @tessera/search-model query/ast.ts) → Weight, with the index
 * schema and the search's Statistics. Every term is named with
 * @tessera/schema's term functions, as the indexing side names them:
 *
 * - text: `textTerm(prefix, token)`, stems `stemTerm(prefix, stem)`, tokens
 *   from the field's analyzer (analysis/ analyzeQueryTerm rules); BM25 with
 *   the field length keyed by the prefix in fieldNorms/fieldStats, times `_weight`;
 * - keyword, numbers, dates, booleans: `fieldTerm(spec, value)` (weight 0, §9.3);
 * - accuracy buckets: `<prefix><hex step>.<type char><token>` (accuracyPrefix);
 * - global leaves: the same without the field prefix (`globalTerm`, `textTerm('')`);
 * - `_id`: `Q` + type char + token, the value as `_bool_term` (exact case).
 *
 * An unknown field or an unconvertible value matches nothing (no error).
 * Fuzzy words (`t~N`) expand over the dictionaries (fuzzy.ts) into a
 * synonym (synonym.ts); `_elite_set` keeps the subqueries of highest
 * estimated weight (elite-set.ts); `_synonym` weighs as one term.
 */
import { analyzerOptionsOf, ID_SLOT, idTerm as documentIdTerm } from '../indexing/document-terms.js';
import {
  accuracyBucket, accuracyPrefix, accuracyTypeChar, convertValue, DATE_UNIT_SECONDS, fieldSpec, fieldTerm, isDateType, isNumericType, parseType,
  searchableFields, sortableNumber, sortableToken, stemTerm, textTerm, TYPE_CHARS,
  type DateUnit, type FieldSpec, type IndexValue, type Schema, type ScalarType,
} from '@tessera/schema';
import { analyzerFor, type Analyzer, type AnalyzerOptions, type QueryTerm } from '../analysis/analyzer.js';
import { type LeafValue, type Pattern, type Query, queryErrors, type RangeEnd, type TextNode } from '@tessera/search-model';
import { compareCodePoints } from '../segments/write-buffer.js';
import { castFor, checkCast } from './casts.js';
import { eliteSet } from './elite-set.js';
import { expandFuzzy } from './fuzzy.js';
import { geoShapeWeight, globalGeoShapeWeight } from './geo-weight.js';
import { PROXIMITY_WINDOW } from '../scorers/positional-scorer.js';
import { visitTerms } from './reader.js';
import { SynonymWeight } from './synonym.js';
import {
  ALL_WEIGHT, BoolWeight, NONE_WEIGHT, PositionalWeight, TermListWeight, TermUnionWeight, TermWeight, ValueWeight,
  type BoolWeightOp, type Statistics, type Weight,
} from './weight.js';

/** `t**` expands to at most this many terms, most frequent first (API.md §9.3.1). */
export const PREFIX_EXPANSIONS_MAX = 50;
/** `t*` wildcards on text expand to at most this many terms (most frequent first): each is a BM25 iterator in a heap. */
export const WILDCARD_EXPANSIONS_MAX = 1000;

/** Slot of `_id` values (API.md §5.8), where indexing puts them. */
export { ID_SLOT };

/** Where text terms live and how they are analysed and weighed. */
interface TextContext {
  /** Field prefix (`''` for global terms). */
  readonly prefix: string;
  readonly analyzer: Analyzer;
  /** `_weight` of the field. */
  readonly factor: number;
  /** Key of the field's lengths in fieldNorms/fieldStats. */
  readonly normsKey: string;
}

const GLOBAL_ANALYZER: AnalyzerOptions = { stemStrategy: 'stem_none', stopStrategy: 'stop_none' };

/** A weight, or null for a text item that analysed to nothing (a dropped stop word: no constraint). */
type TextWeight = Weight | null;

export class QueryCompiler {
  constructor(private readonly schema: Schema, private readonly stats: Statistics) {}

  compile(query: Query): Weight {
    switch (query.kind) {
      case 'all':
        return ALL_WEIGHT;
      case 'none':
        return NONE_WEIGHT;
      case 'field':
        return this.field(query.path, query.value);
      case 'bool': {
        const children = query.children.map((c) => this.compile(c));
        const op = query.op;
        if (op === 'elite_set') return eliteSet(children, this.stats);
        if (op === 'synonym') return new SynonymWeight(children, this.stats);
        return new BoolWeight(op, children);
      }
    }
  }

  // ---- field leaves ------------------------------------------------------

  private field(path: readonly string[] | null, value: LeafValue): Weight {
    if (path === null) return this.global(value);
    if (path.length === 1 && path[0] === '_id') return this.id(value);
    const spec = fieldSpec(this.schema, path.join('.'));
    if (spec === undefined) return NONE_WEIGHT;
    switch (value.kind) {
      case 'exists':
        return this.exists(spec);
      case 'scalar':
        return this.equal(spec, value.value);
      case 'string':
        return this.string(spec, value);
      case 'cast': {
        checkCast(value.cast, spec);
        const casted = castFor(value.cast, value.value, spec.type);
        return casted === undefined ? NONE_WEIGHT : this.equal(spec, casted);
      }
      case 'date_parts': {
        const casted = convert('datetime', { _datetime: value.parts });
        return casted === undefined ? NONE_WEIGHT : this.equal(spec, casted);
      }
      case 'range':
        return this.range(spec, value.from, value.to);
      case 'shape': {
        const geo = geoShapeWeight(spec, value, this.stats);
        return 'castText' in geo ? this.equal(spec, geo.castText) : geo;
      }
    }
  }

  private string(spec: FieldSpec, leaf: Extract<LeafValue, { kind: 'string' }>): Weight {
    if (spec.type === 'text') return this.text(leaf.text, textContext(spec)) ?? NONE_WEIGHT;
    if (spec.type === 'keyword') return this.keyword(spec, leaf.keyword);
    if (leaf.keyword.match !== 'exact') {
      throw queryErrors.invalidQuery(`Patterns apply to text and keyword fields only, not to ${spec.path} (${spec.type})`);
    }
    return this.equal(spec, leaf.value);
  }

  /** Equality with a converted value (§9.3 "scalar"): text → text query; others exact term or value. */
  private equal(spec: FieldSpec, raw: IndexValue): Weight {
    if (spec.type === 'text') return this.text(plainText(String(raw)), textContext(spec)) ?? NONE_WEIGHT;
    const value = convert(spec.type, raw);
    if (value === undefined) return NONE_WEIGHT;
    // A field indexed without terms is not matched by a term query (its values still sort and range).
    return spec.index.fieldTerms ? new TermWeight(fieldTerm(spec, value), null, '', 0) : NONE_WEIGHT;
  }

  /** Whole keyword values: exact (lower-cased unless `_bool_term`), `v*` wildcard, `v**` prefix, `v~N` fuzzy. */
  private keyword(spec: FieldSpec, pattern: Pattern): Weight {
    if (!spec.index.fieldTerms) {
      return pattern.match === 'exact' ? this.equal(spec, pattern.text) : NONE_WEIGHT;
    }
    const text = spec.boolTerm ? pattern.text : pattern.text.toLowerCase();
    return this.keywordPattern(spec.prefix + spec.typeChar, text, pattern);
  }

  /** Weight-0 keyword terms `base + token` matching `pattern` (`text`: its token, case already folded). */
  private keywordPattern(base: string, text: string, pattern: Pattern): Weight {
    switch (pattern.match) {
      case 'exact':
        return new TermWeight(base + text, null, '', 0);
      case 'fuzzy':
        return new TermListWeight(expandFuzzy(this.stats.readers, base, text, pattern.distance).map((e) => e.term));
      case 'prefix':
        return new TermListWeight(this.expand(base + text, null, PREFIX_EXPANSIONS_MAX));
      case 'wildcard': {
        const literal = literalPrefix(text);
        return new TermUnionWeight([base + literal], wildcardMatcher(base, text));
      }
    }
  }

  /** `"*"`: a value in the slot when the field keeps values, else any of the field's terms. */
  private exists(spec: FieldSpec): Weight {
    if (spec.index.fieldValues) return new ValueWeight(spec.slot, { kind: 'exists' });
    if (!spec.index.fieldTerms) return NONE_WEIGHT;
    const prefixes = [spec.prefix + spec.typeChar];
    if (spec.type === 'text') prefixes.push(stemTerm(spec.prefix, ''));
    return new TermUnionWeight(prefixes, null);
  }

  /** Inclusive range (§9.3, §8.3): exact over values, else accuracy buckets (numbers, dates) or keyword terms. */
  private range(spec: FieldSpec, fromEnd: RangeEnd, toEnd: RangeEnd): Weight {
    if (fromEnd === null && toEnd === null) return this.exists(spec);
    if (spec.type === 'text' || spec.type === 'keyword' || spec.type === 'uuid') {
      // UUIDs are kept in canonical lower case: compare in it.
      const canonical = spec.type === 'uuid' ? (v: RangeEnd) => String(v).toLowerCase() : (v: RangeEnd) => String(v);
      const from = fromEnd === null ? null : canonical(fromEnd);
      const to = toEnd === null ? null : canonical(toEnd);
      if (from !== null && to !== null && compareCodePoints(from, to) > 0) return NONE_WEIGHT;
      if (spec.index.fieldValues) return new ValueWeight(spec.slot, { kind: 'string', from, to });
      if (spec.type === 'text' || !spec.index.fieldTerms) return NONE_WEIGHT;
      // Keyword terms are the (lower-cased) values: compare their tokens.
      const base = spec.prefix + spec.typeChar;
      const lo = from === null ? null : (spec.boolTerm ? from : from.toLowerCase());
      const hi = to === null ? null : (spec.boolTerm ? to : to.toLowerCase());
      return new TermUnionWeight([base], (term) => {
        const token = term.slice(base.length);
        return (lo === null || compareCodePoints(token, lo) >= 0) && (hi === null || compareCodePoints(token, hi) <= 0);
      });
    }
    const rangeType: ScalarType = isNumericType(spec.type) ? 'floating' : spec.type;
    const from = fromEnd === null ? -Infinity : convert(rangeType, fromEnd);
    const to = toEnd === null ? Infinity : convert(rangeType, toEnd);
    if (from === undefined || to === undefined) return NONE_WEIGHT;
    const lo = numericValue(from);
    const hi = numericValue(to);
    if (lo > hi) return NONE_WEIGHT;
    if (spec.index.fieldValues) return new ValueWeight(spec.slot, { kind: 'numeric', from: lo, to: hi });
    if (!spec.index.fieldTerms) return NONE_WEIGHT;
    if (spec.type === 'boolean') {
      const terms: string[] = [];
      if (lo <= 0 && hi >= 0) terms.push(fieldTerm(spec, false));
      if (lo <= 1 && hi >= 1) terms.push(fieldTerm(spec, true));
      return new TermListWeight(terms);
    }
    return this.buckets(spec, lo, hi);
  }

  /**
   * §8.3 approximation with terms but no values: the smallest accuracy step
   * at least as wide as the range (the largest step when none is, or when an
   * end is open); every bucket of that step whose start lies in
   * [bucket of `lo`, `hi`] matches.
   */
  private buckets(spec: FieldSpec, lo: number, hi: number): Weight {
    const dates = isDateType(spec.type);
    const steps = (spec.accuracy as ReadonlyArray<number | DateUnit>).filter((s) => dates === (typeof s === 'string'));
    if (steps.length === 0) return NONE_WEIGHT;
    const width = hi - lo;
    const seconds = (s: number | DateUnit): number => (typeof s === 'number' ? s : DATE_UNIT_SECONDS[s]);
    const sorted = [...steps].sort((a, b) => seconds(a) - seconds(b));
    const step = sorted.find((s) => seconds(s) >= width) ?? sorted[sorted.length - 1]!;
    const base = spec.prefix + accuracyPrefix(step) + accuracyTypeChar(spec);
    const first = lo === -Infinity ? -Infinity : accuracyBucket(lo, step);
    return new TermUnionWeight([base], (term) => {
      let start: number;
      try {
        start = sortableNumber(term.slice(base.length));
      } catch {
        return false;
      }
      return start >= first && start <= hi;
    });
  }

  // ---- `_id` and global leaves -------------------------------------------

  /** The ID term `Q` + type char + token (exact case); ranges over the `_id` values in slot 0. */
  private id(value: LeafValue): Weight {
    const type = this.idType();
    switch (value.kind) {
      case 'exists':
        return ALL_WEIGHT;
      case 'range': {
        if (type === 'keyword' || type === 'text') {
          const from = value.from === null ? null : String(value.from);
          const to = value.to === null ? null : String(value.to);
          if (from !== null && to !== null && compareCodePoints(from, to) > 0) return NONE_WEIGHT;
          return new ValueWeight(ID_SLOT, { kind: 'string', from, to });
        }
        const from = value.from === null ? -Infinity : convert('floating', value.from);
        const to = value.to === null ? Infinity : convert('floating', value.to);
        if (from === undefined || to === undefined || numericValue(from) > numericValue(to)) return NONE_WEIGHT;
        return new ValueWeight(ID_SLOT, { kind: 'numeric', from: numericValue(from), to: numericValue(to) });
      }
      default: {
        const raw = rawValue(value);
        const id = raw === undefined ? undefined : convert(type, raw);
        // The same naming as indexing (indexing/document-terms.ts), so a document is found by its ID.
        return id === undefined || typeof id === 'boolean' ? NONE_WEIGHT : new TermWeight(documentIdTerm(this.schema, id), null, '', 0);
      }
    }
  }

  private idType(): ScalarType {
    const node = this.schema._id;
    if (node !== null && typeof node === 'object' && '_type' in node) {
      const t = parseType((node as { _type: unknown })._type, '_id');
      if (t.base !== 'object') return t.base;
    }
    return 'keyword';
  }

  /**
   * A leaf without a field: global text terms plus the global keyword,
   * number or boolean term; a string also searches every text and keyword
   * field of the schema (API.md §9.4), each weighed as that field weighs
   * it, the best one counting (`max`: a word found in three fields does
   * not outrank one found in a single, better field three times over).
   */
  private global(value: LeafValue): Weight {
    switch (value.kind) {
      case 'exists':
        return ALL_WEIGHT;
      case 'string': {
        const context: TextContext = { prefix: '', analyzer: analyzerFor(GLOBAL_ANALYZER), factor: 1, normsKey: '' };
        const text = this.text(value.text, context);
        const keyword = this.keywordPattern(TYPE_CHARS.keyword, value.keyword.text.toLowerCase(), value.keyword);
        const global = text === null ? keyword : new BoolWeight('or', [text, keyword]);
        const fields = searchableFields(this.schema);
        if (fields.length === 0) return global;
        return new BoolWeight('max', [global, ...fields.map((spec) => this.string(spec, value))]);
      }
      case 'scalar':
        return this.globalScalar(value.value);
      case 'cast': {
        const casted = castFor(value.cast, value.value, null);
        return casted === undefined ? NONE_WEIGHT : this.globalScalar(casted);
      }
      case 'shape':
        return globalGeoShapeWeight(value);
      default:
        return NONE_WEIGHT;
    }
  }

  private globalScalar(value: IndexValue): Weight {
    if (typeof value === 'boolean') return new TermWeight(TYPE_CHARS.boolean + (value ? 't' : 'f'), null, '', 0);
    if (typeof value === 'number') return new TermWeight(TYPE_CHARS.integer + sortableToken(value), null, '', 0);
    return this.global({ kind: 'string', value, op: 'or', text: plainText(value), keyword: { match: 'exact', text: value, distance: 0 } });
  }

  // ---- text (§9.3.1) -----------------------------------------------------

  private text(node: TextNode, ctx: TextContext): TextWeight {
    switch (node.kind) {
      case 'all':
        return ALL_WEIGHT;
      case 'none':
        return NONE_WEIGHT;
      case 'word':
        return this.word(node.pattern, node.keepStopWords, ctx);
      case 'phrase':
        return this.positional(node.words.flatMap((w) => this.positionalTerms(w, ctx)), 'exact', ctx);
      case 'bool': {
        switch (node.op) {
          case 'near':
          case 'phrase': {
            const words = node.children.every((c) => c.kind === 'word' && (c.pattern.match === 'exact' || c.pattern.match === 'fuzzy'));
            if (words) {
              const terms = node.children.flatMap((c) => (c.kind === 'word' ? this.positionalTerms(c.pattern.text, ctx) : []));
              return this.positional(terms, node.op === 'near' ? 'near' : 'ordered', ctx);
            }
            return this.textBool('and', node.children, ctx);
          }
          case 'and':
            return this.textBool('and', node.children, ctx);
          case 'max':
            return this.textBool('max', node.children, ctx);
          case 'or':
            return this.textBool('or', node.children, ctx);
          case 'elite_set':
          case 'synonym': {
            const weights = node.children.map((c) => this.text(c, ctx)).filter((w): w is Weight => w !== null);
            if (weights.length === 0) return null;
            return node.op === 'elite_set' ? eliteSet(weights, this.stats) : new SynonymWeight(weights, this.stats);
          }
          case 'and_not':
          case 'and_maybe': {
            const first = this.text(node.children[0]!, ctx);
            const rest = node.children.slice(1).map((c) => this.text(c, ctx)).filter((w): w is Weight => w !== null);
            if (first === null) return node.op === 'and_maybe' && rest.length > 0 ? new BoolWeight('or', rest) : null;
            return rest.length === 0 ? first : new BoolWeight(node.op, [first, ...rest]);
          }
        }
      }
    }
  }

  private textBool(op: BoolWeightOp, children: readonly TextNode[], ctx: TextContext): TextWeight {
    const weights = children.map((c) => this.text(c, ctx)).filter((w): w is Weight => w !== null);
    if (weights.length === 0) return null;
    return weights.length === 1 ? weights[0]! : new BoolWeight(op, weights);
  }

  private word(pattern: Pattern, keepStopWords: boolean, ctx: TextContext): TextWeight {
    switch (pattern.match) {
      case 'fuzzy':
        return this.fuzzy(pattern, ctx);
      case 'exact': {
        const terms = ctx.analyzer.queryTerms(pattern.text, { keepStopWords });
        if (terms.length === 0) return null;
        if (terms.length === 1) return this.term(termName(terms[0]!, ctx), ctx);
        // A word of several tokens (`t-shirt`) is a phrase of them.
        return this.positional(this.positionalTerms(pattern.text, ctx), 'exact', ctx);
      }
      case 'prefix':
      case 'wildcard': {
        const base = ctx.analyzer.stemStrategy === 'stem_all_z' ? stemTerm(ctx.prefix, '') : textTerm(ctx.prefix, '');
        const text = pattern.text.toLowerCase();
        const terms = pattern.match === 'prefix'
          ? this.expand(base + text, null, PREFIX_EXPANSIONS_MAX)
          : this.expand(base + literalPrefix(text), wildcardMatcher(base, text), WILDCARD_EXPANSIONS_MAX);
        if (terms.length === 0) return NONE_WEIGHT;
        const weights = terms.map((t) => this.term(t, ctx));
        return weights.length === 1 ? weights[0]! : new BoolWeight('or', weights);
      }
    }
  }

  /**
   * `t~N`: each token of the word (unstemmed, as indexed for positions; the
   * stem under `stem_all`) expanded to the dictionary's terms within N
   * edits, weighed together as one term (Xapian's OP_EDIT_DISTANCE combines
   * with OP_SYNONYM); several tokens (`t-shirt~`) must all match.
   */
  private fuzzy(pattern: Pattern, ctx: TextContext): TextWeight {
    const tokens = ctx.analyzer.queryTerms(pattern.text, { positional: true, keepStopWords: true });
    if (tokens.length === 0) return null;
    const parts: Weight[] = [];
    for (const t of tokens) {
      const base = t.z ? stemTerm(ctx.prefix, '') : textTerm(ctx.prefix, '');
      const expansions = expandFuzzy(this.stats.readers, base, t.term, pattern.distance);
      if (expansions.length === 0) return NONE_WEIGHT;
      parts.push(new SynonymWeight(expansions.map((e) => this.term(e.term, ctx)), this.stats));
    }
    return parts.length === 1 ? parts[0]! : new BoolWeight('and', parts);
  }

  /** The positional (unstemmed under `stem_some`) terms of a word; stop words stay unless the field drops them from positions. */
  private positionalTerms(word: string, ctx: TextContext): string[] {
    const keepStopWords = ctx.analyzer.stopStrategy !== 'stop_all';
    return ctx.analyzer.queryTerms(word, { positional: true, keepStopWords }).map((t) => termName(t, ctx));
  }

  private positional(terms: readonly string[], mode: 'exact' | 'ordered' | 'near', ctx: TextContext): TextWeight {
    if (terms.length === 0) return null;
    if (terms.length === 1) return this.term(terms[0]!, ctx);
    return new PositionalWeight(terms.map((t) => this.term(t, ctx)), mode, mode === 'exact' ? terms.length : PROXIMITY_WINDOW);
  }

  private term(term: string, ctx: TextContext): TermWeight {
    return new TermWeight(term, this.stats.bm25(term, ctx.normsKey, ctx.factor), ctx.normsKey, this.stats.averageLength(ctx.normsKey), ctx.factor);
  }

  /**
   * Terms of all readers starting with `prefix` (and matching `matcher`),
   * the `max` most frequent (document frequency summed over readers; ties
   * in term order).
   */
  private expand(prefix: string, matcher: ((term: string) => boolean) | null, max: number): string[] {
    const dfs = new Map<string, number>();
    for (const reader of this.stats.readers) {
      visitTerms(reader, prefix, (term, df) => {
        if (matcher === null || matcher(term)) dfs.set(term, (dfs.get(term) ?? 0) + df);
        return true;
      });
    }
    return [...dfs].sort((a, b) => b[1] - a[1] || compareCodePoints(a[0], b[0])).slice(0, max).map(([t]) => t);
  }
}

function textContext(spec: FieldSpec): TextContext {
  return { prefix: spec.prefix, analyzer: analyzerFor(analyzerOptionsOf(spec)), factor: spec.weight, normsKey: spec.prefix };
}

function termName(t: QueryTerm, ctx: TextContext): string {
  return t.z ? stemTerm(ctx.prefix, t.term) : textTerm(ctx.prefix, t.term);
}

/** The ID term of API.md §5.8: `Q` + type char + the value's token, exact case. */
/** The ID term of a document whose `_id` has `type` (tests; the compiler uses indexing's `idTerm` with the schema). */
export function idTerm(type: ScalarType, id: string | number): string {
  return documentIdTerm({ _id: { _type: type } }, id);
}

/** A string searched as text without syntax: its words, OR-ed. */
function plainText(s: string): TextNode {
  const words = s.split(/\s+/u).filter((w) => w.length > 0);
  if (words.length === 0) return { kind: 'none' };
  const nodes: TextNode[] = words.map((w) => ({ kind: 'word', pattern: { match: 'exact', text: w, distance: 0 }, keepStopWords: false }));
  return nodes.length === 1 ? nodes[0]! : { kind: 'bool', op: 'or', children: nodes };
}

function convert(type: ScalarType, raw: unknown): IndexValue | undefined {
  try {
    return convertValue(type, raw, '').index;
  } catch {
    return undefined;
  }
}

function numericValue(v: IndexValue): number {
  return typeof v === 'boolean' ? (v ? 1 : 0) : Number(v);
}

function rawValue(value: LeafValue): IndexValue | undefined {
  switch (value.kind) {
    case 'scalar':
      return value.value;
    case 'string':
      return value.value;
    case 'cast':
      return castFor(value.cast, value.value, null);
    case 'date_parts':
      return convert('datetime', { _datetime: value.parts });
    default:
      return undefined;
  }
}

/** The literal part of a wildcard pattern before its first `*` or `?`. */
function literalPrefix(pattern: string): string {
  const star = pattern.indexOf('*');
  const question = pattern.indexOf('?');
  const end = star < 0 ? question : question < 0 ? star : Math.min(star, question);
  return end < 0 ? pattern : pattern.slice(0, end);
}

/** Whether a term (with `base` before the token) matches a `*`/`?` pattern over its whole token. */
function wildcardMatcher(base: string, pattern: string): (term: string) => boolean {
  let source = '^';
  for (const ch of pattern) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else source += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  const re = new RegExp(source + '$', 'su');
  return (term) => re.test(term.slice(base.length));
}
