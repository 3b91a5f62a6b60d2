/**
 * The objects of a document body as the fold reads them: an object's keys
 * split into options, fields, `_value` and date/geo value keys (unknown `_`
 * keys are a 400), objects of value keys kept opaque, and the options that
 * option objects inside an array carry for the whole field.
 */
import { schemaErrors } from './errors.js';
import { GEO_VALUE_KEYS } from './geo.js';
import { DATE_VALUE_KEYS, FIELD_OPTION_KEYS, hasOwn, isCommentKey, isPlainObject, ROOT_CONTROL_KEYS, VALUE_KEYS } from './keys.js';
import { normaliseOption } from './options.js';
import type { SchemaNode } from './schema.js';
import { parseType } from './types.js';

/** The fields of an object: its keys that are neither options, value keys nor comments, in order. */
export interface Children {
  readonly of: Record<string, unknown>;
  readonly keys: readonly string[];
}

/** A field's object split into its parts. */
export interface Split {
  options: Record<string, unknown>;
  children: Children;
  hasValue: boolean;
  /** The `{"_date"|"_datetime": …}` part of a date given as components. */
  dateValue: Record<string, unknown> | undefined;
}

/** Split an object's keys: options (normalised), children, `_value`, date value keys; unknown `_` keys → 400. */
export function splitObject(obj: Record<string, unknown>, path: string, isRoot: boolean): Split {
  const keys = Object.keys(obj);
  // The keys themselves while every key is a field (most objects): copied at the first that is not.
  let fields: string[] | undefined;
  let options = NO_OPTIONS;
  let hasValue = false;
  let dateValue: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const comment = isCommentKey(key);
    if (!comment && key.charCodeAt(0) !== 0x5f) {
      fields?.push(key);
      continue;
    }
    fields ??= keys.slice(0, i);
    if (comment) continue;
    if (key === '_value' && !isRoot) {
      hasValue = true;
    } else if (isRoot && ROOT_CONTROL_KEYS.has(key)) {
      continue;
    } else if (FIELD_OPTION_KEYS.has(key)) {
      const v = normaliseOption(key, obj[key], path, isRoot ? 'root' : 'field');
      if (v !== undefined) {
        if (options === NO_OPTIONS) options = {};
        options[key] = v;
      }
    } else if ((DATE_VALUE_KEYS.has(key) || GEO_VALUE_KEYS.has(key)) && !isRoot) {
      if (dateValue !== undefined) throw schemaErrors.badDocument(`Field '${path}' has two date values`);
      dateValue = { [key]: obj[key] };
    } else {
      throw schemaErrors.unknownReservedKey(key);
    }
  }
  if (hasValue && dateValue !== undefined) throw schemaErrors.unknownReservedKey(Object.keys(dateValue)[0]!);
  return { options, children: { of: obj, keys: fields ?? keys }, hasValue, dateValue };
}

/** The options of an object that has none (shared: never written to). */
const NO_OPTIONS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** An object keyed by a value key of a later type (`_point`, `_uuid`, …), without `_value`: kept as sent, not indexed. */
export function isOpaque(obj: Record<string, unknown>): boolean {
  if (hasOwn(obj, '_value')) return false;
  for (const key of Object.keys(obj)) if (VALUE_KEYS.has(key) && !DATE_VALUE_KEYS.has(key) && !GEO_VALUE_KEYS.has(key)) return true;
  return false;
}

/** Options carried by option objects inside an array value, merged into the field's inline options. */
export function gatherElementOptions(list: readonly unknown[], inline: Record<string, unknown>, path: string): Record<string, unknown> {
  let out = inline;
  for (const item of list) {
    if (Array.isArray(item)) {
      out = gatherElementOptions(item, out, path);
    } else if (isPlainObject(item) && !isOpaque(item)) {
      const split = splitObject(item, path, false);
      if (!split.hasValue && split.dateValue === undefined) continue; // an object element carries its own options
      for (const [key, v] of Object.entries(split.options)) {
        if (hasOwn(out, key) && !isDeepEqualJson(out[key], v)) throw schemaErrors.conflictingOption(path, key);
        if (out === inline) out = { ...inline };
        out[key] = v;
      }
      if (split.hasValue && Array.isArray(item._value)) out = gatherElementOptions(item._value, out, path);
    }
  }
  return out;
}

export function isDeepEqualJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A name `checkFieldName` accepts. */
export function isFieldName(name: string): boolean {
  return name !== '__proto__' && name.length > 0 && !name.includes('.');
}

/** A scalar, or a list of scalars: a value that carries no options and no fields. */
export function isScalarValue(value: unknown): boolean {
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null) return false;
    return true;
  }
  return typeof value !== 'object' || value === null;
}

/** Whether an object of value keys (`{"_lua": …}`) is the value of a `script` field: by its own `_type` or the field's. */
export function isScriptTyped(node: SchemaNode | undefined, raw: Record<string, unknown>, path: string): boolean {
  const declared = raw._type ?? node?._type;
  // Not parseType: a value of a type still to come (`geo`) must stay opaque, not fail here.
  return typeof declared === 'string' && declared.toLowerCase().split('/').includes('script') && parseType(declared, path).base === 'script';
}

/** A script object with options as `{…options, _value: {…script}}`, the form the field walk takes. */
export function asScriptValue(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const script: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(raw)) {
    if (FIELD_OPTION_KEYS.has(key)) out[key] = v;
    else if (!isCommentKey(key)) script[key] = v;
  }
  out._value = script;
  return out;
}
