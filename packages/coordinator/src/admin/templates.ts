/**
 * Index templates (API.md §16.1): `{"_patterns": ["/logs/*"], "_priority":
 * 10, "_settings": {…}, "_schema": {…}}` under a name, in the cluster state.
 * When an index is created, every template whose pattern matches its path
 * applies, lowest `_priority` first (equal priorities by name), and the
 * creating request's own `_settings` and `_schema` last: a setting the
 * request gives wins; a field it names takes the request's options, its
 * subfields merged the same way. `*` in a pattern matches any characters,
 * `/` included. A template is read only at creation: changing or deleting it
 * leaves existing indexes as they are.
 */
import { TesseraError } from '@tessera/errors';
import { expandDottedFields } from '@tessera/http';
import { createSchema, isPlainObject } from '@tessera/schema';
import { apiErrors } from '../errors.js';
import { parseSettings, type IndexSettings } from '../indexes/settings.js';

/** A template as stored in the cluster state and answered by `GET /.templates/<name>`. */
export interface IndexTemplate {
  _patterns: string[];
  _priority: number;
  _settings?: Partial<IndexSettings>;
  _schema?: Record<string, unknown>;
}

/** Bounds on what a client may store (the cluster state is one document, read by every index creation). */
export const TEMPLATES_MAX = 1000;
export const TEMPLATE_PATTERNS_MAX = 100;
export const TEMPLATE_NAME_BYTES_MAX = 245;
const PRIORITY_MAX = 2 ** 31 - 1;

const TEMPLATE_KEYS = new Set(['_patterns', '_priority', '_settings', '_schema']);

/** A template name: one path segment, 1–245 bytes, none of `/ \ * ? " < > | , # :` or space. */
export function checkTemplateName(name: string): void {
  if (name.length === 0) throw apiErrors.badTemplate(name, 'the name is empty');
  if (name === '__proto__') throw apiErrors.badTemplate(name, 'the name is reserved');
  if (Buffer.byteLength(name) > TEMPLATE_NAME_BYTES_MAX) throw apiErrors.badTemplate(name, `the name is longer than ${TEMPLATE_NAME_BYTES_MAX} bytes`);
  if (/[/\\*?"<>|\s,#:]/.test(name) || name.startsWith('.')) {
    throw apiErrors.badTemplate(name, "a name is one path segment: no '/', '\\', '*', '?', '\"', '<', '>', '|', ',', '#', ':', space, nor a leading '.'");
  }
}

/** Validate a template body (from a request or the config file); every problem is a 400 naming the template. */
export function parseTemplate(name: string, body: unknown): IndexTemplate {
  checkTemplateName(name);
  if (!isPlainObject(body)) throw apiErrors.badTemplate(name, 'a template must be an object');
  for (const key of Object.keys(body)) {
    if (key.length === 0 || key.startsWith('#')) continue;
    if (!TEMPLATE_KEYS.has(key)) throw apiErrors.badTemplate(name, `unknown key '${key}' (expected _patterns, _priority, _settings, _schema)`);
  }
  const patterns = body._patterns;
  if (!Array.isArray(patterns) || patterns.length === 0 || patterns.length > TEMPLATE_PATTERNS_MAX) {
    throw apiErrors.badTemplate(name, `'_patterns' must be a list of 1 to ${TEMPLATE_PATTERNS_MAX} index path patterns, such as ["/logs/*"]`);
  }
  for (const p of patterns) {
    if (typeof p !== 'string' || !p.startsWith('/') || Buffer.byteLength(p) > TEMPLATE_NAME_BYTES_MAX) {
      throw apiErrors.badTemplate(name, `pattern ${JSON.stringify(p)} must be a string starting with '/' (an index path, '*' matching any characters)`);
    }
  }
  const priority = body._priority ?? 0;
  if (typeof priority !== 'number' || !Number.isInteger(priority) || Math.abs(priority) > PRIORITY_MAX) {
    throw apiErrors.badTemplate(name, `'_priority' must be an integer from -${PRIORITY_MAX} to ${PRIORITY_MAX}`);
  }
  const template: IndexTemplate = { _patterns: patterns as string[], _priority: priority };
  try {
    if (body._settings !== undefined) template._settings = parseSettings(body._settings);
    if (body._schema !== undefined) {
      const schema = expandDottedFields(body._schema);
      if (!isPlainObject(schema)) throw apiErrors.badBody("'_schema' must be an object");
      // The schema an index would get from this template alone must be valid (types, options).
      createSchema(schema);
      template._schema = schema;
    }
  } catch (err) {
    if (err instanceof TesseraError && err.status === 400) throw apiErrors.badTemplate(name, err.message);
    throw err;
  }
  return template;
}

/** Does `pattern` (with `*` for any characters, `/` included) match the index path? */
export function patternMatches(pattern: string, path: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === path;
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (path.length < first.length + last.length || !path.startsWith(first) || !path.endsWith(last)) return false;
  // Greedy left to right: each middle part at its first occurrence after the previous one.
  let at = first.length;
  const end = path.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string;
    const found = path.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** The templates matching `path`, in the order they apply: lowest `_priority` first, then by name. */
export function matchingTemplates(templates: Readonly<Record<string, IndexTemplate>>, path: string): IndexTemplate[] {
  return Object.entries(templates)
    .filter(([, t]) => t._patterns.some((p) => patternMatches(p, path)))
    .sort(([a, ta], [b, tb]) => ta._priority - tb._priority || (a < b ? -1 : a > b ? 1 : 0))
    .map(([, t]) => t);
}

/**
 * The `_settings` and `_schema` a new index gets: the matching templates'
 * in order, then the request's. Undefined stays undefined when nothing gives
 * it (so `--strict` still asks a request without templates for `_settings`).
 */
export function withTemplates(templates: readonly IndexTemplate[], settings: Partial<IndexSettings> | undefined, schema: unknown)
  : { settings: Partial<IndexSettings> | undefined; schema: unknown } {
  let outSettings: Partial<IndexSettings> | undefined;
  let outSchema: Record<string, unknown> | undefined;
  for (const t of templates) {
    if (t._settings !== undefined) outSettings = { ...outSettings, ...t._settings };
    if (t._schema !== undefined) outSchema = outSchema === undefined ? t._schema : mergeSchemaBodies(outSchema, t._schema);
  }
  if (settings !== undefined) outSettings = { ...outSettings, ...settings };
  // A foreign or otherwise non-object request schema is left for the schema code to judge as it is.
  const body = schema === undefined || outSchema === undefined || !isPlainObject(schema) ? schema ?? outSchema
    : mergeSchemaBodies(outSchema, schema);
  return { settings: outSettings, schema: body };
}

/**
 * `over` on top of `base`, two `_schema` bodies. At the root, options (`_`
 * keys) merge key by key. A field both name takes `over`'s options when it
 * has any (else `base`'s), and its subfields merge the same way.
 */
function mergeSchemaBodies(base: Record<string, unknown>, over: Record<string, unknown>, root = true): Record<string, unknown> {
  const replaceOptions = !root && Object.keys(over).some(isOption);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) if (!(replaceOptions && isOption(key))) out[key] = value;
  for (const [key, value] of Object.entries(over)) {
    const below = out[key];
    out[key] = isOption(key) || !isPlainObject(below) || !isPlainObject(value) ? value : mergeSchemaBodies(below, value, false);
  }
  return out;
}

function isOption(key: string): boolean {
  return key.charCodeAt(0) === 0x5f;
}
