/**
 * Shard calls that name the index schema instead of carrying it (rpc
 * `SchemaReference`): every write, search, relay and INFO carries the
 * index's schema, and encoding it (msgpack over WebSocket, a structured
 * clone to a shard worker) for every call of every shard grows with the
 * schema (about 110–150 µs per WebSocket call for 100 fields, a few µs for
 * the benches' 4 fields). The schema now travels once per shard
 * copy and schema; later calls name it by its identity, and a node that
 * does not hold it (409 `schema_unknown`: restarted, copy dropped and made
 * again, schema held by another coordinator's call) gets the same call
 * again with the schema.
 *
 * The identity is a hash of the schema's content, computed once per schema
 * object (schemas are values, never mutated: a change makes a new object):
 * the same content has the same identity on every coordinator and after a
 * cluster state reload, and a schema that changed in any way has another,
 * so a node never uses a schema other than the one a call meant.
 *
 * One wrapper for every call kind, between the callers and a node's client
 * (a coordinator's, and a primary's relay connections to its replicas);
 * a client that passes params by reference (the in-process transport) is
 * used as it is: there the schema costs nothing to pass.
 */
import { createHash } from 'node:crypto';
import { toTesseraError } from '@tessera/errors';
import type { NodeCalls, SchemaReference } from './protocol.js';
import { DEFERRED, type RpcCallOptions, type RpcClient } from './transport.js';

/** The node's refusal of a call whose schema it does not hold (node `held-schemas.ts`). */
const SCHEMA_UNKNOWN = 'schema_unknown';

/** Shard copies whose last schema sent is remembered per node; past it the memory starts again (each copy's next call carries its schema). */
const COPIES_REMEMBERED_MAX = 10_000;

/** What the wrapper reads of a call: the copy it is for, and its schema when it carries one. */
type SchemaCall = { index?: unknown; shard?: unknown; schema?: unknown } & SchemaReference;

const identities = new WeakMap<object, string>();

/** The identity of a schema: SHA-256 of its JSON, computed once per schema object. */
export function schemaIdentity(schema: object): string {
  let id = identities.get(schema);
  if (id === undefined) identities.set(schema, id = createHash('sha256').update(JSON.stringify(schema)).digest('base64url'));
  return id;
}

/** `client`, its calls naming their schema once the node holds it; a client passing params by reference as it is. */
export function withSchemaReferences(client: RpcClient): RpcClient {
  return client.passesByReference === true ? client : new SchemaReferencingClient(client);
}

export class SchemaReferencingClient implements RpcClient {
  /**
   * Per shard copy (`<shard><index>`), the identity of the schema last sent
   * with one of its calls: a call with that schema names it, any other
   * carries its own (calls to one node arrive in the order they are made,
   * so the node holds it by the time the next is served).
   */
  private readonly sent = new Map<string, string>();

  constructor(private readonly inner: RpcClient) {}

  get closed(): boolean {
    return this.inner.closed;
  }

  get inFlight(): number {
    return this.inner.inFlight;
  }

  call<M extends keyof NodeCalls>(method: M, params: NodeCalls[M][0], options?: RpcCallOptions): Promise<NodeCalls[M][1]> {
    const call = params as SchemaCall;
    const schema = call.schema;
    if (schema === null || typeof schema !== 'object' || typeof call.index !== 'string' || typeof call.shard !== 'number') {
      return this.inner.call(method, params, options);
    }
    const id = schemaIdentity(schema);
    const copy = `${call.shard}${call.index}`;
    if (this.sent.get(copy) !== id) return this.inner.call(method, this.carrying(copy, id, call) as NodeCalls[M][0], options);
    const { schema: _carried, ...named } = call;
    named.schemaId = id;
    return this.inner.call(method, named as NodeCalls[M][0], options).catch((err: unknown) => {
      if (toTesseraError(err).code !== SCHEMA_UNKNOWN) throw err;
      return this.inner.call(method, this.carrying(copy, id, call) as NodeCalls[M][0], options);
    });
  }

  callNow<M extends keyof NodeCalls>(method: M, params: NodeCalls[M][0]): NodeCalls[M][1] | typeof DEFERRED {
    return this.inner.callNow === undefined ? DEFERRED : this.inner.callNow(method, params);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The call with its schema and the schema's identity, which the node holds from then on. */
  private carrying(copy: string, id: string, call: SchemaCall): SchemaCall {
    if (this.sent.size >= COPIES_REMEMBERED_MAX && !this.sent.has(copy)) this.sent.clear();
    this.sent.set(copy, id);
    return Object.assign({}, call, { schemaId: id });
  }
}
