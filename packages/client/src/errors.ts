/**
 * Errors as typed exceptions. Every error answer of the server carries the
 * body of API.md §4.2 (`status`, `type`, `code`, `message`, and `script`
 * for script errors); the client throws it as a `TesseraError` of the class
 * of its status, so callers catch a family (`ClientError`, `ServerError`),
 * a case (`NotFoundError`, `ConflictError`…) or branch on `code`, the stable
 * name docs/errors.md lists, never on the message.
 */

/** Where a script error happened (script errors only). */
export interface ScriptLocation {
  name?: string;
  line?: number;
}

/** The error body of API.md §4.2. */
export interface ErrorBody {
  status: number;
  type: string;
  code: string;
  message: string;
  script?: ScriptLocation;
}

export interface ErrorInit {
  status: number;
  code: string;
  message: string;
  /** The reason phrase (`Conflict`). */
  type: string;
  script?: ScriptLocation | undefined;
  /** `Allow` of a 405: the methods the resource serves. */
  allow?: string | undefined;
}

export class TesseraError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /**
   * The stable snake_case name of the error (`version_conflict`,
   * `document_not_found`…, docs/errors.md). An answer without an error body
   * (HEAD, an unservable 406, a proxy's page) gets `http_<status>`.
   */
  readonly code: string;
  /** The reason phrase (`Not Found`). */
  readonly type: string;
  readonly script: ScriptLocation | undefined;
  readonly allow: string | undefined;

  constructor(init: ErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.type = init.type;
    this.script = init.script;
    this.allow = init.allow;
  }

  /** Whether the same request may succeed later unchanged (502, 503, 504: a node away, a failover, a timeout). */
  get retryable(): boolean {
    return this.status === 502 || this.status === 503 || this.status === 504;
  }
}

/** 4xx: the request is at fault. */
export class ClientError extends TesseraError {}
/** 400: a bad body, path, parameter, query or script. */
export class BadRequestError extends ClientError {}
/** 401: no API key, a wrong one, or an expired one. */
export class UnauthorizedError extends ClientError {}
/** 403: a key without the action or index; an internal index; `/.keys/` without a master key. */
export class ForbiddenError extends ClientError {}
/** 404: a document, index, template, alias or key that does not exist. */
export class NotFoundError extends ClientError {}
/** 409: an expected `_version` that differs; an alias clash; a key name taken. */
export class ConflictError extends ClientError {}
/** 5xx: the server is at fault or cannot serve now. */
export class ServerError extends TesseraError {}
/** 502, 503, 504: a node unreachable, no primary, a timeout; retry later (`retryable`). */
export class UnavailableError extends ServerError {}

const CLASS_OF_STATUS: ReadonlyMap<number, new (init: ErrorInit) => TesseraError> = new Map([
  [400, BadRequestError], [401, UnauthorizedError], [403, ForbiddenError], [404, NotFoundError], [409, ConflictError],
  [502, UnavailableError], [503, UnavailableError], [504, UnavailableError],
]);

function classOf(status: number): new (init: ErrorInit) => TesseraError {
  return CLASS_OF_STATUS.get(status) ?? (status >= 500 ? ServerError : status >= 400 ? ClientError : TesseraError);
}

/** The reason phrases of the statuses an error body may lack (HEAD): the rest say `HTTP <status>`. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable',
  409: 'Conflict', 412: 'Precondition Failed', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 500: 'Internal Server Error',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

function isErrorBody(value: unknown): value is Partial<ErrorBody> & { message: string } {
  return value !== null && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string';
}

/**
 * The exception of an error answer: its status, and the error body when the
 * answer has one (decoded JSON, or its text), else a message from the status.
 */
export function errorFromResponse(status: number, body: unknown, allow?: string): TesseraError {
  const type = isErrorBody(body) && typeof body.type === 'string' ? body.type : (REASONS[status] ?? `HTTP ${status}`);
  const init: ErrorInit = isErrorBody(body)
    ? {
      status, type, message: body.message, allow,
      code: typeof body.code === 'string' ? body.code : `http_${status}`,
      script: body.script !== null && typeof body.script === 'object' ? body.script : undefined,
    }
    : { status, type, code: `http_${status}`, message: typeof body === 'string' && body.length > 0 ? `${type}: ${body}` : type, allow };
  return new (classOf(status))(init);
}
