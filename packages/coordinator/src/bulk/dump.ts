/**
 * DUMP /idx/ (API.md §7.6): every document of the index, shard after shard in
 * ID order, as a JSON array, NDJSON or a MessagePack sequence (by `Accept`),
 * streamed. Each shard is paged with `shard.scan` (DUMP_PAGE_DOCUMENTS per
 * call, the next page fetched while the current one is written), each page
 * is encoded into one chunk, and the HTTP server pulls the next chunk only
 * once the socket has drained: memory holds about two pages whatever the
 * size of the index. Pages are read one after another, not from one
 * snapshot: a document written during the dump appears in it if its ID sorts
 * after the shard's cursor.
 *
 * An item is the stored document + `_id`, which RESTORE (§7.7) loads back.
 * No `_version`: a body `_version` is an expected-version check (§5.6), so
 * RESTORE into an empty index would refuse every item with 409; restored
 * documents start again at version 1. The first item also carries the
 * index's `_schema` (the §7.2 form) and its `_id` as `{_type, _value}`:
 * RESTORE applies both as PUT does, so the restored index gets the same field
 * and `_id` types instead of detecting them again from values in dump order
 * (an integer met before a float would then refuse the float). `?schema=false`
 * leaves them out. **(Tessera decision)**
 */
import { createDeflate, createGzip } from 'node:zlib';
import { pipeline, Readable } from 'node:stream';
import { blobWhole, type BlobBytes } from '@tessera/documents';
import { errorBody, toTesseraError } from '@tessera/errors';
import { matchingRange, msgpackSerializer, negotiateEncoding, negotiateSerializer, parseAccept, type ContentCoding, type MediaRange } from '@tessera/http';
import { bodyOf, type ScanCall, type ScanReply } from '@tessera/rpc';
import { convertId, type DocumentId } from '../documents/ids.js';
import { apiErrors } from '../errors.js';
import { describe } from '../indexes/handlers.js';
import type { IndexRegistry } from '../indexes/registry.js';
import type { IndexMeta } from '../state/cluster-state.js';
import type { RequestContext } from '../request/context.js';
import type { Reply } from '../response/respond.js';
import type { ShardRouter } from '../routing.js';

/** Documents per `shard.scan` call: ~1 MiB of typical documents per page and chunk (the shard also ends a page at 4 MiB). */
export const DUMP_PAGE_DOCUMENTS = 1000;

type DumpFormat = 'json' | 'ndjson' | 'msgpack';

/** The media types DUMP answers in, in the server's order of preference (a JSON array without `Accept`). */
const DUMP_TYPES: ReadonlyArray<{ mediaType: string; format: DumpFormat; contentType: string }> = [
  { mediaType: 'application/json', format: 'json', contentType: 'application/json; charset=utf-8' },
  { mediaType: 'application/x-ndjson', format: 'ndjson', contentType: 'application/x-ndjson' },
  { mediaType: 'application/x-msgpack', format: 'msgpack', contentType: 'application/x-msgpack' },
  { mediaType: 'application/x-json', format: 'json', contentType: 'application/x-json; charset=utf-8' },
  { mediaType: 'application/ndjson', format: 'ndjson', contentType: 'application/ndjson' },
  { mediaType: 'application/msgpack', format: 'msgpack', contentType: 'application/msgpack' },
];

type ScannedDocument = ScanReply['documents'][number];

/** What the first item carries besides its document (see the file comment). */
interface IndexTypes {
  idType: string;
  schema: unknown;
}

export class DumpHandler {
  constructor(private readonly registry: IndexRegistry, private readonly router: ShardRouter) {}

  /**
   * DUMP /idx/: answered once the first page is in hand, so a failing shard
   * is a status, not a cut body. A client that accepts only NDJSON gets a
   * 4xx as one NDJSON line (the §4.2 body) rather than a 406 hiding it.
   */
  async dump(ctx: RequestContext): Promise<Reply> {
    const chosen = negotiateDumpType(ctx.req.headers.accept);
    try {
      return await this.dumpIn(ctx, chosen);
    } catch (err) {
      const error = toTesseraError(err);
      if (chosen?.format !== 'ndjson' || error.status >= 500) throw err;
      const line = Buffer.from(`${JSON.stringify(errorBody(error))}\n`, 'utf8');
      return { status: error.status, headers: { 'Content-Type': chosen.contentType }, stream: (async function* () { yield line; })() };
    }
  }

  private async dumpIn(ctx: RequestContext, chosen: ReturnType<typeof negotiateDumpType>): Promise<Reply> {
    const index = ctx.singleIndex();
    const meta = this.registry.get(index);
    if (!meta) throw apiErrors.indexNotFound(index);
    const coding = negotiateEncoding(ctx.req.headers['accept-encoding']);
    if (chosen === null || coding === null) return { status: 406 };
    const indent = chosen.format === 'json' ? chosen.indent ?? (ctx.options.pretty ? 2 : 0) : 0;
    const types: IndexTypes | undefined = ctx.params.flag('schema', true) && meta.idType !== undefined
      ? { idType: meta.idType, schema: fieldSchema(meta) }
      : undefined;
    const pages = prefetched(this.pages(meta));
    const first = await pages.next();
    const encoded = encode(withFirst(first, pages), chosen.format, indent, types);
    const headers: Record<string, string> = { 'Content-Type': chosen.contentType, Vary: 'Accept, Accept-Encoding' };
    if (coding !== 'identity') headers['Content-Encoding'] = coding;
    return { status: 200, headers, stream: coding === 'identity' ? encoded : compress(encoded, coding) };
  }

  /** DUMP /idx/<id> (§3.1): the one document in its dump form, in the negotiated serializer. */
  async dumpOne(ctx: RequestContext): Promise<Reply> {
    const index = ctx.singleIndex();
    const meta = this.registry.get(index);
    const idText = ctx.path.id;
    if (!meta || !meta.idType || idText === undefined) throw apiErrors.documentNotFound();
    const id = convertId(idText, meta.idType);
    const shard = this.router.shardOf(id, meta.settings.number_of_shards);
    const client = this.registry.client(meta.path, meta.allocation[shard - 1]?.[0], shard);
    const doc = await client.call('doc.get', { index: meta.path, shard, id });
    if (!doc) throw apiErrors.documentNotFound();
    const content = doc.content === undefined ? undefined : await Promise.all(doc.content.map(async (entry) => ({
      type: entry.type, size: entry.size, crc: entry.crc,
      bytes: await client.call('doc.content', { index: meta.path, shard, ...entry, from: 0, length: entry.size, verify: true }),
    })));
    const binary = negotiateSerializer(ctx.req.headers.accept, ctx.req.headers['content-type'])?.serializer.format === 'msgpack';
    return { status: 200, value: dumpItem({ id: doc.id, version: doc.version, body: bodyOf(doc), ...(content === undefined ? {} : { content }) }, undefined, binary) };
  }

  /** Every shard's documents, a page per `shard.scan`, shard 1 first. */
  private async *pages(meta: IndexMeta): AsyncGenerator<ScannedDocument[]> {
    for (let shard = 1; shard <= meta.allocation.length; shard++) {
      const client = this.registry.client(meta.path, meta.allocation[shard - 1]?.[0], shard);
      let after: DocumentId | undefined;
      for (;;) {
        const call: ScanCall = { index: meta.path, shard, limit: DUMP_PAGE_DOCUMENTS, content: true };
        if (after !== undefined) call.after = after;
        const page = await client.call('shard.scan', call);
        if (page.documents.length > 0) yield page.documents;
        const last = page.documents[page.documents.length - 1];
        if (page.done || last === undefined) break;
        after = last.id;
      }
    }
  }
}

/** The serializer DUMP answers with, or null when `Accept` allows none of them (406). */
function negotiateDumpType(accept: string | undefined): { format: DumpFormat; contentType: string; indent: number | undefined } | null {
  const ranges = accept === undefined ? [] : parseAccept(accept);
  const [preferred] = DUMP_TYPES;
  if (ranges.length === 0) return { format: preferred!.format, contentType: preferred!.contentType, indent: undefined };
  let best: (typeof DUMP_TYPES)[number] | undefined;
  let bestRange = ranges.length;
  for (const type of DUMP_TYPES) {
    const i = matchingRange(ranges, type.mediaType);
    if (i < bestRange && (ranges[i] as MediaRange).q > 0) {
      best = type;
      bestRange = i;
    }
  }
  if (best === undefined) return null;
  const indent = ranges[bestRange]?.params['indent'];
  return { format: best.format, contentType: best.contentType, indent: indent !== undefined && /^\d{1,2}$/.test(indent) && Number(indent) <= 16 ? Number(indent) : undefined };
}

/**
 * The index schema as GET /idx/._schema describes it, without `_id`: the
 * first item's `{_type, _value}` fixes the ID type (and the schema package
 * refuses `_id: {_type: "uuid"}` in a `_schema`).
 */
function fieldSchema(meta: IndexMeta): Record<string, unknown> {
  const { _id: _ignored, ...fields } = describe(meta)._schema as Record<string, unknown>;
  return fields;
}

/** A dumped document: `_id` first, then the stored body; the first item of a dump also carries the index's types. */
/**
 * A document as DUMP writes it; stored content as `_data` (§7.6), each blob
 * binary in MessagePack (`binary`) and base64 in the text formats.
 */
function dumpItem(doc: ScannedDocument, types: IndexTypes | undefined, binary: boolean): Record<string, unknown> {
  const id = types === undefined ? doc.id : { _type: types.idType, _value: doc.id };
  const item: Record<string, unknown> = { _id: id };
  if (types !== undefined) item._schema = types.schema;
  Object.assign(item, doc.body);
  // A stored body has no `_id` of its own; should one appear, the document's ID still wins.
  item._id = id;
  if (doc.content !== undefined && doc.content.length > 0) {
    item._data = doc.content.map((entry) => ({
      _content_type: entry.type,
      _type: 'stored',
      _blob: binary ? blobOf(entry.bytes) : Buffer.from(blobOf(entry.bytes)).toString('base64'),
    }));
  }
  return item;
}

/** A scanned blob's bytes as one buffer (a read from its volume: already one). */
function blobOf(bytes: BlobBytes | undefined): Uint8Array {
  return bytes === undefined ? new Uint8Array(0) : blobWhole(bytes);
}

/** One chunk per page, framed for the format. */
async function* encode(pages: AsyncIterable<ScannedDocument[]>, format: DumpFormat, indent: number,
  types: IndexTypes | undefined): AsyncGenerator<Buffer> {
  let firstTypes = types;
  let count = 0;
  if (format === 'json') yield Buffer.from(indent > 0 ? '[\n' : '[');
  for await (const page of pages) {
    if (format === 'msgpack') {
      const parts = page.map((doc) => {
        const item = dumpItem(doc, firstTypes, true);
        firstTypes = undefined;
        return msgpackSerializer.encode(item, 0) as Buffer;
      });
      yield Buffer.concat(parts);
      continue;
    }
    let text = '';
    for (const doc of page) {
      const item = dumpItem(doc, firstTypes, false);
      firstTypes = undefined;
      if (format === 'ndjson') text += `${JSON.stringify(item)}\n`;
      else text += `${count > 0 ? (indent > 0 ? ',\n' : ',') : ''}${JSON.stringify(item, null, indent)}`;
      count++;
    }
    yield Buffer.from(text, 'utf8');
  }
  if (format === 'json') yield Buffer.from(indent > 0 ? '\n]\n' : ']');
}

/** The pages with the next one requested while the current one is consumed. */
export async function* prefetched<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = source.next();
  // Handled now: a page that fails while the previous one is being written must not be an unhandled rejection.
  next.catch(() => undefined);
  let ended = false;
  try {
    for (;;) {
      const result = await next;
      if (result.done === true) {
        ended = true;
        return;
      }
      next = source.next();
      next.catch(() => undefined);
      yield result.value;
    }
  } catch (err) {
    ended = true;
    throw err;
  } finally {
    if (!ended) await source.return(undefined);
  }
}

/** A generator's first result, already awaited, followed by the rest of it. */
async function* withFirst<T>(first: IteratorResult<T>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    if (first.done === true) return;
    yield first.value;
    for (;;) {
      const result = await rest.next();
      if (result.done === true) return;
      yield result.value;
    }
  } finally {
    await rest.return(undefined);
  }
}

/** The chunks compressed as they pass (gzip or deflate); an error or an early end of either side ends both. */
function compress(chunks: AsyncIterable<Buffer>, coding: Exclude<ContentCoding, 'identity'>): AsyncIterable<Buffer> {
  return pipeline(Readable.from(chunks), coding === 'gzip' ? createGzip() : createDeflate(), () => undefined);
}
