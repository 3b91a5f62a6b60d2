import {
  BadRequestError, ClientError, ConflictError, errorFromResponse, ForbiddenError, NotFoundError, ServerError, TesseraError,
  UnauthorizedError, UnavailableError,
} from './errors.js';

describe('errorFromResponse', () => {
  it('carries status, code, type and message of the error body, as the class of its status', () => {
    const err = errorFromResponse(409, { status: 409, type: 'Conflict', code: 'version_conflict', message: 'Conflict: Version mismatch!' });
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toBeInstanceOf(TesseraError);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ status: 409, code: 'version_conflict', type: 'Conflict', message: 'Conflict: Version mismatch!', name: 'ConflictError' });
    expect(err.retryable).toBe(false);
  });

  it('maps each status to its class: the cases, then the families', () => {
    const classes: Array<[number, unknown]> = [
      [400, BadRequestError], [401, UnauthorizedError], [403, ForbiddenError], [404, NotFoundError], [409, ConflictError],
      [412, ClientError], [415, ClientError], [500, ServerError], [502, UnavailableError], [503, UnavailableError], [504, UnavailableError], [507, ServerError],
    ];
    for (const [status, cls] of classes) {
      const err = errorFromResponse(status, { status, type: 'x', code: 'c', message: 'm' });
      expect(err.constructor).toBe(cls);
      expect(err.retryable).toBe(status >= 502 && status <= 504);
    }
    expect(errorFromResponse(503, { status: 503, type: 'Service Unavailable', code: 'primary_switching', message: 'm' })).toBeInstanceOf(ServerError);
  });

  it('keeps the script location of a script error and the Allow of a 405', () => {
    const script = errorFromResponse(400, { status: 400, type: 'Bad Request', code: 'script_error', message: 'Bad Request: boom', script: { name: 's', line: 3 } });
    expect(script.script).toEqual({ name: 's', line: 3 });
    const notAllowed = errorFromResponse(405, { status: 405, type: 'Method Not Allowed', code: 'method_not_allowed', message: 'M' }, 'GET, HEAD');
    expect(notAllowed.allow).toBe('GET, HEAD');
  });

  it('answers without an error body (HEAD, a proxy page) get http_<status> and a message from the status or the text', () => {
    expect(errorFromResponse(404, '')).toMatchObject({ status: 404, code: 'http_404', type: 'Not Found', message: 'Not Found' });
    expect(errorFromResponse(502, 'upstream down')).toMatchObject({ code: 'http_502', message: 'Bad Gateway: upstream down' });
    expect(errorFromResponse(599, undefined)).toMatchObject({ code: 'http_599', type: 'HTTP 599', message: 'HTTP 599' });
    // A body without `code` (an older server) keeps its message.
    expect(errorFromResponse(400, { message: 'Bad Request: x' })).toMatchObject({ code: 'http_400', message: 'Bad Request: x', type: 'Bad Request' });
  });
});
