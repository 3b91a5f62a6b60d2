/**
 * Turning a handler's result into HTTP bytes (API.md §2.3, §4.2): serializer
 * by `Accept` (else the request body's type, else JSON), indent from
 * `Accept: …; indent=N` or `?pretty`, content coding by `Accept-Encoding`,
 * and the one error body shape for every failure.
 */
import { errorBody, type TesseraError } from '@tessera/errors';
import { encodeContent, negotiateEncoding, negotiateSerializer, type HttpResponse, type RequestHead } from '@tessera/http';

/** Bodies smaller than this are sent uncompressed: gzip would cost more than it saves. */
const COMPRESS_BYTES_MIN = 1024;

export interface Reply {
  status: number;
  /** A value to serialise, or undefined for no body. */
  value?: unknown;
  headers?: Record<string, string | number>;
  /** A body encoded as it is sent (DUMP), instead of `value`; `headers` carry its Content-Type. */
  stream?: AsyncIterable<Uint8Array>;
  /** The exact byte length of `stream`, when known (a stored blob): sent as Content-Length, HEAD included. */
  length?: number;
  /**
   * The value's compact JSON text when the handler has it already (a stored
   * document's source spliced with its `_id`…): sent as is for compact JSON
   * answers instead of serialising `value` again.
   */
  json?: string;
}

export function render(head: RequestHead, reply: Reply, pretty: boolean | undefined): HttpResponse {
  if (reply.stream !== undefined) {
    const streamed: HttpResponse = { status: reply.status, headers: reply.headers ?? {}, bodyStream: reply.stream };
    if (reply.length !== undefined) streamed.bodyLength = reply.length;
    return streamed;
  }
  // `json` first: a document's `value` may be built only when read (documents/handlers.ts PresentedDocument).
  if (reply.json === undefined && reply.value === undefined) return { status: reply.status, headers: reply.headers ?? {} };
  const negotiated = negotiateSerializer(head.headers.accept, head.headers['content-type']);
  if (!negotiated) return { status: 406, headers: reply.headers ?? {} };
  const coding = negotiateEncoding(head.headers['accept-encoding']);
  if (coding === null) return { status: 406, headers: reply.headers ?? {} };
  const indent = negotiated.indent ?? (pretty ? 2 : 0);
  const serializer = negotiated.serializer;
  let body = reply.json !== undefined && indent === 0 && serializer.format === 'json' ? reply.json : serializer.encode(reply.value, indent);
  const headers: Record<string, string | number> = Object.assign({}, reply.headers);
  headers['Content-Type'] = serializer.contentType;
  if (coding !== 'identity' && body.length >= COMPRESS_BYTES_MIN) {
    body = encodeContent(typeof body === 'string' ? Buffer.from(body, 'utf8') : body, coding);
    headers['Content-Encoding'] = coding;
    headers.Vary = 'Accept, Accept-Encoding';
  }
  return { status: reply.status, headers, body };
}

/** The error's own headers (a 405's `Allow`) go with it, HEAD included. */
export function renderError(head: RequestHead, err: TesseraError, pretty: boolean | undefined): HttpResponse {
  const headers = err.headers === undefined ? undefined : { ...err.headers };
  if (head.method === 'HEAD') return headers === undefined ? { status: err.status } : { status: err.status, headers };
  return render(head, headers === undefined ? { status: err.status, value: errorBody(err) } : { status: err.status, value: errorBody(err), headers }, pretty);
}
