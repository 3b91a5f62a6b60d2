/**
 * Error catalogue of the HTTP/1.1 request parser (RFC 9112 framing and the
 * limits of API.md §13). Every entry: a stable code, the status it answers
 * with and the detail text (the error body prefixes the reason phrase).
 * After any of these the framing of the connection can no longer be trusted,
 * so the server answers once and closes.
 */
import { TesseraError } from '@tessera/errors';

const e = (code: string, status: number, message: string) => new TesseraError(code, status, message);

export const parserErrors = {
  requestLine: (why: string) => e('http_invalid_request_line', 400, `Invalid request line: ${why}`),
  header: (why: string) => e('http_invalid_header', 400, `Invalid header field: ${why}`),
  lineEnding: () => e('http_invalid_line_ending', 400, 'Lines must end with CRLF (bare CR or LF received)'),
  host: (why: string) => e('http_invalid_host', 400, why),
  contentLength: (value: string) => e('http_invalid_content_length', 400, `Invalid Content-Length '${value}'`),
  conflictingContentLength: () => e('http_conflicting_content_length', 400, 'Conflicting Content-Length headers'),
  lengthAndEncoding: () =>
    e('http_conflicting_framing', 400, 'Content-Length and Transfer-Encoding must not be sent together'),
  chunkedNotFinal: () =>
    e('http_chunked_not_final', 400, "Transfer-Encoding must end with 'chunked', applied once"),
  chunk: (why: string) => e('http_invalid_chunk', 400, `Invalid chunked body: ${why}`),
  trailer: (why: string) => e('http_invalid_trailer', 400, `Invalid trailer field: ${why}`),
  unsupportedCoding: (coding: string) =>
    e('http_unsupported_transfer_coding', 501, `Transfer coding '${coding}' is not supported`),
  lengthRequired: (why: string) => e('http_length_required', 411, why),
  bodyTooLarge: (bodyBytesMax: number) =>
    e('http_body_too_large', 413, `Request body is larger than ${bodyBytesMax} bytes`),
  uriTooLong: (urlBytesMax: number) =>
    e('http_uri_too_long', 414, `Request target is longer than ${urlBytesMax} bytes`),
  headersTooLarge: (headerBytesMax: number) =>
    e('http_headers_too_large', 431, `Request header section is larger than ${headerBytesMax} bytes`),
  versionNotSupported: (version: string) =>
    e('http_version_not_supported', 505, `HTTP version '${version}' is not supported; use HTTP/1.1 or HTTP/1.0`),
};
