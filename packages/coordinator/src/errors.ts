/**
 * Error catalogue of the coordinator (API.md §4). Each entry: a stable code,
 * the status and the detail text (the error body prefixes the reason phrase).
 */
import { TesseraError } from '@tessera/errors';

/** A document ID as one path segment: percent-encoded, dots too (a raw `.` would start a selector, API.md §1.3). */
export function encodeDocumentId(id: string): string {
  return encodeURIComponent(id).replace(/\./g, '%2E');
}

const e = (code: string, status: number, message: string) => new TesseraError(code, status, message);

export const apiErrors = {
  badPath: (why: string) => e('invalid_path', 400, why),
  badIndexName: (name: string, why: string) => e('invalid_index_name', 400, `Invalid index name '${name}': ${why}`),
  badId: (why: string) => e('invalid_id', 400, why),
  dotInWrittenId: (id: string, selector: string) => e('dot_in_document_id', 400,
    `'${id}.${selector}' has a '.' that does not start a known content extension, and a write never takes a selector: `
    + `percent-encode the dot as %2E to keep it in the ID (/${encodeDocumentId(`${id}.${selector}`)}); nothing was written`),
  badParam: (name: string, value: string, expected: string) =>
    e('invalid_parameter', 400, `Invalid value '${value}' for parameter '${name}': expected ${expected}`),
  badBody: (why: string) => e('invalid_body', 400, why),
  unknownReservedKey: (key: string) => e('invalid_reserved_key', 400, `Unknown reserved key '${key}'`),
  singleIndexOnly: () => e('single_index_only', 400, 'Method can only be used with single indexes'),
  badSettings: (why: string) => e('invalid_settings', 400, why),
  shardsImmutable: () => e('invalid_settings', 400, "It is not allowed to change 'number_of_shards' setting"),
  schemaImmutable: (field: string, option: string) =>
    e('schema_immutable', 400, `It is not allowed to change '${option}' of field '${field}'`),
  reservedIndexName: (index: string) =>
    e('reserved_index_name', 400, `Index name '${index}' is reserved: /.templates/, /.aliases/, /.keys/, /.dashboard/, /.openapi, /.nodes and /.snapshots/ are API paths`),
  badTemplate: (name: string, why: string) => e('invalid_template', 400, `Invalid template '${name}': ${why}`),
  templateNotFound: (name: string) => e('template_not_found', 404, `Template not found: ${name}`),
  badAlias: (name: string, why: string) => e('invalid_alias', 400, `Invalid alias '${name}': ${why}`),
  aliasNotFound: (name: string) => e('alias_not_found', 404, `Alias not found: ${name}`),
  aliasNamesIndex: (name: string) =>
    e('alias_conflict', 409, `${name} is an index: an alias may not take the name of an existing index`),
  indexNamesAlias: (name: string) =>
    e('alias_conflict', 409, `${name} is an alias: an index may not be created, changed or deleted under an alias's name (PUT or DELETE /.aliases${name.slice(0, -1)} changes the alias)`),
  aliasNeedsWriteIndex: (name: string) =>
    e('alias_needs_write_index', 400, `Alias ${name} names several indexes and no '_write_index': a single-index API cannot use it`),
  /** 401 (API.md §16.3): no key, a malformed header, or a key the server does not know; never says which key was sent. */
  unauthorized: (why: string) => new TesseraError('unauthorized', 401, why, { headers: { 'WWW-Authenticate': 'Bearer' } }),
  keyExpired: (name: string, at: string) =>
    new TesseraError('api_key_expired', 401, `API key '${name}' expired at ${at}`, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } }),
  forbidden: (name: string, why: string) => e('forbidden', 403, `API key '${name}' may not make this request: ${why}`),
  keysNeedMasterKey: () => e('api_keys_disabled', 403, 'API keys need a master key: start the server with --api-key (TESSERA_API_KEY)'),
  badKey: (name: string, why: string) => e('invalid_api_key', 400, `Invalid API key '${name}': ${why}`),
  keyNotFound: (name: string) => e('api_key_not_found', 404, `API key not found: ${name}`),
  keyExists: (name: string) => e('api_key_conflict', 409, `API key '${name}' exists: delete it first, or choose another name`),
  internalIndex: (index: string) => e('internal_index', 403, `Index '${index}' is internal and cannot be written`),
  documentNotFound: () => e('document_not_found', 404, 'Document not found'),
  indexNotFound: (index: string) => e('index_not_found', 404, `Index not found: ${index}`),
  dashboardFileNotFound: (name: string) => e('dashboard_file_not_found', 404, `The dashboard has no file '${name}'`),
  dashboardNotBuilt: () => e('dashboard_file_not_found', 404,
    'This server has no dashboard: its files were not built (`npm run build` bundles packages/dashboard)'),
  selectorNotFound: (selector: string) => e('selector_not_found', 404, `Selector not found: ${selector}`),
  /** `allow`: the methods valid for the resource, sent as the `Allow` header (RFC 9110 §15.5.6, API.md §4.2). */
  methodNotAllowed: (method: string, what: string, allow: string) =>
    new TesseraError('method_not_allowed', 405, `Method ${method} is not allowed on ${what}`, { headers: { Allow: allow } }),
  unsupportedMediaType: (mediaType: string) =>
    e('unsupported_media_type', 415, `Content type '${mediaType}' cannot be used here; send JSON, YAML or MessagePack`),
  badScript: (why: string) => e('invalid_script', 400, `Invalid '_script': ${why}`),
  scriptNotFound: (what: string) => e('script_not_found', 400, `Script not found: ${what}`),
  scriptInRestore: () => e('invalid_script', 400, "RESTORE stores documents as they are: '_script' is not run there"),
  scriptSchemaUnstable: () =>
    e('script_schema_unstable', 400, 'The script added fields unknown to the index schema again after the schema learnt them; give them types in _schema'),
  notAcceptable: (accept: string) => e('not_acceptable', 406, `No stored content of the document matches '${accept}'`),
  notImplemented: (method: string) => e('not_implemented', 501, `Method ${method} is not implemented`),
  snapshotConflict: (index: string) =>
    e('snapshot_conflict', 409, `Index ${index} was deleted or re-created while the snapshot was being taken: take it again`),
  noShardNode: (index: string, shard: number) =>
    e('no_shard_node', 503, `No node holds shard ${shard} of ${index}`),
  leaderUnavailable: (reason: string) =>
    e('leader_unavailable', 503, `No elected coordinator can take this request now (one is elected within the coordinators' lease): ${reason}`),
  leaderRequired: (reason: string) =>
    e('leader_required', 503, `Only the elected coordinator can run this request (it is forwarded there): ${reason}`),
  badLeaderCall: (why: string) => new TesseraError('rpc_bad_params', 500, `Bad coordinator call: ${why}`),
  noActiveNodes: () =>
    e('no_active_nodes', 503, 'No shard node is active to place a new index on: start one with `tessera node --join ws://<coordinator>:<rpc port>`'),
  nodeUnavailable: (index: string, shard: number, node: string) =>
    e('node_unavailable', 503, `Shard ${shard} of ${index} is on node '${node}', which is not active`),
};
