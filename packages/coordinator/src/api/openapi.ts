/**
 * The OpenAPI 3.1 document of the API (API.md §16.4), generated from the
 * route table (api/routes.ts): every path and operation is a route the
 * server dispatches, so the description cannot drift from the server.
 * Served at `GET /.openapi`; docs/openapi.json is the same document
 * (scripts/openapi.mjs writes it, a test compares the two).
 *
 * Custom methods (SEARCH, COUNT, INFO, UPDATE…) are not OpenAPI operations:
 * each is described as the POST its `:method` path suffix maps to (API.md
 * §3.2), with `x-tessera-method` naming the real method and the
 * `X-HTTP-Method-Override` header as the other spelling.
 */
import {
  ENDPOINT_DEFS, RESOURCE_DEFS,
  type BodyDoc, type OperationDoc, type QueryParam, type ResourceDef, type ResponseDoc, type Route, type SchemaName,
} from './routes.js';

type Json = Record<string, unknown>;

/** Methods OpenAPI has an operation for; the others are described as their POST mapping. */
const OPENAPI_METHODS = new Set(['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'PATCH']);

/** Serializers of request and response values (API.md §2.2, §2.3). */
const VALUE_TYPES = ['application/json', 'application/yaml', 'application/msgpack'];

/** Endpoints that need no API key (auth/actions.ts): the health checks and the dashboard's files. */
const OPEN_ENDPOINTS: ReadonlySet<string> = new Set(['healthz', 'readyz', 'dashboard', 'dashboard_file']);

/** Errors any operation may answer besides those its route names. */
const COMMON_ERRORS = [400, 401, 403, 405, 406, 500, 502, 503, 504];

const ERROR_PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad request: body, URL, header or parameter; override or mapping misuse (API.md §4.3).',
  401: 'An API key is configured and the request has none or a wrong one.',
  403: 'A key without the action or index; a write into an internal index.',
  404: 'Missing document, index, template, alias or key.',
  405: 'Method not valid for the resource; `Allow` lists those that are.',
  406: 'Nothing acceptable (type, encoding, stored content); no body.',
  409: 'Version mismatch, a name taken, or an index re-created while a snapshot began.',
  410: 'A snapshot\'s view of a shard is gone (released, unread too long, or its copy closed): take the snapshot again.',
  412: 'Strict mode: a new field without `_type`, a new index without `_settings`.',
  413: 'Body over the limit.',
  415: 'Opaque body where an object is required.',
  500: 'Unexpected internal error.',
  502: 'Shard node unreachable.',
  503: 'No primary, quorum or elected coordinator.',
  504: 'RPC timeout.',
};

const PARAMETERS: Readonly<Record<QueryParam, { description: string; schema: Json }>> = {
  commit: { description: 'Writes: reply only once durable on the primary.', schema: { $ref: '#/components/schemas/Flag' } },
  volatile: { description: 'Reads: primary copies only.', schema: { $ref: '#/components/schemas/Flag' } },
  echo: { description: 'Writes: answer the written object (default true).', schema: { $ref: '#/components/schemas/Flag' } },
  comments: { description: 'Include `#…` fields (`#docid`, `#shard`, `#rank`…) (default true).', schema: { $ref: '#/components/schemas/Flag' } },
  human: { description: 'Sizes and durations as strings (default true); false: bytes and seconds.', schema: { $ref: '#/components/schemas/Flag' } },
  pretty: { description: 'Indent the answer by 2.', schema: { $ref: '#/components/schemas/Flag' } },
  version: { description: 'Expected `_version` (API.md §5.6); 0: must not exist.', schema: { type: 'integer', minimum: 0 } },
  upsert: { description: 'Create the document when absent (API.md §5.3).', schema: { $ref: '#/components/schemas/Flag' } },
  selector: { description: 'Drill (`a.b`) or keep keys (`{a,b.c}`) of the answer (API.md §1.3).', schema: { type: 'string' } },
  q: { description: 'Query string (API.md §9.4); repeatable, ANDed.', schema: { type: 'string' } },
  query: { description: 'As `q`.', schema: { type: 'string' } },
  sort: { description: '`field`, `-field`, `field:ref` (distance); repeatable.', schema: { type: 'string' } },
  metric: { description: 'String distance for `sort=field:ref` (API.md §9.5).', schema: { type: 'string' } },
  offset: { description: 'First hit answered (default 0).', schema: { type: 'integer', minimum: 0 } },
  limit: { description: 'Hits answered (default 10; 0: aggregations only).', schema: { type: 'integer', minimum: 0 } },
  check_at_least: { description: 'Accepted; never changes results.', schema: { type: 'integer', minimum: 0 } },
};

const INDEX_PARAMETER_DESCRIPTION = 'An index path without its leading and trailing `/`, or a comma-separated list of them '
  + '(`a,b/c`). Indexes nest: `logs/2026` is the index `/logs/2026/`, its inner `/` sent as is, not percent-encoded '
  + '(OpenAPI path parameters cannot hold `/`, so generated clients may need to be told). An alias may stand for an index; '
  + 'SEARCH and COUNT also take items ending in `*` (every index with that prefix).';

const PATH_PARAMETERS: Readonly<Record<string, Json>> = {
  index: { name: 'index', in: 'path', required: true, description: INDEX_PARAMETER_DESCRIPTION, schema: { type: 'string' } },
  id: {
    name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 245 },
    description: 'Document ID; percent-encode `/ . : ,` in it. A known file extension after the first `.` selects stored content (`Lenna.png`); '
      + 'on reads another `.suffix` is a selector (`doc.name`), on writes it is refused (400).',
  },
  file: { name: 'file', in: 'path', required: true, description: 'A file of the dashboard, as its page names it.', schema: { type: 'string' } },
  name: { name: 'name', in: 'path', required: true, description: 'The name of the template or key.', schema: { type: 'string' } },
  alias: {
    name: 'alias', in: 'path', required: true, schema: { type: 'string' },
    description: 'The alias name: an index path without its leading `/` (`logs/current/`), nested like index paths.',
  },
};

/** Bodies described once (API.md §4.2, §5, §7, §9, §12, §16); `Flag` and `IndexSettings` are parts of others. */
const SCHEMAS: Readonly<Record<SchemaName | 'Flag' | 'IndexSettings', Json>> = {
  Flag: {
    description: 'A flag (API.md §2.1): no value, or true|t|1|yes|on / false|f|0|no|off.',
    type: 'string', enum: ['', 'true', 't', '1', 'yes', 'on', 'false', 'f', '0', 'no', 'off'],
  },
  Any: { description: 'Any value.' },
  Error: {
    description: 'Every error answer but HEAD and an unservable 406 (API.md §4.2).',
    type: 'object', required: ['status', 'type', 'message', 'code'],
    properties: {
      status: { type: 'integer' },
      type: { type: 'string', description: 'The reason phrase.' },
      message: { type: 'string', description: 'Reason phrase, `: `, detail.' },
      code: { type: 'string', description: 'Stable snake_case name of the error (docs/errors.md): branch on it, never on the message.' },
      script: { type: 'object', properties: { name: { type: 'string' }, line: { type: 'integer' } }, description: 'Script errors only.' },
    },
  },
  DocumentBody: {
    description: 'A document to index (API.md §5.1): fields, field-option objects, and the reserved keys `_id`, `_version`, `_script`, `_schema`, `_settings`.',
    type: 'object', additionalProperties: true,
    properties: {
      _id: { description: 'The ID, or `{"_type", "_value"}`.' },
      _version: { type: 'integer', minimum: 0 },
      _script: { description: 'A script for this request (API.md §11).' },
      _schema: { type: 'object' },
      _settings: { $ref: '#/components/schemas/IndexSettings' },
    },
  },
  Document: {
    description: 'A document as stored (API.md §5.7) with its ID and version; `#` fields unless `comments=false`.',
    type: 'object', additionalProperties: true, required: ['_id'],
    properties: {
      _id: { description: 'In the index\'s `_id` type.' },
      _version: { type: 'integer' },
      '#docid': { type: 'integer' },
      '#shard': { type: 'integer' },
    },
  },
  JsonPatch: {
    description: 'RFC 6902 operations, plus `incr`/`decr` (API.md §5.4).',
    type: 'array',
    items: {
      type: 'object', required: ['op', 'path'],
      properties: {
        op: { type: 'string', enum: ['add', 'remove', 'replace', 'move', 'copy', 'test', 'incr', 'decr'] },
        path: { type: 'string' }, from: { type: 'string' }, value: {}, limit: { type: 'number' },
      },
    },
  },
  DocumentInfo: {
    description: 'API.md §5.8.',
    type: 'object',
    properties: {
      docid: { type: 'integer' }, version: { type: 'integer' }, shard: { type: 'integer' },
      data: { type: 'array', items: { type: 'object', properties: { content_type: { type: 'string' }, type: { type: 'string' } } } },
      terms: { type: 'object' }, values: { type: 'object' },
    },
  },
  IndexSettings: {
    type: 'object', additionalProperties: false,
    properties: {
      number_of_shards: { type: 'integer', minimum: 1, maximum: 9999 },
      number_of_replicas: { type: 'integer', minimum: 0, maximum: 9998 },
    },
  },
  IndexDefinition: {
    description: 'API.md §7.1.',
    type: 'object', properties: { _settings: { $ref: '#/components/schemas/IndexSettings' }, _schema: { type: 'object' } },
  },
  IndexDescription: {
    description: 'API.md §7.2.',
    type: 'object',
    properties: {
      _settings: {
        type: 'object',
        properties: {
          number_of_shards: { type: 'integer' }, number_of_replicas: { type: 'integer' },
          shards: { type: 'array', items: { type: 'array', items: { type: 'string' } }, description: 'Nodes of each shard, primary first.' },
        },
      },
      _schema: { type: 'object' },
    },
  },
  IndexInfo: {
    description: 'API.md §7.4.',
    type: 'object',
    properties: {
      endpoint: { type: 'string' }, doc_count: { type: 'integer' }, last_id: { type: 'integer' }, doc_del: { type: 'integer' },
      av_length: { type: 'number' }, doc_len_lower: { type: 'integer' }, doc_len_upper: { type: 'integer' },
      has_positions: { type: 'boolean' }, shards: { type: 'array', items: { type: 'string' } },
      uuid: { type: 'string' }, revision: { type: 'integer' },
    },
  },
  SearchRequest: {
    description: 'API.md §9.1; unknown keys are ignored.',
    type: 'object',
    properties: {
      _query: { description: 'The query DSL (API.md §9.3) or a query string (§9.4); default `"*"`.' },
      _offset: { type: 'integer', minimum: 0 },
      _limit: { type: 'integer', minimum: 0 },
      _check_at_least: { type: 'integer', minimum: 0 },
      _sort: { description: 'API.md §9.5.' },
      _selector: { type: 'string' },
      _aggs: { type: 'object', description: 'Aggregations (API.md §10).' },
      _aggregations: { type: 'object', description: 'As `_aggs`.' },
    },
  },
  SearchResponse: {
    description: 'API.md §9.2.',
    type: 'object', required: ['hits', 'count', 'total'],
    properties: {
      aggregations: { type: 'object' },
      hits: { type: 'array', items: { $ref: '#/components/schemas/Document' } },
      count: { type: 'integer', description: 'Hits answered.' },
      total: { type: 'integer', description: 'Matching documents, exact.' },
      took: { description: 'A duration string, or seconds with `human=false`.' },
    },
  },
  CountResponse: { type: 'object', required: ['total'], properties: { total: { type: 'integer' } } },
  DumpItem: {
    description: 'A document as DUMP writes and RESTORE reads it (API.md §7.6, §7.7).',
    type: 'object', additionalProperties: true,
    properties: {
      _id: {},
      _data: {
        type: 'array',
        items: { type: 'object', properties: { _content_type: { type: 'string' }, _type: { type: 'string' }, _blob: { type: 'string' } } },
      },
      _op_type: { type: 'string', enum: ['index', 'update', 'merge', 'patch'] },
    },
  },
  RestoreReport: {
    description: 'API.md §7.7: `items[i]` answers input item i.',
    type: 'object',
    properties: {
      prepared: { type: 'integer' }, processed: { type: 'integer' }, indexed: { type: 'integer' }, total: { type: 'integer' },
      items: { type: 'array', items: { oneOf: [{ $ref: '#/components/schemas/Document' }, { $ref: '#/components/schemas/Error' }] } },
      took: {},
    },
  },
  ServerInfo: {
    description: 'API.md §12.1.',
    type: 'object',
    properties: {
      name: { type: 'string' }, cluster_name: { type: 'string' }, server: { type: 'string' },
      versions: { type: 'object', additionalProperties: { type: 'string' } }, options: { type: 'object' },
      nodes: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
      state: { type: 'string', enum: ['READY', 'SETUP', 'JOINING', 'WAITING', 'BAD'] },
    },
  },
  Node: {
    description: 'API.md §12.2.',
    type: 'object', required: ['name', 'active'],
    properties: {
      name: { type: 'string' }, active: { type: 'boolean' }, leader: { type: 'boolean' }, local: { type: 'boolean' },
      host: { type: 'string' }, http_port: { type: 'integer' }, role: { type: 'string' },
      shards: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            index: { type: 'string' }, shard: { type: 'integer' }, primary: { type: 'boolean' }, seq: { type: 'integer' }, in_sync: { type: 'boolean' },
          },
        },
      },
    },
  },
  Template: {
    description: 'API.md §16.1.',
    type: 'object', required: ['_patterns'],
    properties: {
      _patterns: { type: 'array', items: { type: 'string' } }, _priority: { type: 'integer' },
      _settings: { $ref: '#/components/schemas/IndexSettings' }, _schema: { type: 'object' },
    },
  },
  Alias: {
    description: 'API.md §16.2.',
    type: 'object', required: ['_indexes'],
    properties: { _indexes: { type: 'array', items: { type: 'string' } }, _write_index: { type: 'string' } },
  },
  KeyDefinition: {
    description: 'API.md §16.3.',
    type: 'object', required: ['_name', '_actions'],
    properties: {
      _name: { type: 'string' },
      _actions: { type: 'array', items: { type: 'string', enum: ['read', 'search', 'write', 'admin'] } },
      _indexes: { type: 'array', items: { type: 'string' } },
      _expires_at: { type: 'string', format: 'date-time' },
    },
  },
  Key: {
    description: 'A key as listed: never its secret nor its digest.',
    type: 'object', additionalProperties: true, properties: { _name: { type: 'string' } },
  },
  CreatedKey: {
    allOf: [{ $ref: '#/components/schemas/Key' }, { type: 'object', required: ['_key'], properties: { _key: { type: 'string', description: 'The secret, answered once.' } } }],
  },
  Health: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } },
  Readiness: { type: 'object', properties: { status: { type: 'string', enum: ['ready', 'not ready'] }, reason: { type: 'string' } } },
};

const ref = (schema: SchemaName): Json => ({ $ref: `#/components/schemas/${schema}` });

function valueContent(schema: Json, types: readonly string[] = VALUE_TYPES): Json {
  return Object.fromEntries(types.map((type) => [type, { schema }]));
}

function responseSchema(doc: ResponseDoc): Json | undefined {
  if (doc.schema === undefined) return undefined;
  if (doc.shape === 'array') return { type: 'array', items: ref(doc.schema) };
  if (doc.shape === 'map') return { type: 'object', additionalProperties: ref(doc.schema) };
  return ref(doc.schema);
}

function response(doc: ResponseDoc): Json {
  const out: Json = { description: doc.description };
  if (doc.headers !== undefined) out.headers = Object.fromEntries(doc.headers.map((h) => [h, { $ref: `#/components/headers/${h}` }]));
  const schema = responseSchema(doc);
  if (doc.mediaType !== undefined) out.content = { [doc.mediaType]: { schema: { type: 'string' } } };
  else if (schema !== undefined) out.content = valueContent(schema);
  return out;
}

function requestBody(body: BodyDoc): Json {
  const types = body.also === 'ndjson' ? [...VALUE_TYPES, 'application/x-ndjson'] : VALUE_TYPES;
  const schema = body.also === 'ndjson' ? { type: 'array', items: ref(body.schema) } : ref(body.schema);
  const content = valueContent(schema, types);
  if (body.also === 'content') content['*/*'] = { schema: { description: 'Any other type: stored content, byte-exact (API.md §6).' } };
  return { required: body.required, content };
}

/** One operation; `mapped` for a custom method described as its POST mapping. */
function operation(route: Route<unknown>, path: string, mapped: boolean, open: boolean): Json {
  const doc: OperationDoc = route.doc;
  const parameters: Json[] = [...pathParameters(path), ...(doc.query ?? []).map((name) => ({ $ref: `#/components/parameters/${name}` }))];
  if (mapped) {
    parameters.push({
      name: 'X-HTTP-Method-Override', in: 'header', required: false, schema: { type: 'string', enum: [route.method] },
      description: `Instead of the \`:${route.method.toLowerCase()}\` suffix: \`POST\` to the path without it, with this header.`,
    });
  }
  const responses: Json = {};
  for (const [status, r] of Object.entries(doc.responses)) responses[status] = response(r);
  for (const status of [...COMMON_ERRORS, ...(doc.errors ?? [])].sort((a, b) => a - b)) {
    if (responses[status] === undefined) responses[status] = { $ref: `#/components/responses/Error${status}` };
  }
  const description = [
    doc.description,
    mapped ? `The ${route.method} method (API.md §3.2): send \`${route.method}\` itself, \`POST\` (or \`GET\`) to this path ending in `
      + `\`:${route.method.toLowerCase()}\`, or \`POST\` to the path without it and \`X-HTTP-Method-Override: ${route.method}\`.` : undefined,
  ].filter((line) => line !== undefined).join('\n\n');
  const out: Json = { operationId: route.operation, summary: doc.summary };
  if (description !== '') out.description = description;
  if (parameters.length > 0) out.parameters = parameters;
  if (doc.body !== undefined) out.requestBody = requestBody(doc.body);
  out.responses = responses;
  if (open) out.security = [];
  if (mapped) out['x-tessera-method'] = route.method;
  return out;
}

function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => PATH_PARAMETERS[m[1] as string] as Json);
}

function addResource(paths: Json, def: ResourceDef<string, unknown>, routes: readonly Route<unknown>[], open: boolean): void {
  const item: Json = {};
  if (def.alsoAt !== undefined) item.description = `Also served at ${def.alsoAt.map((p) => `\`${p}\``).join(', ')}.`;
  paths[def.path] = item;
  for (const route of routes) {
    if (OPENAPI_METHODS.has(route.method)) {
      item[route.method.toLowerCase()] = operation(route, def.path, false, open);
    } else {
      const mappedPath = `${def.path}:${route.method.toLowerCase()}`;
      paths[mappedPath] = { post: operation(route, def.path, true, open) };
    }
  }
}

/** The routes of a definition, each with its operationId: the resource kind and method (unique, unlike metric labels). */
function labelled<H>(def: ResourceDef<string, H>): Route<H>[] {
  return def.routes.map((r) => ({ ...r, operation: `${def.kind}.${r.method.toLowerCase()}` }));
}

/** The OpenAPI 3.1 document of this server (`version`: the server's). */
export function openApiDocument(version: string): Json {
  const paths: Json = {};
  for (const def of RESOURCE_DEFS) {
    addResource(paths, def, labelled(def), false);
    for (const view of def.views ?? []) {
      paths[view.path] = { get: { operationId: `${def.kind}.get${view.path.replace(/\W/g, '_')}`, summary: view.summary, responses: { 200: response(view.response) } } };
    }
  }
  for (const def of ENDPOINT_DEFS) addResource(paths, def, labelled(def), OPEN_ENDPOINTS.has(def.kind));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tessera',
      version,
      description: 'Distributed document index, content store and search server with a Xapiand-compatible REST API. '
        + 'Generated from the server\'s route table; API.md is the full contract. Any request body may also be YAML or MessagePack, '
        + 'and answers follow `Accept` (JSON, YAML, MessagePack). Indexes are paths ending in `/` and may nest (`/logs/2026/`).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    paths,
    components: {
      schemas: SCHEMAS,
      parameters: Object.fromEntries(Object.entries(PARAMETERS).map(([name, p]) => [name, { name, in: 'query', required: false, ...p }])),
      headers: {
        Location: { description: 'Where the created resource is.', schema: { type: 'string' } },
        Allow: { description: 'The methods of the resource.', schema: { type: 'string' } },
        'WWW-Authenticate': { description: '`Bearer`.', schema: { type: 'string' } },
      },
      responses: Object.fromEntries(Object.entries(ERROR_PHRASES).map(([status, description]) => {
        const headers = status === '405' ? { Allow: { $ref: '#/components/headers/Allow' } }
          : status === '401' ? { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } } : undefined;
        const body = status === '406' ? {} : { content: valueContent(ref('Error')) };
        return [`Error${status}`, { description, ...(headers === undefined ? {} : { headers }), ...body }];
      })),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'With a master key configured (`--api-key`), every request but the health checks needs a key (API.md §16.3).' },
      },
    },
    security: [{ apiKey: [] }, {}],
  };
}
