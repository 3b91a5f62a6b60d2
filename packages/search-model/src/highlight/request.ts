/**
 * `_highlight` (docs/highlights-and-cursors.md): which fields of each hit to
 * return as fragments with the query's matches marked, parsed and validated
 * once by the coordinator (400 `invalid_highlight` on any mistake) and sent
 * to the shards, which build the fragments from the stored text with each
 * field's own analyser.
 *
 * `{"_fields": ["title", …] | {"title": {per-field options}, …}, "_pre_tag",
 * "_post_tag", "_fragment_size", "_number_of_fragments", "_encoder"}`: the
 * top-level options are the defaults of every field; a field's own object
 * overrides them (except `_encoder`, one per request).
 */
import { isPlainObject } from '@tessera/schema';
import { TesseraError } from '@tessera/errors';

export interface HighlightField {
  /** Dotted path of the field. */
  readonly path: string;
  readonly preTag: string;
  readonly postTag: string;
  /** Characters of a fragment, about (it grows or shrinks to word boundaries); ≥ 1. */
  readonly fragmentSize: number;
  /** Fragments at most, best first kept, returned in text order; 0: the whole value, marked. */
  readonly numberOfFragments: number;
}

export interface HighlightRequest {
  readonly fields: readonly HighlightField[];
  /** `html`: the text around the tags is HTML-escaped; `default`: returned as stored (Elasticsearch's default). */
  readonly encoder: 'default' | 'html';
}

/** Bounds of the options: each highlighted field re-analyses stored text on every hit. */
export const HIGHLIGHT_LIMITS = {
  fieldsMax: 32,
  fragmentSizeMax: 10_000,
  numberOfFragmentsMax: 100,
  tagLengthMax: 256,
} as const;

const DEFAULTS = { preTag: '<em>', postTag: '</em>', fragmentSize: 150, numberOfFragments: 5 };

const invalid = (message: string) => new TesseraError('invalid_highlight', 400, message);

interface FieldOptions {
  preTag: string;
  postTag: string;
  fragmentSize: number;
  numberOfFragments: number;
}

function tag(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length > HIGHLIGHT_LIMITS.tagLengthMax) {
    throw invalid(`'${name}' must be a string of at most ${HIGHLIGHT_LIMITS.tagLengthMax} characters`);
  }
  return value;
}

function count(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalid(`'${name}' must be an integer from ${min} to ${max}`);
  return value;
}

/** The options of `spec` over `base`; `topLevel` also takes `_fields` and `_encoder` (read by the caller). */
function options(spec: Record<string, unknown>, base: FieldOptions, topLevel: boolean): FieldOptions {
  const out = { ...base };
  for (const key of Object.keys(spec)) {
    const v = spec[key];
    switch (key) {
      case '_pre_tag': out.preTag = tag(v, key); break;
      case '_post_tag': out.postTag = tag(v, key); break;
      case '_fragment_size': out.fragmentSize = count(v, key, 1, HIGHLIGHT_LIMITS.fragmentSizeMax); break;
      case '_number_of_fragments': out.numberOfFragments = count(v, key, 0, HIGHLIGHT_LIMITS.numberOfFragmentsMax); break;
      case '_fields':
      case '_encoder':
        if (topLevel) break;
        throw invalid(`Unknown highlight option for a field: ${key.slice(0, 100)}`);
      default:
        throw invalid(`Unknown highlight option: ${key.slice(0, 100)}`);
    }
  }
  return out;
}

function fieldPath(name: string): string {
  if (name.length === 0 || name.length > 1024 || name.startsWith('_') || name.startsWith('.') || name.endsWith('.') || name.includes('..')) {
    throw invalid(`Invalid highlight field: ${name.slice(0, 100)}`);
  }
  return name;
}

export function parseHighlight(value: unknown): HighlightRequest {
  if (!isPlainObject(value)) throw invalid("'_highlight' must be an object");
  const base = options(value, DEFAULTS, true);
  const encoder = value._encoder ?? 'default';
  if (encoder !== 'default' && encoder !== 'html') throw invalid("'_encoder' must be \"default\" or \"html\"");
  const given = value._fields;
  const fields: HighlightField[] = [];
  const add = (name: unknown, spec: Record<string, unknown>): void => {
    if (typeof name !== 'string') throw invalid("'_fields' must name fields by strings");
    const path = fieldPath(name);
    if (fields.some((f) => f.path === path)) throw invalid(`Highlight field listed twice: ${path.slice(0, 100)}`);
    fields.push({ path, ...options(spec, base, false) });
    if (fields.length > HIGHLIGHT_LIMITS.fieldsMax) throw invalid(`More than ${HIGHLIGHT_LIMITS.fieldsMax} highlight fields`);
  };
  if (Array.isArray(given)) {
    for (const name of given) add(name, {});
  } else if (isPlainObject(given)) {
    for (const name of Object.keys(given)) {
      const spec = given[name];
      if (!isPlainObject(spec)) throw invalid(`Highlight options of ${name.slice(0, 100)} must be an object`);
      add(name, spec);
    }
  } else {
    throw invalid("'_highlight' needs '_fields': an array of field names or an object of field options");
  }
  if (fields.length === 0) throw invalid("'_fields' names no field");
  return { fields, encoder };
}
