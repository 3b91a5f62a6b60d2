/**
 * The query DSL of API.md §9.3: a `_query` body value into a `Query`.
 *
 * An object's keys are ANDed. A plain key is a field (dotted keys split into
 * a path; nested plain keys extend it: `{"style": {"clothing": "*"}}` is
 * `style.clothing`); `_id` at the top is a field. Operator keys:
 * compound operators with an array (§9.3.2; elements at the top are queries,
 * under a field they are values of that field), the text operators `_and
 * _or _near _phrase _elite_set _synonym _max` with a string (§9.3.1),
 * `_match_all`/`_match_none` with `{}`, and the leaf keys `_value`, casts,
 * `_in`, geometry keys, `_wildcard _partial _fuzzy`. Leaf keys at the top
 * (no field) search global terms. Anything else is 400 "Invalid operator:
 * _name".
 *
 * Tessera choices where §9.3 is silent: `{}` (an empty AND) is `all`; an
 * array as a field value is the OR of its elements; `null` as a value, an
 * empty compound array and arrays inside arrays are 400s; `"*"` as an
 * element at the top is `all`; range ends are strings or numbers.
 */
import { isPlainObject } from '@tessera/schema';
import type { BoolOp, CastName, LeafValue, Query, RangeEnd, ShapeName, TextNode, TextOp } from './ast.js';
import { queryErrors, type SyntaxErrorFactory } from './errors.js';
import { countFuzzy, parseRangeString, splitFieldName, stringLeaf, uncountedStringLeaf, type ParseContext } from './leaf.js';
import { checkDepth } from './limits.js';
import { parseQueryStringIn } from './query-string.js';
import { DEFAULT_EDIT_DISTANCE, parsePattern } from './text.js';

const COMPOUND: ReadonlyMap<string, BoolOp> = new Map<string, BoolOp>([
  ['_and', 'and'], ['_or', 'or'], ['_not', 'not'], ['_and_not', 'and_not'], ['_xor', 'xor'], ['_and_maybe', 'and_maybe'],
  ['_filter', 'filter'], ['_elite_set', 'elite_set'], ['_max', 'max'], ['_synonym', 'synonym'],
]);

const TEXT_OPS: ReadonlyMap<string, TextOp> = new Map<string, TextOp>([
  ['_and', 'and'], ['_or', 'or'], ['_near', 'near'], ['_phrase', 'phrase'], ['_elite_set', 'elite_set'], ['_synonym', 'synonym'], ['_max', 'max'],
]);

const CASTS: ReadonlySet<string> = new Set<CastName>([
  '_integer', '_positive', '_float', '_boolean', '_keyword', '_text', '_string', '_term',
  '_datetime', '_date', '_time', '_timedelta', '_uuid',
]);

const SHAPES: ReadonlySet<string> = new Set<ShapeName>([
  '_point', '_circle', '_convex', '_polygon', '_chull', '_multipoint', '_multicircle', '_multiconvex', '_multipolygon',
  '_multichull', '_geometrycollection', '_ewkt',
]);
/** Shapes whose body is a list (API.md §8.6; geo/objects.ts). */
const LIST_SHAPES: ReadonlySet<string> = new Set(['_multiconvex', '_multipolygon', '_multichull', '_geometrycollection']);

/** `{"_datetime": {…}}` parts of §8.5. */
const DATE_PARTS: ReadonlySet<string> = new Set(['_year', '_month', '_day', '_hour', '_min', '_sec', '_fsec']);

const PATTERN_SUFFIXES: ReadonlyMap<string, string> = new Map([['_wildcard', '*'], ['_partial', '**'], ['_fuzzy', '~']]);

const ALL: Query = { kind: 'all' };
const NONE: Query = { kind: 'none' };

const fail: SyntaxErrorFactory = (message) => queryErrors.invalidQuery(message);

type Path = readonly string[] | null;


function isEmptyObject(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).length === 0;
}

function pathName(path: Path): string {
  return path === null ? '(global)' : path.join('.');
}

function field(path: Path, value: LeafValue): Query {
  return { kind: 'field', path, value };
}

function and(parts: Query[]): Query {
  return parts.length === 1 ? parts[0]! : { kind: 'bool', op: 'and', children: parts };
}

/** Parse a `_query` value: absent or `"*"` = all, another string = query string, an object = DSL. */
export function parseDslIn(value: unknown, ctx: ParseContext): Query {
  if (value === undefined || value === '*') return ALL;
  if (typeof value === 'string') return parseQueryStringIn(value, ctx);
  if (!isPlainObject(value)) throw queryErrors.invalidQuery('Invalid _query: expected an object or a string');
  return new DslParser(ctx).object(value, null, 1);
}

/**
 * `{"_fuzzy": s}`: the keyword reading is `s~` (the whole value, unless `s`
 * ends with its own `~N`); in the text reading every plain word becomes
 * `word~` (a typo may be in any word), words with a pattern keep it.
 */
function fuzzyLeaf(value: string, ctx: ParseContext, depth: number): LeafValue {
  const keyword = /~\d*$/.test(value) ? value : `${value}~`;
  const leaf = uncountedStringLeaf(value, 'or', false, ctx, depth, fail);
  if (leaf.kind !== 'string') return leaf;
  const fuzzy: LeafValue = { ...leaf, value: keyword, text: fuzzyText(leaf.text), keyword: parsePattern(keyword, ctx.limits, fail) };
  countFuzzy(fuzzy, ctx);
  return fuzzy;
}

/** Every plain word of a text node made fuzzy at the default distance. */
function fuzzyText(node: TextNode): TextNode {
  switch (node.kind) {
    case 'word':
      return node.pattern.match === 'exact'
        ? { ...node, pattern: { match: 'fuzzy', text: node.pattern.text, distance: DEFAULT_EDIT_DISTANCE } }
        : node;
    case 'bool':
      return { ...node, children: node.children.map(fuzzyText) };
    default:
      return node;
  }
}

class DslParser {
  constructor(private readonly ctx: ParseContext) {}

  /** An object at `path` (null at the top): its keys, ANDed. */
  object(obj: Record<string, unknown>, path: Path, depth: number): Query {
    checkDepth(depth, this.ctx.limits);
    const parts: Query[] = [];
    for (const key of Object.keys(obj)) parts.push(this.entry(key, obj[key], path, depth));
    return parts.length === 0 ? ALL : and(parts);
  }

  private entry(key: string, value: unknown, path: Path, depth: number): Query {
    if (key.charCodeAt(0) !== 0x5f) return this.fieldValue(value, this.extend(path, key), depth + 1); // not '_'
    if (key === '_id' && path === null) return this.fieldValue(value, ['_id'], depth + 1);
    const compound = COMPOUND.get(key);
    const textOp = TEXT_OPS.get(key);
    if (Array.isArray(value)) {
      if (compound !== undefined) return this.compound(key, compound, value, path, depth + 1);
      if (textOp !== undefined) throw queryErrors.invalidOperator(key); // array _near, _phrase (§9.3.2)
    }
    if (textOp !== undefined && typeof value === 'string') {
      this.ctx.budget.take();
      return field(path, stringLeaf(value, textOp, textOp === 'and' || textOp === 'or', this.ctx, depth + 1, fail));
    }
    if (compound !== undefined || textOp !== undefined) {
      const expected = textOp === undefined ? 'an array' : compound === undefined ? 'a string' : 'an array or a string';
      throw queryErrors.invalidQuery(`Invalid value for ${key}: expected ${expected}`);
    }
    switch (key) {
      case '_match_all':
      case '_match_none':
        if (!isEmptyObject(value)) throw queryErrors.invalidQuery(`Invalid value for ${key}: expected {}`);
        return key === '_match_all' ? ALL : NONE;
      case '_value':
        return this.fieldValue(value, path, depth + 1);
      case '_in':
        this.ctx.budget.take();
        return field(path, this.inValue(value, depth + 1));
      default:
        break;
    }
    if (CASTS.has(key)) {
      this.ctx.budget.take();
      return field(path, { kind: 'cast', cast: key as CastName, value: this.castValue(key, value, depth + 1) });
    }
    if (SHAPES.has(key)) {
      this.ctx.budget.take();
      return field(path, this.shape(key, value, false));
    }
    const suffix = PATTERN_SUFFIXES.get(key);
    if (suffix !== undefined) {
      if (typeof value !== 'string' || value.length === 0) throw queryErrors.invalidQuery(`Invalid value for ${key}: expected a non-empty string`);
      this.ctx.budget.take();
      if (key === '_fuzzy') return field(path, fuzzyLeaf(value, this.ctx, depth + 1));
      const s = value.endsWith(suffix) ? value : value + suffix;
      return field(path, stringLeaf(s, 'or', false, this.ctx, depth + 1, fail));
    }
    throw queryErrors.invalidOperator(key);
  }

  private extend(path: Path, key: string): string[] {
    const split = splitFieldName(key, this.ctx.limits);
    if (typeof split === 'string') throw queryErrors.invalidQuery(split);
    const extended = path === null ? split : [...path, ...split];
    if (extended.join('.').length > this.ctx.limits.fieldNameLengthMax) {
      throw queryErrors.invalidQuery(`Field name longer than ${this.ctx.limits.fieldNameLengthMax} characters`);
    }
    return extended;
  }

  private compound(key: string, op: BoolOp, elements: unknown[], path: Path, depth: number): Query {
    checkDepth(depth, this.ctx.limits);
    if (elements.length === 0) throw queryErrors.invalidQuery(`Invalid value for ${key}: expected a non-empty array`);
    const children: Query[] = [];
    for (const element of elements) children.push(this.element(key, element, path, depth + 1));
    return { kind: 'bool', op, children };
  }

  /** An element of a compound array: a query at the top, a value of the field below. */
  private element(key: string, element: unknown, path: Path, depth: number): Query {
    if (path !== null) return this.fieldValue(element, path, depth);
    if (isPlainObject(element)) return this.object(element, null, depth);
    if (element === '*') return ALL;
    if (typeof element === 'string' || typeof element === 'number' || typeof element === 'boolean') return this.fieldValue(element, null, depth);
    throw queryErrors.invalidQuery(`Invalid element of ${key}: expected an object or a scalar`);
  }

  /** The value of a field (or of the global pseudo-field when `path` is null). */
  private fieldValue(value: unknown, path: Path, depth: number): Query {
    checkDepth(depth, this.ctx.limits);
    if (isPlainObject(value)) return this.object(value, path, depth);
    if (Array.isArray(value)) {
      if (value.length === 0) throw queryErrors.invalidQuery(`Invalid value for ${pathName(path)}: empty array`);
      const children: Query[] = [];
      for (const element of value) {
        if (Array.isArray(element)) throw queryErrors.invalidQuery(`Invalid value for ${pathName(path)}: nested array`);
        children.push(this.fieldValue(element, path, depth + 1));
      }
      return children.length === 1 ? children[0]! : { kind: 'bool', op: 'or', children };
    }
    this.ctx.budget.take();
    return field(path, this.scalar(value, path, depth));
  }

  private scalar(value: unknown, path: Path, depth: number): LeafValue {
    switch (typeof value) {
      case 'string':
        return stringLeaf(value, 'or', false, this.ctx, depth, fail);
      case 'number':
        if (!Number.isFinite(value)) break;
        // -0 is 0 for matching (and survives msgpack/JSON as 0 anyway).
        return { kind: 'scalar', value: value === 0 ? 0 : value };
      case 'boolean':
        return { kind: 'scalar', value };
      default:
        break;
    }
    throw queryErrors.invalidQuery(`Invalid value for ${pathName(path)}: ${value === null ? 'null' : typeof value}`);
  }

  private castValue(key: string, value: unknown, depth: number): LeafValue {
    if ((key === '_date' || key === '_datetime') && isPlainObject(value)) {
      const parts: Record<string, number> = {};
      for (const part of Object.keys(value)) {
        const n = value[part];
        if (!DATE_PARTS.has(part) || typeof n !== 'number' || !Number.isFinite(n)) {
          throw queryErrors.invalidQuery(`Invalid ${key} part: ${part}`);
        }
        parts[part] = n;
      }
      return { kind: 'date_parts', parts };
    }
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return this.scalar(value, null, depth);
    throw queryErrors.invalidQuery(`Invalid value for ${key}: expected a string, number or boolean`);
  }

  private inValue(value: unknown, depth: number): LeafValue {
    checkDepth(depth, this.ctx.limits);
    if (typeof value === 'string') {
      const range = parseRangeString(value);
      if (range === null) throw queryErrors.invalidQuery(`Invalid range: ${JSON.stringify(value.slice(0, 100))}`);
      return { kind: 'range', from: range.from, to: range.to };
    }
    if (isPlainObject(value)) {
      const keys = Object.keys(value);
      if (keys.length === 1) {
        const key = keys[0]!;
        if (key === '_range') return this.range(value[key]);
        if (SHAPES.has(key)) return this.shape(key, value[key], true);
      }
    }
    throw queryErrors.invalidQuery('Invalid value for _in: expected a range or a shape');
  }

  private range(value: unknown): LeafValue {
    if (!isPlainObject(value)) throw queryErrors.invalidQuery('Invalid _range: expected an object');
    let from: RangeEnd = null;
    let to: RangeEnd = null;
    for (const key of Object.keys(value)) {
      if (key !== '_from' && key !== '_to') throw queryErrors.invalidOperator(key);
      const end = value[key];
      if (end !== null && typeof end !== 'string' && !(typeof end === 'number' && Number.isFinite(end))) {
        throw queryErrors.invalidQuery(`Invalid ${key}: expected a string or a number`);
      }
      if (typeof end === 'string' && end.length > this.ctx.limits.stringLengthMax) {
        throw queryErrors.tooComplex(`Range end longer than ${this.ctx.limits.stringLengthMax} characters`);
      }
      const normalised = (end === 0 ? 0 : end) as RangeEnd; // -0 is 0
      if (key === '_from') from = normalised;
      else to = normalised;
    }
    return { kind: 'range', from, to };
  }

  private shape(key: string, value: unknown, within: boolean): LeafValue {
    const ok = key === '_ewkt' ? typeof value === 'string' : LIST_SHAPES.has(key) ? Array.isArray(value) : isPlainObject(value);
    if (!ok) throw queryErrors.invalidQuery(`Invalid value for ${key}: expected ${key === '_ewkt' ? 'a string' : LIST_SHAPES.has(key) ? 'an array' : 'an object'}`);
    return { kind: 'shape', shape: key as ShapeName, value, within };
  }
}
