/** The HTTP layer: HTTP/1.1 server over `net`, method override/mapping, body codecs and negotiation. */
export type { HttpRequest, HttpResponse, HttpServer, HttpServerOptions, RequestHandler, RequestHead } from './server/types.js';
export { createHttpServer, DEFAULT_CLOSE_GRACE_MS, DEFAULT_HTTP_SERVER_OPTIONS } from './server/http-server.js';
export { resolveMethod, KNOWN_METHODS, type ResolvedMethod } from './server/method.js';
export { RequestParser, type RequestParserEvents, type RequestParserOptions } from './parser/request-parser.js';
export * from './codecs/index.js';
