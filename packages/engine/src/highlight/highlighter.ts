/**
 * Highlighting (`_highlight`, docs/highlights-and-cursors.md): fragments of
 * a hit's stored text fields with the query's matches between tags, as
 * Elasticsearch's and Meilisearch's highlighters return them.
 *
 * A token of the stored text matches when the field's own analyser (the
 * one that indexed it: language, stemming, stop words) turns it into a term
 * the query looks up in that field: `runs` marks `running` under English
 * stemming, a dropped stop word marks nothing. Words of a leaf on the field
 * count, and bare words (searched in every field, API.md §9.4) count in
 * every highlighted field; `t**` and `t*` patterns mark the tokens they
 * expand to; fuzzy words and excluded words (`_not`, `-t`) mark nothing.
 * Phrase words are marked wherever they stand.
 */
import type { DocumentBody } from '@tessera/documents';
import { fieldSpec, isPlainObject, type Schema } from '@tessera/schema';
import type { HighlightField, HighlightRequest, Pattern, Query, TextNode } from '@tessera/search-model';
import { analyzerFor, type Analyzer, type QueryTerm } from '../analysis/analyzer.js';
import { tokenize } from '../analysis/tokenize.js';
import { analyzerOptionsOf } from '../indexing/document-terms.js';
import { buildFragments, type Fragment, type TextMatch } from './fragments.js';

/** A hit's fragments by field path; a field without a match is left out. */
export type HitHighlight = Record<string, string[]>;

/**
 * Characters of one value analysed for matches (Elasticsearch's
 * `max_analyzed_offset` is 1,000,000 too): what lies beyond is returned
 * unmarked, so a huge stored field costs a bounded scan per hit.
 */
export const HIGHLIGHT_ANALYZED_CHARS_MAX = 1_000_000;

/** A query word as the highlighter reads it. */
interface QueryWord {
  readonly pattern: Pattern;
  readonly keepStopWords: boolean;
}

/** The words a query looks up, by field path (`null`: bare words, every field). */
function queryWords(query: Query): Map<string | null, QueryWord[]> {
  const words = new Map<string | null, QueryWord[]>();
  const add = (path: string | null, word: QueryWord): void => {
    const list = words.get(path);
    if (list === undefined) words.set(path, [word]);
    else list.push(word);
  };
  const text = (path: string | null, node: TextNode): void => {
    switch (node.kind) {
      case 'word': add(path, { pattern: node.pattern, keepStopWords: node.keepStopWords }); return;
      case 'phrase': for (const w of node.words) add(path, { pattern: { match: 'exact', text: w, distance: 0 }, keepStopWords: true }); return;
      case 'bool': for (const child of node.op === 'and_not' ? node.children.slice(0, 1) : node.children) text(path, child); return;
      default: return;
    }
  };
  const walk = (q: Query): void => {
    if (q.kind === 'bool') {
      if (q.op === 'not') return;
      for (const child of q.op === 'and_not' ? q.children.slice(0, 1) : q.children) walk(child);
      return;
    }
    if (q.kind !== 'field') return;
    let value = q.value;
    while (value.kind === 'cast') value = value.value;
    if (value.kind === 'string') text(q.path === null ? null : q.path.join('.'), value.text);
  };
  walk(query);
  return words;
}

const termKey = (t: QueryTerm): string => (t.z ? 'Z' : ' ') + t.term;

/** Whether a token of one field's text is a match of the query. */
class FieldMatcher {
  private readonly keys = new Set<string>();
  private readonly patterns: RegExp[] = [];
  /** Tokens already decided (a text repeats its words); bounded, then cleared. */
  private readonly decided = new Map<string, boolean>();

  constructor(private readonly analyzer: Analyzer, words: readonly QueryWord[]) {
    for (const { pattern, keepStopWords } of words) {
      if (pattern.match === 'exact') {
        for (const t of analyzer.queryTerms(pattern.text, { keepStopWords })) this.keys.add(termKey(t));
      } else if (pattern.match === 'prefix') {
        this.patterns.push(new RegExp(`^${escapeRegExp(pattern.text.toLowerCase())}`, 'u'));
      } else if (pattern.match === 'wildcard') {
        const source = [...pattern.text.toLowerCase()].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : escapeRegExp(c))).join('');
        this.patterns.push(new RegExp(`^${source}$`, 'u'));
      }
    }
  }

  get empty(): boolean {
    return this.keys.size === 0 && this.patterns.length === 0;
  }

  /** `token` is lower-cased, as the tokenizer gives it. */
  matches(token: string): boolean {
    const known = this.decided.get(token);
    if (known !== undefined) return known;
    let match = this.keys.has(' ' + token) || this.patterns.some((p) => p.test(token));
    if (!match) for (const t of this.analyzer.queryTerms(token, { keepStopWords: true })) if (this.keys.has(termKey(t))) match = true;
    if (this.decided.size >= 10_000) this.decided.clear();
    this.decided.set(token, match);
    return match;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The string values at `path` of `body` (arrays flattened; `{"_value": s}` read as `s`). */
function stringValues(body: unknown, path: readonly string[], out: string[] = []): string[] {
  if (Array.isArray(body)) {
    for (const item of body) stringValues(item, path, out);
    return out;
  }
  if (path.length === 0) {
    if (typeof body === 'string') out.push(body);
    else if (isPlainObject(body) && typeof body._value === 'string') out.push(body._value);
    return out;
  }
  if (isPlainObject(body)) stringValues(body[path[0]!], path.slice(1), out);
  return out;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

interface BoundField {
  readonly field: HighlightField;
  readonly segments: readonly string[];
  readonly matcher: FieldMatcher;
}

/** The highlighter of one search: the query's words bound to each highlighted field's analyser, once. */
export class Highlighter {
  private readonly fields: BoundField[] = [];
  private readonly encode: (s: string) => string;

  constructor(query: Query, request: HighlightRequest, schema: Schema) {
    const words = queryWords(query);
    const bare = words.get(null) ?? [];
    for (const field of request.fields) {
      const spec = fieldSpec(schema, field.path);
      // Text fields only: a keyword or a number is matched whole, with nothing to mark inside.
      if (spec === undefined || spec.type !== 'text') continue;
      const matcher = new FieldMatcher(analyzerFor(analyzerOptionsOf(spec)), [...(words.get(field.path) ?? []), ...bare]);
      if (!matcher.empty) this.fields.push({ field, segments: field.path.split('.'), matcher });
    }
    this.encode = request.encoder === 'html' ? escapeHtml : (s) => s;
  }

  highlight(body: DocumentBody): HitHighlight {
    const out: HitHighlight = {};
    for (const { field, segments, matcher } of this.fields) {
      const fragments = this.fieldFragments(stringValues(body, segments), field, matcher);
      if (fragments.length > 0) out[field.path] = fragments;
    }
    return out;
  }

  private fieldFragments(values: readonly string[], field: HighlightField, matcher: FieldMatcher): string[] {
    const picked: Array<{ value: number; fragment: Fragment }> = [];
    const perValue: TextMatch[][] = [];
    values.forEach((value, v) => {
      const analysed = value.length > HIGHLIGHT_ANALYZED_CHARS_MAX ? value.slice(0, HIGHLIGHT_ANALYZED_CHARS_MAX) : value;
      const matches: TextMatch[] = [];
      const tokenStarts: number[] = [];
      const tokenEnds: number[] = [];
      // Offsets are the lower-cased text's: usable only where lower-casing kept the length.
      if (analysed.toLowerCase().length === analysed.length) {
        tokenize(analysed, (token, _position, start, end) => {
          tokenStarts.push(start);
          tokenEnds.push(end);
          if (matcher.matches(token)) matches.push({ start, end, token });
        });
      }
      perValue.push(matches);
      if (matches.length === 0) return;
      if (field.numberOfFragments === 0) {
        picked.push({ value: v, fragment: { start: 0, end: value.length, from: 0, to: matches.length, distinct: 0 } });
        return;
      }
      for (const fragment of buildFragments(value, matches, tokenStarts, tokenEnds, field.fragmentSize)) picked.push({ value: v, fragment });
    });
    if (field.numberOfFragments > 0) {
      // The best fragments (most distinct words, then most matches, then first), shown in text order.
      picked.sort((a, b) => b.fragment.distinct - a.fragment.distinct || (b.fragment.to - b.fragment.from) - (a.fragment.to - a.fragment.from)
        || a.value - b.value || a.fragment.start - b.fragment.start);
      picked.length = Math.min(picked.length, field.numberOfFragments);
      picked.sort((a, b) => a.value - b.value || a.fragment.start - b.fragment.start);
    }
    return picked.map(({ value, fragment }) => this.render(values[value]!, perValue[value]!, fragment, field));
  }

  private render(value: string, matches: readonly TextMatch[], fragment: Fragment, field: HighlightField): string {
    let out = '';
    let at = fragment.start;
    for (let i = fragment.from; i < fragment.to; i++) {
      const m = matches[i]!;
      out += this.encode(value.slice(at, m.start)) + field.preTag + this.encode(value.slice(m.start, m.end)) + field.postTag;
      at = m.end;
    }
    return out + this.encode(value.slice(at, fragment.end));
  }
}
