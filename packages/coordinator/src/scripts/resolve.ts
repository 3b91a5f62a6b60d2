/**
 * Which script a write runs, resolved by the coordinator into what the
 * shard's primary needs: the body, the parameters, the name (for messages)
 * and the method (`_method`). The write's own `_script` wins; `_script: null`
 * runs nothing; otherwise the index default `_schema._script` runs (API.md
 * §11.1). Named scripts come from the cluster state; a foreign script is the
 * `script` field of a stored document, read through the ordinary document
 * path, its stored `_params` overridden by the call's.
 */
import type { WriteScript } from '@tessera/rpc';
import { apiErrors } from '../errors.js';
import { mergeParams, parseScript, type ScriptParams, type ScriptReference } from './forms.js';
import { NAMED_SCRIPT_BYTES_MAX, type NamedScripts } from './named-scripts.js';

/** How the resolver reads the document holding a foreign script. */
export interface ScriptDocuments {
  /** The stored body of document `id` (as written in the path) of `index`; undefined when there is none. */
  read(index: string, id: string): Promise<Record<string, unknown> | undefined>;
}

/** A short-form string that reads as a name: never a Lua chunk on its own. */
const NAME_LIKE = /^[A-Za-z_][\w.:-]*$/;

export class ScriptResolver {
  constructor(private readonly named: NamedScripts, private readonly documents: ScriptDocuments) {}

  /** The script of a write: `own` is the body's `_script` (absent: undefined), `schema` the index schema. */
  async forWrite(own: unknown, schema: Record<string, unknown>, method: string): Promise<WriteScript | undefined> {
    if (own === null) return undefined;
    const value = own === undefined ? schema._script : own;
    if (value === undefined || value === null) return undefined;
    return this.resolve(parseScript(value), method);
  }

  private async resolve(ref: ScriptReference, method: string): Promise<WriteScript> {
    switch (ref.kind) {
      case 'inline':
        if (ref.name !== undefined) {
          if (Buffer.byteLength(ref.body) > NAMED_SCRIPT_BYTES_MAX) {
            throw apiErrors.badScript(`a named script's body is at most ${NAMED_SCRIPT_BYTES_MAX} bytes`);
          }
          await this.named.remember(ref.name, ref.body);
        }
        return script(ref.body, ref.params, ref.name, method);
      case 'named': {
        const body = this.named.body(ref.name);
        if (body === undefined) throw apiErrors.scriptNotFound(`no script is named '${ref.name}'`);
        return script(body, ref.params, ref.name, method);
      }
      case 'text': {
        const body = this.named.body(ref.text);
        if (body !== undefined) return script(body, undefined, ref.text, method);
        if (NAME_LIKE.test(ref.text)) throw apiErrors.scriptNotFound(`no script is named '${ref.text}'`);
        return script(ref.text, undefined, undefined, method);
      }
      case 'foreign':
        return this.foreign(ref, method);
    }
  }

  private async foreign(ref: Extract<ScriptReference, { kind: 'foreign' }>, method: string): Promise<WriteScript> {
    const where = `${ref.index}${ref.id}`;
    const doc = await this.documents.read(ref.index, ref.id);
    if (doc === undefined) throw apiErrors.scriptNotFound(`document ${where} does not exist`);
    if (doc.script === undefined || doc.script === null) throw apiErrors.scriptNotFound(`document ${where} has no 'script' field`);
    const stored = parseScript(doc.script);
    if (stored.kind === 'foreign') throw apiErrors.badScript(`the script of ${where} is itself foreign`);
    const resolved = await this.resolve(stored, method);
    const params = mergeParams(resolved.params, ref.params);
    return script(resolved.body, params, resolved.name ?? where, method);
  }
}

function script(body: string, params: ScriptParams | undefined, name: string | undefined, method: string): WriteScript {
  const out: WriteScript = { body, method };
  if (params !== undefined) out.params = params;
  if (name !== undefined) out.name = name;
  return out;
}
