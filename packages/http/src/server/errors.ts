/**
 * Error catalogue of the HTTP server: timeouts, streamed bodies cut short
 * or misused, method override and mapping misuse (API.md §3.2), broken
 * handler responses and bad options. Framing and limit errors of the parser
 * are in `../parser/errors.ts`.
 */
import { TesseraError } from '@tessera/errors';

const e = (code: string, status: number, message: string) => new TesseraError(code, status, message);

export const serverErrors = {
  headersTimeout: (headersTimeoutMs: number) =>
    e('http_headers_timeout', 408, `Request head not received within ${headersTimeoutMs} ms`),
  bodyTimeout: (bodyTimeoutMs: number) =>
    e('http_body_timeout', 408, `No request body bytes received for ${bodyTimeoutMs} ms`),
  bodyAborted: () =>
    e('http_body_aborted', 400, 'The client closed the connection before the request body was complete'),
  overloaded: (bodiesBytesMax: number) =>
    e('http_overloaded', 503, `The server already holds the request bodies it takes at once (${bodiesBytesMax} bytes, bodiesBytesMax): retry later`),
  bodyStreamMisuse: (why: string) => e('http_body_stream_misuse', 500, `Request body stream misused: ${why}`),
  overrideNeedsPost: () =>
    e('http_method_override_misuse', 400, "'x-http-method-override' header must use the POST method"),
  mappingNeedsGetOrPost: () =>
    e('http_method_mapping_misuse', 400, 'HTTP Mappings must use GET or POST method'),
  methodCase: (sent: string, known: string) =>
    e('http_method_case', 400, `Method names are case-sensitive: '${sent}' is not a method (did you mean '${known}'?)`),
  invalidResponse: (why: string) => e('http_invalid_response', 500, `Handler returned an invalid response: ${why}`),
  invalidOption: (name: string, why: string) => e('http_invalid_option', 500, `Invalid HTTP server option '${name}': ${why}`),
};
