/**
 * The Tessera client: one method per operation of the API (API.md), over an
 * undici connection pool (undici sends the custom methods — SEARCH, UPDATE,
 * INFO… — as they are). Answers are decoded JSON, typed; error answers are
 * thrown as `TesseraError`s (errors.ts).
 */
import { Pool, type Dispatcher } from 'undici';
import { importInBatches, ndjsonValues, type BatchLimits, type ImportProgress, type ImportSummary, type RestoreReport } from './bulk.js';
import { hitsOf, pagesAfter } from './cursor.js';
import { errorFromResponse } from './errors.js';
import { documentPath, entryPath, indexPath, queryString, type QueryValue } from './paths.js';
import type {
  Aggregations, Alias, ApiKey, Content, CreatedApiKey, DocumentBody, DocumentId, DocumentInfo, DumpItem, Hit, IndexDefinition,
  IndexDescription, IndexInfo, Indexes, IndexSettings, JsonObject, KeyDefinition, NodeInfo, PatchOperation, Readiness, Schema,
  SearchRequest, SearchResult, ServerInfo, StoredDocument, Template,
} from './types.js';

export const DEFAULT_URL = 'http://127.0.0.1:8880';

export interface ClientOptions {
  /** The server (any coordinator of a cluster): `http://host:8880`, or `https://…`. Default `http://127.0.0.1:8880`. */
  url?: string;
  /** The master key or a scoped key, sent as `Authorization: Bearer <key>` (API.md §16.3). */
  apiKey?: string;
  /** Connections of the pool (default 8). */
  connections?: number;
  /** Your own undici dispatcher (TLS options, a proxy, a mock): the client then neither creates nor closes one. */
  dispatcher?: Dispatcher;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export interface WriteOptions {
  /** Answer only once the write is durable on the primary (fsync). */
  commit?: boolean;
  /** The `_version` the document must have now (0: must not exist); otherwise a `ConflictError` (409) and no write (API.md §5.6). */
  version?: number;
}

export interface UpdateOptions extends WriteOptions {
  /** Create the document when it does not exist (API.md §5.3). */
  upsert?: boolean;
}

export interface ReadOptions {
  /** Read primary copies only. */
  volatile?: boolean;
}

export interface ImportOptions extends BatchLimits {
  /** Each batch answers once durable. */
  commit?: boolean;
  /** Called after each batch with the counts so far. */
  onProgress?: (progress: ImportProgress) => void;
}

export interface ContentOptions extends WriteOptions {
  /**
   * `replace` (PUT, default): the content becomes the whole document, as a PUT
   * of JSON replaces it; `add` (UPDATE): linked beside the JSON body and the
   * other types, replacing an older entry of the same type (API.md §6).
   */
  mode?: 'replace' | 'add';
}

interface RequestInit {
  query?: Readonly<Record<string, QueryValue>>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with `contentType`. */
  body?: string | Uint8Array;
  contentType?: string;
  accept?: string;
}

/** One index of the client, with its document type: `client.index<Account>('bank')`. */
export class IndexClient<T = JsonObject> {
  constructor(private readonly client: Tessera, readonly name: string) {}

  get(id: DocumentId, options?: ReadOptions): Promise<StoredDocument<T>> { return this.client.get<T>(this.name, id, options); }
  exists(id: DocumentId): Promise<boolean> { return this.client.exists(this.name, id); }
  put(id: DocumentId, document: T, options?: WriteOptions): Promise<StoredDocument<T>> { return this.client.put<T>(this.name, id, document, options); }
  post(document: DocumentBody<T>, options?: WriteOptions): Promise<StoredDocument<T>> { return this.client.post<T>(this.name, document, options); }
  update(id: DocumentId, partial: Partial<T>, options?: UpdateOptions): Promise<StoredDocument<T>> {
    return this.client.update<T>(this.name, id, partial, options);
  }
  patch(id: DocumentId, operations: readonly PatchOperation[], options?: UpdateOptions): Promise<StoredDocument<T>> {
    return this.client.patch<T>(this.name, id, operations, options);
  }
  delete(id: DocumentId, options?: WriteOptions): Promise<void> { return this.client.delete(this.name, id, options); }
  search<const A extends Aggregations = Aggregations>(request: SearchRequest<A> | string = {}): Promise<SearchResult<T, A>> {
    return this.client.search<T, A>(this.name, request);
  }
  searchAfter<const A extends Aggregations = Aggregations>(request: SearchRequest<A> = {}): SearchCursor<T, A> {
    return this.client.searchAfter<T, A>(this.name, request);
  }
  count(request?: SearchRequest | string): Promise<number> { return this.client.count(this.name, request); }
  import(documents: Iterable<DocumentBody<T>> | AsyncIterable<DocumentBody<T>>, options?: ImportOptions): Promise<ImportSummary> {
    return this.client.import(this.name, documents, options);
  }
  dump(): AsyncIterable<DumpItem<T>> { return this.client.dump<T>(this.name); }
}

/** The pages or hits of a search, by `_search_after`: `for await (const hit of cursor)`, or `cursor.pages()`. */
export class SearchCursor<T, A extends Aggregations> implements AsyncIterable<Hit<T>> {
  constructor(private readonly request: SearchRequest<A>, private readonly fetchPage: (r: SearchRequest<A>) => Promise<SearchResult<T, A>>) {}

  /** Each page as the server answers it (`total` and `aggregations` on every page). */
  pages(): AsyncIterable<SearchResult<T, A>> {
    return pagesAfter(this.request, this.fetchPage);
  }

  [Symbol.asyncIterator](): AsyncIterator<Hit<T>> {
    return hitsOf(this.pages())[Symbol.asyncIterator]();
  }
}

/** What the collections below ask of the client. */
interface Requester {
  json<R>(method: string, path: string, init?: RequestInit): Promise<R>;
  send(method: string, path: string): Promise<unknown>;
}

/** `/.templates/` or `/.aliases/`: entries by name, each created or replaced whole. */
export class AdminCollection<V> {
  constructor(private readonly request: Requester, private readonly collection: 'templates' | 'aliases') {}

  get(name: string): Promise<V> {
    return this.request.json('GET', entryPath(this.collection, name));
  }

  /** Every entry, by name. */
  list(): Promise<Record<string, V>> {
    return this.request.json('GET', `/.${this.collection}/`);
  }

  /** Create or replace the entry; the answer is it as stored. */
  put(name: string, value: V): Promise<V> {
    return this.request.json('PUT', entryPath(this.collection, name), { json: value });
  }

  async delete(name: string): Promise<void> {
    await this.request.send('DELETE', entryPath(this.collection, name));
  }
}

/** `/.keys/`: scoped API keys. */
export class KeyCollection {
  constructor(private readonly request: Requester) {}

  /** Create a key: the answer's `_key` is the secret, given this once (only a hash is kept). */
  create(definition: KeyDefinition): Promise<CreatedApiKey> {
    return this.request.json('POST', '/.keys/', { json: definition });
  }

  /** Every key: names, scopes, expiry, never secrets. */
  list(): Promise<ApiKey[]> {
    return this.request.json('GET', '/.keys/');
  }

  get(name: string): Promise<ApiKey> {
    return this.request.json('GET', entryPath('keys', name));
  }

  /** Revoke the key, at once on every coordinator. */
  async delete(name: string): Promise<void> {
    await this.request.send('DELETE', entryPath('keys', name));
  }
}

export class Tessera {
  private readonly origin: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly headers: Record<string, string>;
  /** Index templates, `/.templates/` (API.md §16.1): applied to indexes created after them. */
  readonly templates: AdminCollection<Template>;
  /** Aliases, `/.aliases/` (API.md §16.2): `put` replaces one atomically, a search sees the old indexes or the new, never a mix. */
  readonly aliases: AdminCollection<Alias>;
  /** API keys, `/.keys/` (API.md §16.3): master key only. */
  readonly keys: KeyCollection;

  constructor(options: ClientOptions = {}) {
    this.origin = new URL(options.url ?? DEFAULT_URL).origin;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Pool(this.origin, { connections: options.connections ?? 8 });
    this.headers = { ...options.headers, ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }) };
    const request: Requester = { json: (method, path, init) => this.json(method, path, init), send: (method, path) => this.send(method, path) };
    this.templates = new AdminCollection<Template>(request, 'templates');
    this.aliases = new AdminCollection<Alias>(request, 'aliases');
    this.keys = new KeyCollection(request);
  }

  /** Closes the connections (not a dispatcher given in the options). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** One index, with the type of its documents. */
  index<T = JsonObject>(name: string): IndexClient<T> {
    return new IndexClient<T>(this, name);
  }

  // ---- documents (API.md §5) ------------------------------------------------

  get<T = JsonObject>(index: string, id: DocumentId, options: ReadOptions = {}): Promise<StoredDocument<T>> {
    return this.json('GET', documentPath(index, id), { query: { volatile: options.volatile } });
  }

  /** Whether the document exists (HEAD). */
  exists(index: string, id: DocumentId): Promise<boolean> {
    return this.head(documentPath(index, id));
  }

  /** Index (replace) the document under `id`; the index is created if missing. */
  put<T = JsonObject>(index: string, id: DocumentId, document: T, options: WriteOptions = {}): Promise<StoredDocument<T>> {
    return this.json('PUT', documentPath(index, id), { json: document, query: writeQuery(options) });
  }

  /** Index the document under a new ID (or its `_id`): the answer carries it. */
  post<T = JsonObject>(index: string, document: DocumentBody<T>, options: WriteOptions = {}): Promise<StoredDocument<T>> {
    return this.json('POST', indexPath(index), { json: document, query: writeQuery(options) });
  }

  /** Merge `partial` into the document (objects key by key, anything else replaced); the answer is the whole merged document. */
  update<T = JsonObject>(index: string, id: DocumentId, partial: Partial<T>, options: UpdateOptions = {}): Promise<StoredDocument<T>> {
    return this.json('UPDATE', documentPath(index, id), { json: partial, query: { ...writeQuery(options), upsert: options.upsert } });
  }

  /** Apply a JSON Patch (with `incr`/`decr`): all operations or none. */
  patch<T = JsonObject>(index: string, id: DocumentId, operations: readonly PatchOperation[], options: UpdateOptions = {}): Promise<StoredDocument<T>> {
    return this.json('PATCH', documentPath(index, id), { json: operations, query: { ...writeQuery(options), upsert: options.upsert } });
  }

  async delete(index: string, id: DocumentId, options: WriteOptions = {}): Promise<void> {
    await this.send('DELETE', documentPath(index, id), { query: writeQuery(options) });
  }

  /** What the index holds of a document: terms, values, stored entries (API.md §5.8). */
  documentInfo(index: string, id: DocumentId): Promise<DocumentInfo> {
    return this.json('INFO', documentPath(index, id), { query: { human: false } });
  }

  // ---- stored content (API.md §6) --------------------------------------------

  /** Store bytes of a type that is not JSON, YAML, MessagePack or NDJSON (`image/png`) under the document. */
  putContent(index: string, id: DocumentId, bytes: Uint8Array | string, contentType: string, options: ContentOptions = {}): Promise<StoredDocument> {
    return this.json(options.mode === 'add' ? 'UPDATE' : 'PUT', documentPath(index, id), { body: bytes, contentType, query: writeQuery(options) });
  }

  /** The stored content of that type (default: the document's default entry, its last stored), byte-exact. */
  async getContent(index: string, id: DocumentId, contentType = '*/*'): Promise<Content> {
    const reply = await this.send('GET', documentPath(index, id), { accept: contentType });
    return { contentType: String(reply.headers['content-type'] ?? ''), bytes: reply.bytes };
  }

  /** Unlink the content of that type (an empty UPDATE of that type; absent is a no-op). */
  removeContent(index: string, id: DocumentId, contentType: string, options: WriteOptions = {}): Promise<StoredDocument> {
    return this.json('UPDATE', documentPath(index, id), { body: '', contentType, query: writeQuery(options) });
  }

  // ---- search (API.md §9, §10) -----------------------------------------------

  /**
   * Search one index or several (`['a', 'b']`, `logs*`). `request` is a
   * body (query DSL, sort, aggregations, highlights, cursor) or a query
   * string (`'age:[20..30] AND gender:female'`). Aggregation results are typed
   * from the request; `client.index<T>(name).search(…)` infers them with `T` set.
   */
  search<T = JsonObject, const A extends Aggregations = Aggregations>(indexes: Indexes, request: SearchRequest<A> | string = {}): Promise<SearchResult<T, A>> {
    return this.json('SEARCH', indexPath(indexes), { json: searchBody(request) });
  }

  /**
   * Every hit of a search, by `_search_after` pages of `_limit` (default 100)
   * hits: no depth bound, no hit twice. Without `_sort`, by relevance.
   */
  searchAfter<T = JsonObject, const A extends Aggregations = Aggregations>(indexes: Indexes, request: SearchRequest<A> = {}): SearchCursor<T, A> {
    return new SearchCursor<T, A>(request, (page) => this.search<T, A>(indexes, page));
  }

  /** The number of matches. */
  async count(indexes: Indexes, request: SearchRequest | string = {}): Promise<number> {
    return (await this.json<{ total: number }>('COUNT', indexPath(indexes), { json: searchBody(request) })).total;
  }

  // ---- indexes (API.md §7) ---------------------------------------------------

  /** Create the index, or merge `_schema` into it and change `number_of_replicas` (idempotent). */
  createIndex(indexes: Indexes, definition: IndexDefinition = {}, options: Pick<WriteOptions, 'commit'> = {}): Promise<IndexDescription> {
    return this.json('PUT', indexPath(indexes), { json: definition, query: { commit: options.commit } });
  }

  getIndex(index: string): Promise<IndexDescription> {
    return this.json('GET', indexPath(index));
  }

  indexExists(indexes: Indexes): Promise<boolean> {
    return this.head(indexPath(indexes));
  }

  /** Delete the index with its documents and content. */
  async deleteIndex(indexes: Indexes): Promise<void> {
    await this.send('DELETE', indexPath(indexes));
  }

  settings(index: string): Promise<IndexSettings & { shards?: string[][] }> {
    return this.json('GET', indexPath(index), { query: { selector: '_settings' } });
  }

  schema(index: string): Promise<Schema> {
    return this.json('GET', indexPath(index), { query: { selector: '_schema' } });
  }

  /** Statistics (INFO): document count, lengths, shards. */
  indexInfo(index: string): Promise<IndexInfo> {
    return this.json('INFO', indexPath(index));
  }

  /** Returns once every shard of the indexes is durable. */
  async commit(indexes: Indexes): Promise<void> {
    await this.send('COMMIT', indexPath(indexes));
  }

  // ---- import and dump (API.md §7.6, §7.7) -----------------------------------

  /**
   * Index many documents through RESTORE, streamed as NDJSON in batches.
   * Documents with `_id` replace the document of that ID (an interrupted
   * import can be run again); others get a new ID. A refused document is in
   * `failures` and the rest goes on.
   */
  import<T = JsonObject>(index: string, documents: Iterable<DocumentBody<T>> | AsyncIterable<DocumentBody<T>>, options: ImportOptions = {}): Promise<ImportSummary> {
    const path = indexPath(index);
    return importInBatches(documents as Iterable<JsonObject> | AsyncIterable<JsonObject>,
      (ndjson) => this.json<RestoreReport>('RESTORE', path, { body: ndjson, contentType: 'application/x-ndjson', query: { commit: options.commit } }),
      options);
  }

  /** Every document of the index as stored, content included (`_data`, base64), read as a stream. */
  async* dump<T = JsonObject>(index: string): AsyncGenerator<DumpItem<T>, void, undefined> {
    const response = await this.open('DUMP', indexPath(index), { accept: 'application/x-ndjson' });
    // A caller that stops early returns the iteration of the body, which destroys it: the connection is not left taken.
    yield* ndjsonValues<DumpItem<T>>(response.body);
  }

  // ---- administration (API.md §12, §16) ----------------------------------------

  /** `GET /`: the server, its versions and nodes. */
  server(): Promise<ServerInfo> {
    return this.json('GET', '/');
  }

  /** The nodes of the cluster with their shard copies. */
  nodes(): Promise<NodeInfo[]> {
    return this.json('GET', '/.nodes');
  }

  /** Prometheus text exposition (API.md §12.3). */
  async metrics(): Promise<string> {
    return (await this.send('GET', '/:metrics', { accept: 'text/plain' })).bytes.toString('utf8');
  }

  /** `GET /readyz`: ready or not, and why (no API key needed). */
  async ready(): Promise<Readiness> {
    const response = await this.dispatcher.request({ origin: this.origin, method: 'GET', path: '/readyz', headers: this.headers });
    return (await response.body.json()) as Readiness;
  }

  // ---- transport ---------------------------------------------------------------

  /** The response of a request, its body unread; an error answer is thrown. */
  private async open(method: string, path: string, init: RequestInit = {}): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { ...this.headers, accept: init.accept ?? 'application/json' };
    let body: string | Uint8Array | undefined = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['content-type'] = 'application/json';
    } else if (init.contentType !== undefined) {
      headers['content-type'] = init.contentType;
    }
    const response = await this.dispatcher.request({
      origin: this.origin, method, path: path + queryString(init.query ?? {}), headers, body,
    });
    if (response.statusCode >= 400) {
      // HEAD answers carry no body (API.md §4.2).
      const text = method === 'HEAD' ? (await response.body.dump(), '') : await response.body.text();
      throw errorFromResponse(response.statusCode, parseJson(text), headerValue(response.headers.allow));
    }
    return response;
  }

  private async send(method: string, path: string, init: RequestInit = {}): Promise<{ headers: Dispatcher.ResponseData['headers']; bytes: Buffer }> {
    const response = await this.open(method, path, init);
    return { headers: response.headers, bytes: Buffer.from(await response.body.arrayBuffer()) };
  }

  private async json<R>(method: string, path: string, init: RequestInit = {}): Promise<R> {
    const { bytes } = await this.send(method, path, init);
    return (bytes.length === 0 ? undefined : JSON.parse(bytes.toString('utf8'))) as R;
  }

  /** HEAD: true on 200, false on 404, an error otherwise. */
  private async head(path: string): Promise<boolean> {
    try {
      await this.send('HEAD', path);
      return true;
    } catch (err) {
      if (err instanceof Error && (err as { status?: unknown }).status === 404) return false;
      throw err;
    }
  }
}

function writeQuery(options: WriteOptions): Record<string, QueryValue> {
  return { commit: options.commit, version: options.version };
}

function searchBody<A extends Aggregations>(request: SearchRequest<A> | string): SearchRequest<A> {
  return typeof request === 'string' ? { _query: request } : request;
}

/** The decoded JSON of an error answer, or its text when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
