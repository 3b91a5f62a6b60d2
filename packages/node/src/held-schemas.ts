/**
 * The index schema each shard copy of the node was last sent in full, with
 * its identity (rpc `SchemaReference`): a call that names a schema by its
 * identity is given the one held only when the identity is the same, so a
 * copy never indexes or searches with a schema other than the one the call
 * meant. Any other identity — the schema changed, the node restarted, the
 * copy was dropped — is refused with 409 `schema_unknown`, and the caller
 * sends the call again with the schema.
 *
 * One schema per copy: the calls of a copy name the index's current schema,
 * so one is all a copy needs; and the node hands the copy the same object
 * call after call, which the engine keeps as its own (no comparison of a
 * decoded copy per write).
 */
import type { SchemaReference, ShardRef } from '@tessera/rpc';
import { nodeErrors } from './errors.js';

type Schema = Record<string, unknown>;

/** What the node reads of a call that names its schema. */
export type SchemaCall = ShardRef & SchemaReference & { schema?: unknown };

export class HeldSchemas {
  private readonly held = new Map<string, { id: string; schema: Schema }>();

  /**
   * The call with its schema: as sent (held from now on under the call's
   * identity), or the one held under the identity it names.
   */
  resolve<P extends SchemaCall>(copy: string, method: string, call: P): P {
    const id = call.schemaId;
    if (typeof id !== 'string' || id === '') throw nodeErrors.badCall(method, 'schemaId must be a non-empty string');
    const schema = call.schema;
    if (isSchema(schema)) {
      this.held.set(copy, { id, schema });
      return call;
    }
    if (schema !== undefined && schema !== null) throw nodeErrors.badCall(method, 'schema must be an object');
    const held = this.held.get(copy);
    if (held === undefined || held.id !== id) throw nodeErrors.schemaUnknown(call.index, call.shard, id);
    // Object.assign, not `{ ...call, schema }`: a spread with a key the source lacks costs ~2 µs on Node 20's V8, ~0.1 µs so.
    return Object.assign({}, call, { schema: held.schema });
  }

  /** The copy is gone (dropped): its next call carries its schema again. */
  forget(copy: string): void {
    this.held.delete(copy);
  }

  clear(): void {
    this.held.clear();
  }
}

function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
