/**
 * Every accepted form of `_script` (API.md §11.2, INTERFACE.md "Script
 * object"), normalised into one of three references before anything runs:
 *
 * - `{"_type": "script", "_lua": {"_body", "_name"?, "_params"?}}`, the same
 *   with `_chai` (legacy), `_body`/`_name`/`_params` directly in `_script`, or
 *   `_value` holding a body or such an object → inline (a body, maybe named),
 *   or named (a name alone);
 * - `{"_type": "foreign/object", "_foreign": "<index>/<id>", "_params"?}`,
 *   a trailing `.script` ignored → foreign;
 * - a string: the name of a known script, else a body (the caller decides).
 */
import { isPlainObject } from '@tessera/schema';
import { apiErrors } from '../errors.js';

export type ScriptParams = Record<string, unknown>;

export type ScriptReference =
  | { kind: 'inline'; body: string; name?: string; params?: ScriptParams }
  | { kind: 'named'; name: string; params?: ScriptParams }
  | { kind: 'foreign'; index: string; id: string; params?: ScriptParams }
  /** The short form: a script name or a body. */
  | { kind: 'text'; text: string };

/** Longest script name (a name is remembered in the cluster state). */
export const SCRIPT_NAME_BYTES_MAX = 256;

const SCRIPT_KEYS = new Set(['_type', '_lua', '_chai', '_value', '_body', '_name', '_params', '_foreign']);
const LUA_KEYS = new Set(['_body', '_name', '_params']);

/** A `_script` value (from a write body or `_schema._script`) as a reference. */
export function parseScript(value: unknown): ScriptReference {
  if (typeof value === 'string') {
    if (value.length === 0) throw apiErrors.badScript('a script cannot be empty');
    return { kind: 'text', text: value };
  }
  if (!isPlainObject(value)) throw apiErrors.badScript('expected a string (a name or a body) or a script object');
  for (const key of Object.keys(value)) {
    if (!SCRIPT_KEYS.has(key)) throw apiErrors.badScript(`unknown key '${key}' in a script object`);
  }
  const type = value._type;
  if (type === 'foreign/object' || (type === undefined && value._foreign !== undefined)) return foreign(value);
  if (type !== undefined && type !== 'script') {
    throw apiErrors.badScript(`'_type' of a script must be 'script' or 'foreign/object', not ${JSON.stringify(type)}`);
  }
  if (value._foreign !== undefined) throw apiErrors.badScript("'_foreign' needs '_type': 'foreign/object'");
  const outerParams = params(value._params);
  const holders = ['_lua', '_chai', '_value'].filter((key) => value[key] !== undefined);
  if (holders.length > 1) throw apiErrors.badScript(`give one of ${holders.map((k) => `'${k}'`).join(', ')}, not several`);
  const holder = holders[0];
  if (holder === undefined) return lua(value, outerParams);
  if (value._body !== undefined || value._name !== undefined) {
    throw apiErrors.badScript(`'_body' and '_name' go inside '${holder}', not beside it`);
  }
  const inner = value[holder];
  // `_value` may hold the body itself.
  if (holder === '_value' && typeof inner === 'string') return inline(inner, undefined, outerParams);
  if (!isPlainObject(inner)) throw apiErrors.badScript(`'${holder}' must be an object with '_body', '_name' and '_params'`);
  for (const key of Object.keys(inner)) {
    if (!LUA_KEYS.has(key)) throw apiErrors.badScript(`unknown key '${key}' in '${holder}'`);
  }
  return lua(inner, mergeParams(params(inner._params), outerParams));
}

/** `{_body?, _name?}` with its parameters. */
function lua(holder: Record<string, unknown>, scriptParams: ScriptParams | undefined): ScriptReference {
  const body = holder._body;
  const name = holder._name === undefined ? undefined : scriptName(holder._name);
  if (body === undefined) {
    if (name === undefined) throw apiErrors.badScript("a script needs '_body' or '_name'");
    return scriptParams === undefined ? { kind: 'named', name } : { kind: 'named', name, params: scriptParams };
  }
  if (typeof body !== 'string') throw apiErrors.badScript("'_body' must be a string");
  return inline(body, name, scriptParams);
}

function inline(body: string, name: string | undefined, scriptParams: ScriptParams | undefined): ScriptReference {
  if (body.length === 0) throw apiErrors.badScript('a script body cannot be empty');
  const out: ScriptReference = { kind: 'inline', body };
  if (name !== undefined) out.name = name;
  if (scriptParams !== undefined) out.params = scriptParams;
  return out;
}

function foreign(value: Record<string, unknown>): ScriptReference {
  const path = value._foreign;
  if (typeof path !== 'string') throw apiErrors.badScript("'_foreign' must be '<index path>/<document id>'");
  for (const key of ['_lua', '_chai', '_value', '_body', '_name']) {
    if (value[key] !== undefined) throw apiErrors.badScript(`a foreign script takes no '${key}'`);
  }
  const target = path.endsWith('.script') ? path.slice(0, -'.script'.length) : path;
  const slash = target.lastIndexOf('/');
  const index = target.slice(0, slash + 1).replace(/^\/?/, '/');
  const id = target.slice(slash + 1);
  if (slash <= 0 || id.length === 0 || index === '/') {
    throw apiErrors.badScript(`'_foreign' must be '<index path>/<document id>', not ${JSON.stringify(path)}`);
  }
  const scriptParams = params(value._params);
  return scriptParams === undefined ? { kind: 'foreign', index, id } : { kind: 'foreign', index, id, params: scriptParams };
}

function params(value: unknown): ScriptParams | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) throw apiErrors.badScript("'_params' must be an object of named parameters");
  return value;
}

function scriptName(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw apiErrors.badScript("'_name' must be a non-empty string");
  if (Buffer.byteLength(value) > SCRIPT_NAME_BYTES_MAX) {
    throw apiErrors.badScript(`'_name' is longer than ${SCRIPT_NAME_BYTES_MAX} bytes`);
  }
  return value;
}

/** Defaults overridden by call-site values. */
export function mergeParams(defaults: ScriptParams | undefined, overrides: ScriptParams | undefined): ScriptParams | undefined {
  if (defaults === undefined) return overrides;
  if (overrides === undefined) return defaults;
  return { ...defaults, ...overrides };
}
