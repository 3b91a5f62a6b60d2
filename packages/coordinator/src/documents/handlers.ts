/**
 * The document API (API.md §5): index, get, update, patch, delete, info.
 * The coordinator validates and normalises, resolves the index and the `_id`
 * type, picks the shard by `xxhash(id) mod number_of_shards`, and sends one
 * call to the shard's primary copy, which serialises, checks versions, merges
 * and stores; the result is relayed to the shard's replicas before the
 * client is answered (replication/replicator.ts). Reads go to the primary.
 * A write's script (`_script`, else the index default) is resolved here
 * (scripts/resolve.ts) and run by the primary after the merge.
 */
import { blobLength, bodyOf, DEFERRED, type BlobBytes, type ContentLink, type ContentReadCall, type DocumentReply, type GetCall, type RpcClient, type WriteCall, type WriteReply } from '@tessera/rpc';
import { toTesseraError } from '@tessera/errors';
import { apiErrors, encodeDocumentId } from '../errors.js';
import type { IndexRegistry } from '../indexes/registry.js';
import type { IndexMeta } from '../state/cluster-state.js';
import type { Replicator } from '../replication/replicator.js';
import { parseSettings } from '../indexes/settings.js';
import type { RequestContext } from '../request/context.js';
import { isInternalIndex } from '../request/path.js';
import { humanBytes } from '../response/human.js';
import type { Reply } from '../response/respond.js';
import { chooseContent, extensionType, INPLACE_TYPE, openBlob } from './content.js';
import { applySelector, selectOrNull } from '../response/selector.js';
import type { ShardRouter } from '../routing.js';
import { NamedScripts } from '../scripts/named-scripts.js';
import { ScriptResolver } from '../scripts/resolve.js';
import { convertId, detectIdType, generateId, idTypeFromName, type DocumentId, type IdType } from './ids.js';
import { checkDocumentLimits, type DocumentLimits, foldDocument, isPlainObject, type FoldResult, type Schema } from '@tessera/schema';

/** A write `prepare`d: where it goes, its stored form, the form to index when that differs, the versions it expects. */
export interface Prepared {
  target: Target;
  body: Record<string, unknown>;
  indexed: Record<string, unknown> | undefined;
  expected: number[] | undefined;
  /**
   * With `tentative` growth: the index schema the document grows `from`
   * and `to` (the target's schema, not yet the index's). Undefined when the
   * document fits the schema as it is.
   */
  grows?: { from: Schema; to: Schema } | undefined;
}

/** A document that brings new fields: grow the index schema before the write is sent (`now`), or only once it is accepted (`tentative`). */
export type SchemaGrowth = 'now' | 'tentative';

/** Where a document lives: its index, converted ID and shard. */
export class Target {
  constructor(private readonly registry: IndexRegistry, readonly meta: IndexMeta, readonly id: DocumentId, readonly shard: number) {}

  /** The primary's client, resolved when used (a write waits out a failover instead of failing here). */
  get client(): RpcClient {
    return this.registry.client(this.meta.path, this.meta.allocation[this.shard - 1]?.[0], this.shard);
  }
}

export class DocumentHandlers {
  private readonly scripts: ScriptResolver;
  /** Single writes that grow an index's schema, one at a time per index (`prepareAndSend`). */
  private readonly growthTurns = new Turns();

  constructor(private readonly registry: IndexRegistry, private readonly replicator: Replicator, private readonly router: ShardRouter,
    private readonly limits: DocumentLimits) {
    this.scripts = new ScriptResolver(new NamedScripts(registry), { read: (index, id) => this.storedBody(index, id) });
  }

  /** The write path to the shards (RESTORE batches use it too). */
  get replication(): Replicator {
    return this.replicator;
  }

  /** GET and HEAD of a document; answered synchronously when the primary's transport can (a cached document in the embedded server). */
  get(ctx: RequestContext): Reply | Promise<Reply> {
    const target = this.locate(ctx);
    if (!target) throw apiErrors.documentNotFound();
    const replication = this.replicator;
    const params: GetCall = { index: target.meta.path, shard: target.shard, id: target.id };
    const doc = replication.readNow(target.meta, target.shard, 'doc.get', params);
    if (doc !== DEFERRED) return this.answerGet(ctx, target, doc);
    // Across a wire, a body comes as its JSON alone: the answer splices it, and parses it only for another form.
    params.bodiesAsJson = acrossAWire(target);
    return replication.read(target.meta, target.shard, 'doc.get', params).then((read) => this.answerGet(ctx, target, read));
  }

  private answerGet(ctx: RequestContext, target: Target, doc: DocumentReply | null): Reply | Promise<Reply> {
    if (!doc) throw apiErrors.documentNotFound();
    // `/idx/id.png`: an extension the media-type table knows asks for that content (§6); other selectors drill the body.
    const extension = ctx.options.selector === undefined && ctx.path.selector !== undefined ? extensionType(ctx.path.selector) : undefined;
    if (doc.content !== undefined || extension !== undefined) {
      const choice = chooseContent(extension ?? ctx.req.headers.accept, doc.content ?? []);
      if (choice.kind === 'none') throw apiErrors.notAcceptable(extension ?? ctx.req.headers.accept ?? '*/*');
      if (choice.kind === 'stored') return this.blob(ctx, target, choice.entry);
      if (extension !== undefined) return this.presentDocument(ctx, doc, target.shard, undefined);
    }
    return this.presentDocument(ctx, doc, target.shard, ctx.options.selector ?? ctx.path.selector);
  }

  /** A stored blob as the response: its type, its exact length (HEAD too), its bytes read from the primary as the client takes them. */
  private async blob(ctx: RequestContext, target: Target, entry: ContentLink): Promise<Reply> {
    const headers = { 'Content-Type': entry.type };
    if (ctx.method === 'HEAD') return { status: 200, headers, stream: (async function* () { /* HEAD: no body */ })(), length: entry.size };
    const ref = { index: target.meta.path, shard: target.shard };
    const stream = await openBlob(entry, (from, length, verify) =>
      this.replicator.read(target.meta, target.shard, 'doc.content', { ...ref, ...entry, from, length, verify } satisfies ContentReadCall));
    return { status: 200, headers, stream, length: entry.size };
  }

  private presentDocument(ctx: RequestContext, doc: DocumentReply, shard: number, selector: string | undefined): Reply {
    if (ctx.method === 'HEAD') return { status: 200 };
    if (selector === undefined && doc.bodyJson !== undefined) return new PresentedDocument(doc, shard, ctx.options.comments, doc.bodyJson);
    const value = present(ctx.options.comments, bodyOf(doc), doc, shard);
    return { status: 200, value: selector === undefined ? value : applySelector(value, selector) };
  }

  async info(ctx: RequestContext): Promise<Reply> {
    const target = this.locate(ctx);
    if (!target) throw apiErrors.documentNotFound();
    const doc = await this.replicator.read(target.meta, target.shard, 'doc.info',
      { index: target.meta.path, shard: target.shard, id: target.id, schema: target.meta.schema });
    if (!doc) throw apiErrors.documentNotFound();
    const value: Record<string, unknown> = { docid: doc.docid, version: doc.version };
    if (target.meta.settings.number_of_shards > 1) value.shard = target.shard;
    const data: Array<Record<string, unknown>> = [{ content_type: INPLACE_TYPE, type: 'inplace' }];
    for (const entry of doc.content ?? []) {
      data.push({
        content_type: entry.type, type: 'stored', volume: entry.volume, offset: entry.offset,
        size: ctx.options.human ? humanBytes(entry.size) : entry.size,
      });
    }
    value.data = data;
    value.terms = doc.terms;
    value.values = doc.values;
    // `INFO /idx/doc.terms.name` drills into the answer as a GET does (API.md §1.3).
    const selector = ctx.options.selector ?? ctx.path.selector;
    return { status: 200, value: selector === undefined ? value : applySelector(value, selector) };
  }

  /**
   * PUT or UPDATE of a body that is not a document (API.md §6): PUT makes
   * the document `{}` plus this one entry, UPDATE adds or replaces the entry
   * of that type (an empty body unlinks it), keeping the JSON body and the
   * other entries. `_version` + 1, `?version`/409, `?commit`, `?upsert` as
   * for any write; the echo is the JSON body, never the blob.
   */
  async storeContent(ctx: RequestContext, op: 'index' | 'update'): Promise<Reply> {
    const index = ctx.singleIndex();
    if (ctx.path.id === undefined) throw apiErrors.badPath('Stored content needs a document path: /<index>/<id>');
    const type = (ctx.req.headers['content-type'] ?? '').trim();
    // A large body stays in the pieces it arrived in, down to the volume file (BlobBytes).
    const parts = ctx.req.bodyParts;
    const bytes: BlobBytes = parts === undefined ? ctx.req.body : parts.length === 1 ? parts[0]! : parts;
    if (op === 'index' && blobLength(bytes) === 0) throw apiErrors.badBody('Stored content needs a body; an empty body unlinks content with UPDATE');
    const upsert = ctx.method === 'UPSERT' || ctx.params.flag('upsert', false);
    const write = await this.prepare(index, {}, ctx.path.id, ctx.params.unsigned('version'));
    const call: Omit<WriteCall, 'index' | 'shard' | 'id' | 'commit'> = op === 'index'
      ? { op, body: write.body, expectedVersions: write.expected, content: { type, bytes } }
      : { op, upsert, expectedVersions: write.expected, content: { type, bytes } };
    const reply = await this.send(write.target, ctx.options.commit, call, ctx.routedAt);
    if (!ctx.options.echo) return { status: 204 };
    return { status: 200, value: echoed(ctx, reply, write.target.shard) };
  }

  /** PUT /idx/id, POST /idx/ (generated ID), RESTORE of one document. */
  async index(ctx: RequestContext, generateNewId: boolean): Promise<Reply> {
    const index = ctx.singleIndex();
    const body = ctx.object('Document');
    const { write, reply } = await this.prepareAndSend(ctx, index, body, generateNewId ? undefined : ctx.path.id,
      (w) => ({ op: 'index', body: w.body, indexed: w.indexed, expectedVersions: w.expected, script: w.script }));
    const location = `${index}${encodeDocumentId(String(reply.id))}`;
    if (!ctx.options.echo) {
      return { status: generateNewId ? 201 : 204, headers: generateNewId ? { Location: location } : {} };
    }
    return { status: 200, value: echoed(ctx, reply, write.target.shard), headers: generateNewId ? { Location: location } : {} };
  }

  /** UPDATE (merge) and PATCH (JSON Patch). */
  async update(ctx: RequestContext, kind: 'update' | 'patch'): Promise<Reply> {
    const index = ctx.singleIndex();
    const upsert = ctx.method === 'UPSERT' || ctx.params.flag('upsert', false);
    let sent: { write: PreparedWrite; reply: WriteReply };
    if (kind === 'patch') {
      const patch = ctx.value();
      if (!Array.isArray(patch)) throw apiErrors.badBody('A PATCH body must be a JSON Patch array');
      sent = await this.prepareAndSend(ctx, index, {}, ctx.path.id, (w) => ({ op: 'patch', patch, upsert, expectedVersions: w.expected, script: w.script }));
    } else {
      sent = await this.prepareAndSend(ctx, index, ctx.object('Document'), ctx.path.id,
        (w) => ({ op: 'update', body: w.body, indexed: w.indexed, upsert, expectedVersions: w.expected, script: w.script }));
    }
    const { write, reply } = sent;
    if (!ctx.options.echo) return { status: 204 };
    return { status: 200, value: echoed(ctx, reply, write.target.shard) };
  }

  async delete(ctx: RequestContext): Promise<Reply> {
    const index = ctx.singleIndex();
    if (isInternalIndex(index)) throw apiErrors.internalIndex(index);
    const target = this.locate(ctx);
    if (!target) throw apiErrors.documentNotFound();
    const version = ctx.params.unsigned('version');
    // A DELETE runs only a script of its own (body `_script`, seeing `_old_doc`), never the index default.
    const script = ctx.req.body.length === 0 ? undefined : ctx.object('A DELETE body')._script;
    await this.send(target, ctx.options.commit, {
      op: 'delete',
      expectedVersions: version === undefined ? undefined : [version],
      script: script === undefined ? undefined : await this.scripts.forWrite(script, {}, ctx.method),
    }, ctx.routedAt);
    return { status: 204 };
  }

  /** Where an existing document would be; undefined when its index (or `_id` type) does not exist yet. */
  private locate(ctx: RequestContext): Target | undefined {
    const index = ctx.singleIndex();
    const meta = this.registry.get(index);
    const idText = ctx.path.id;
    if (!meta || idText === undefined || !meta.idType) return undefined;
    const id = convertId(idText, meta.idType);
    return this.target(meta, id);
  }

  private target(meta: IndexMeta, id: DocumentId): Target {
    // A class, not an object literal with a getter: the literal defined its accessor per request (2 % of a cached GET, profiled).
    return new Target(this.registry, meta, id, this.router.shardOf(id, meta.settings.number_of_shards));
  }

  /** `prepare` with the expected version of `?version`, and the script the write runs. */
  private async prepareWrite(ctx: RequestContext, index: string, raw: Record<string, unknown>, idText: string | undefined): Promise<PreparedWrite> {
    const write = await this.prepare(index, raw, idText, ctx.params.unsigned('version'), true, 'tentative');
    const script = await this.scripts.forWrite(raw._script, write.target.meta.schema, ctx.method);
    // A literal, not a spread: the handler's hot path (see `present`).
    return { target: write.target, body: write.body, indexed: write.indexed, expected: write.expected, grows: write.grows, script };
  }

  /**
   * Prepare a single write and send it. A document that brings new fields
   * grows the index schema only once its write is accepted: a write the
   * shard refuses (404 of an UPDATE without upsert, 409) leaves the schema
   * as it was, byte for byte. The grown schema is reserved in the cluster
   * state before the write is sent, so a coordinator stopped between the
   * shard's acceptance and the fold leaves it for the next one to fold
   * (registry `reserveGrowth`). Such writes take turns per index, so the
   * growth each one sends is the one recorded; writes that grow nothing
   * never wait for them. A failure that is not a refusal (a lost node, a
   * timeout: the write may have been applied) records the growth all the same.
   */
  private async prepareAndSend(ctx: RequestContext, index: string, raw: Record<string, unknown>, idText: string | undefined,
    callOf: (write: PreparedWrite) => Omit<WriteCall, 'index' | 'shard' | 'id' | 'commit'>): Promise<{ write: PreparedWrite; reply: WriteReply }> {
    const first = await this.prepareWrite(ctx, index, raw, idText);
    const grows = first.grows;
    if (grows === undefined) return { write: first, reply: await this.send(first.target, ctx.options.commit, callOf(first), ctx.routedAt) };
    return this.growthTurns.run(index, async () => {
      // Prepared again only when the schema grew while this write waited (the same field: nothing left to grow; another type: 400).
      const write = this.registry.get(index)?.schema === grows.from ? first : await this.prepareWrite(ctx, index, raw, idText);
      if (write.grows === undefined) return { write, reply: await this.send(write.target, ctx.options.commit, callOf(write), ctx.routedAt) };
      const reservation = await this.registry.reserveGrowth(write.target.meta, write.grows.to);
      let accepted = true;
      try {
        return { write, reply: await this.send(write.target, ctx.options.commit, callOf(write), ctx.routedAt) };
      } catch (err) {
        accepted = toTesseraError(err).status >= 500;
        throw err;
      } finally {
        if (accepted) await this.fold(index, write.grows.from, raw, undefined, reservation);
        else await this.registry.releaseGrowth(reservation);
      }
    });
  }

  /** A stored document's body (a foreign script's holder), through the ordinary read path. */
  private async storedBody(index: string, idText: string): Promise<Record<string, unknown> | undefined> {
    const meta = this.registry.get(index);
    if (!meta || !meta.idType) return undefined;
    const target = this.target(meta, convertId(idText, meta.idType));
    const doc = await target.client.call('doc.get', { index: meta.path, shard: target.shard, id: target.id });
    return doc === null ? undefined : bodyOf(doc);
  }

  /**
   * Validate a write body, take out its control keys, create or update the
   * index it names, type the document against the schema, and resolve the
   * document ID and its shard. Shared by single writes and RESTORE items
   * (which store documents as they are: no script). Synchronous when nothing
   * has to wait (an existing index the body does not change, a schema the
   * document does not grow, a known largest numeric ID): a RESTORE prepares
   * most items without a promise.
   */
  prepare(index: string, raw: Record<string, unknown>, idText: string | undefined, queryVersion: number | undefined, scripted = false,
    growth: SchemaGrowth = 'now'): Prepared | Promise<Prepared> {
    if (isInternalIndex(index)) throw apiErrors.internalIndex(index);
    if (raw._script !== undefined && !scripted) throw apiErrors.scriptInRestore();
    // What the document would cost, before the index or its schema is touched (API.md §13).
    checkDocumentLimits(raw, this.limits);
    const expected: number[] = [];
    if (queryVersion !== undefined) expected.push(queryVersion);
    if (raw._version !== undefined) {
      const v = raw._version;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw apiErrors.badBody("'_version' must be an unsigned integer");
      expected.push(v);
    }
    const settings = parseSettings(raw._settings);
    const { idType: declaredIdType, value: bodyId } = idFromBody(raw._id);

    const text = idText ?? (bodyId === undefined ? undefined : String(bodyId));
    const idType: IdType | undefined = declaredIdType ?? (text !== undefined ? detectIdType(text) : undefined);
    const change = { settings: raw._settings === undefined ? undefined : settings, schema: raw._schema, idType: idType ?? 'uuid' };
    const versions = expected.length > 0 ? expected : undefined;
    const meta = this.registry.unchanged(index, change);
    if (meta !== undefined) return this.prepareIn(index, meta, raw, text, versions, growth);
    return this.registry.ensure(index, change).then((ensured) => this.prepareIn(index, ensured, raw, text, versions, growth));
  }

  /** `prepare` once the index exists: the ID checked, then the body folded into the schema (grown as `growth` says). */
  private prepareIn(index: string, meta: IndexMeta, raw: Record<string, unknown>, text: string | undefined,
    expected: number[] | undefined, growth: SchemaGrowth): Prepared | Promise<Prepared> {
    // The ID before the fold: a write refused for its ID must not grow the schema.
    const id = text === undefined ? undefined : convertId(text, meta.idType as IdType);
    const first = foldDocument(meta.schema, raw);
    if (!first.changed) return this.routed(meta, raw, id, first.document, expected, undefined);
    if (growth === 'tentative') return this.routed({ ...meta, schema: first.schema }, raw, id, first.document, expected, { from: meta.schema, to: first.schema });
    // The fold grew the schema: route with the index as it is now.
    return this.fold(index, meta.schema, raw, first).then((folded) => this.routed(this.registry.get(index) ?? meta, raw, id, folded, expected, undefined));
  }

  /** `prepare` once folded into `meta`'s schema: the form to index beside the stored one, and the document ID and its shard. */
  private routed(meta: IndexMeta, raw: Record<string, unknown>, id: DocumentId | undefined,
    folded: { stored: Record<string, unknown>; unstored: boolean }, expected: number[] | undefined, grows: Prepared['grows']): Prepared | Promise<Prepared> {
    // `_store: false` fields are indexed but not stored: the shard gets the form to index beside the stored one.
    const indexed = folded.unstored ? foldDocument(meta.schema, raw, { keepUnstored: true }).document.stored : undefined;
    const type = meta.idType as IdType;
    const prepared = (docId: DocumentId): Prepared => ({ target: this.target(meta, docId), body: folded.stored, indexed, expected, grows });
    if (id === undefined) {
      if (type !== 'integer' && type !== 'positive' && type !== 'float') return prepared(generateId(type, 0));
      const next = this.registry.nextNumericId(meta);
      return next instanceof Promise ? next.then(prepared) : prepared(next);
    }
    const noted = typeof id === 'number' ? this.registry.noteNumericId(meta, id) : undefined;
    return noted instanceof Promise ? noted.then(() => prepared(id)) : prepared(id);
  }

  /**
   * Type the document against the index schema (API.md §8): its stored form,
   * with new fields folded into the schema before the write is routed, so
   * shards never disagree on a field's type. A value of the wrong type is a
   * 400 and nothing is written. `first` is the fold with `schema` when done already;
   * `settles` the growth reservation the fold settles.
   */
  private async fold(index: string, schema: FoldResult['schema'], raw: Record<string, unknown>,
    first: FoldResult = foldDocument(schema, raw), settles?: string): Promise<{ stored: Record<string, unknown>; unstored: boolean }> {
    if (!first.changed && settles === undefined) return first.document;
    return this.registry.updateSchema(index, (current) => {
      const folded = current === schema ? first : foldDocument(current, raw);
      return { schema: folded.schema, changed: folded.changed, result: folded.document };
    }, settles);
  }

  /**
   * The write on the shard's primary, under its primary term; resolves once
   * every in-sync replica has it too. A script or a patch that added fields
   * the schema lacks is refused by the primary with its result: the fields
   * are folded into the index schema (serialised, as for any document) and
   * the write is made once more, read-modify-write, version check and script
   * included. RESTORE makes its patch items so refused again through here.
   */
  async send(target: Target, commit: boolean, call: Omit<WriteCall, 'index' | 'shard' | 'id' | 'commit'>, routedAt?: number): Promise<WriteReply> {
    try {
      return await this.sendOnce(target, commit, call, routedAt);
    } catch (err) {
      const result = scriptResultOf(err);
      if (result === undefined) throw err;
      await this.fold(target.meta.path, target.meta.schema, result);
      const current = this.registry.get(target.meta.path);
      if (current === undefined || current.uuid !== target.meta.uuid) throw err;
      try {
        return await this.sendOnce(this.target(current, target.id), commit, call, routedAt);
      } catch (again) {
        throw scriptResultOf(again) === undefined ? again : apiErrors.scriptSchemaUnstable();
      }
    }
  }

  /** `routedAt`: the cluster state's revision the request was routed from, on a coordinator that is not elected (RequestContext). */
  private sendOnce(target: Target, commit: boolean, call: Omit<WriteCall, 'index' | 'shard' | 'id' | 'commit'>, routedAt: number | undefined): Promise<WriteReply> {
    const full: WriteCall = Object.assign({
      index: target.meta.path, shard: target.shard, id: target.id, commit, schema: target.meta.schema,
    }, call);
    if (full.script === undefined) delete full.script;
    return this.replicator.write(target.meta, target.shard, full, routedAt);
  }
}

/** The script a single write runs, beside what `prepare` gives. */
type PreparedWrite = Prepared & { script: Awaited<ReturnType<ScriptResolver['forWrite']>> };

/** Work that takes turns per key: each runs once the one before it for the same key has settled. */
class Turns {
  private readonly last = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.last.get(key) ?? Promise.resolve();
    const turn = before.then(work, work);
    const settled = turn.catch(() => undefined);
    this.last.set(key, settled);
    // The map holds a key only while a turn is pending for it.
    void settled.then(() => { if (this.last.get(key) === settled) this.last.delete(key); });
    return turn;
  }
}

/** The response form of a document (§5.1): stored body + `_id`, `_version`, `#docid`, `#shard` (with `comments`). */
function present(comments: boolean, body: Record<string, unknown>, doc: { id: DocumentId; version: number; docid: number }, shard: number) {
  // Object.assign, not an object spread with extra keys: measured 40x faster on V8 (Node 20).
  const value: Record<string, unknown> = Object.assign({}, body);
  value._id = doc.id;
  value._version = doc.version;
  if (comments) {
    value['#docid'] = doc.docid;
    value['#shard'] = shard;
  }
  return value;
}

/**
 * Whether the target's primary is reached across a wire (another process or
 * thread). Asked of its client without waiting for it: a primary that is
 * down (the read then waits out its failover in `Replicator.read`) is taken
 * to be remote, as nodes that can be down are.
 */
function acrossAWire(target: Target): boolean {
  try {
    return target.client.passesByReference !== true;
  } catch {
    return true;
  }
}

/** The echo of a write: the document as `present` makes it, through `?selector` (a missing path is null: the write is done). */
function echoed(ctx: RequestContext, reply: WriteReply, shard: number): unknown {
  return selectOrNull(present(ctx.options.comments, reply.body ?? {}, reply, shard), ctx.options.selector);
}

/** `present` as JSON text, spliced onto the body's stored JSON (same keys, same order). */
function presentJson(comments: boolean, bodyJson: string, doc: { id: DocumentId; version: number; docid: number }, shard: number): string {
  let tail = `"_id":${JSON.stringify(doc.id)},"_version":${doc.version}`;
  if (comments) tail += `,"#docid":${doc.docid},"#shard":${shard}`;
  return bodyJson.length === 2 ? `{${tail}}` : `${bodyJson.slice(0, -1)},${tail}}`;
}

/**
 * A stored document's answer: its compact JSON spliced at once (what most
 * GETs send), the object form built only when another format or an indent
 * asks for `value` (building both was 1.5 % of a cached GET, profiled).
 */
class PresentedDocument implements Reply {
  readonly status = 200;
  readonly json: string;
  private presented: Record<string, unknown> | undefined;

  constructor(private readonly doc: DocumentReply, private readonly shard: number, private readonly comments: boolean, bodyJson: string) {
    this.json = presentJson(comments, bodyJson, doc, shard);
  }

  get value(): Record<string, unknown> {
    return this.presented ??= present(this.comments, bodyOf(this.doc), this.doc, this.shard);
  }
}

/** The document of a primary's `script_schema_change` refusal (engine errors.ts), else undefined. */
function scriptResultOf(err: unknown): Record<string, unknown> | undefined {
  const error = toTesseraError(err);
  if (error.code !== 'script_schema_change') return undefined;
  const result = error.details?.scriptResult;
  return isPlainObject(result) ? result : undefined;
}

/** `_id` in a body: a value, or `{_type, _value}` (§1.2, §5.1). */
function idFromBody(raw: unknown): { idType?: IdType; value?: unknown } {
  if (raw === undefined || raw === null) return {};
  if (isPlainObject(raw)) {
    const out: { idType?: IdType; value?: unknown } = {};
    if (raw._type !== undefined) out.idType = idTypeFromName(raw._type);
    if (raw._value !== undefined) out.value = raw._value;
    return out;
  }
  if (typeof raw === 'string' || typeof raw === 'number') return { value: raw };
  throw apiErrors.badId("'_id' must be a string, a number or an object with '_type'/'_value'");
}
