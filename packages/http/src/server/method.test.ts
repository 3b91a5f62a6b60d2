import { TesseraError, errorBody } from '@tessera/errors';
import { KNOWN_METHODS, resolveMethod } from './method.js';

const none: Record<string, string> = {};

function failure(fn: () => unknown): TesseraError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    return err as TesseraError;
  }
  throw new Error('expected a TesseraError');
}

describe('resolveMethod', () => {
  test('plain methods: as sent, path untouched', () => {
    expect(resolveMethod('GET', '/bank/doc', none)).toEqual({ method: 'GET', path: '/bank/doc' });
    expect(resolveMethod('UPDATE', '/t/1', none)).toEqual({ method: 'UPDATE', path: '/t/1' });
    expect(resolveMethod('FROB', '/', none)).toEqual({ method: 'FROB', path: '/' });
    // An unknown token keeps its case: the router answers 405 for it.
    expect(resolveMethod('frob', '/', none)).toEqual({ method: 'frob', path: '/' });
  });

  test.each(['get', 'Get', 'update', 'head', 'Search'])('a known method in another case (%s) → 400 http_method_case', (sent) => {
    const err = failure(() => resolveMethod(sent, '/t/1', none));
    expect(err.status).toBe(400);
    expect(err.code).toBe('http_method_case');
    expect(err.message).toContain('case-sensitive');
    // Also with a mapping or an override: the request line is checked first.
    expect(failure(() => resolveMethod(sent, '/t/1:info', none)).code).toBe('http_method_case');
    expect(failure(() => resolveMethod(sent, '/t/1', { 'x-http-method-override': 'PATCH' })).code).toBe('http_method_case');
  });

  test.each([
    ['GET', '/bank/:search', 'SEARCH', '/bank/'],
    ['POST', '/t/doc:update', 'UPDATE', '/t/doc'],
    ['GET', '/t/doc:info', 'INFO', '/t/doc'],
    ['GET', '/t/doc:INFO', 'INFO', '/t/doc'],
    ['POST', '/a,b/:Count', 'COUNT', '/a,b/'],
    ['SEARCH', '/bank/:search', 'SEARCH', '/bank/'],
  ])('mapping: %s %s → %s %s', (real, path, method, stripped) => {
    expect(resolveMethod(real, path, none)).toEqual({ method, path: stripped });
  });

  test('not a mapping: unknown names, colons outside the last segment, the metrics endpoint', () => {
    expect(resolveMethod('GET', '/:metrics', none)).toEqual({ method: 'GET', path: '/:metrics' });
    expect(resolveMethod('GET', '/t/a:b', none)).toEqual({ method: 'GET', path: '/t/a:b' });
    expect(resolveMethod('GET', '/t:search/doc', none)).toEqual({ method: 'GET', path: '/t:search/doc' });
  });

  test('mapping with a real method other than GET, POST or itself → 400', () => {
    const err = failure(() => resolveMethod('PUT', '/bank/:search', none));
    expect(err.status).toBe(400);
    expect(errorBody(err).message).toBe('Bad Request: HTTP Mappings must use GET or POST method');
    expect(failure(() => resolveMethod('HEAD', '/t/doc:info', none)).status).toBe(400);
  });

  test('override header (either name) on POST sets the method', () => {
    expect(resolveMethod('POST', '/t/1', { 'x-http-method-override': 'patch' })).toEqual({ method: 'PATCH', path: '/t/1' });
    expect(resolveMethod('POST', '/t/1', { 'http-method-override': 'DELETE' })).toEqual({ method: 'DELETE', path: '/t/1' });
    expect(resolveMethod('PUT', '/t/1', { 'x-http-method-override': 'PUT' })).toEqual({ method: 'PUT', path: '/t/1' });
  });

  test('override on another real method → 400 with the Xapiand message', () => {
    const err = failure(() => resolveMethod('GET', '/t/1', { 'x-http-method-override': 'DELETE' }));
    expect(err.status).toBe(400);
    expect(errorBody(err)).toEqual({
      status: 400, type: 'Bad Request', code: 'http_method_override_misuse', message: "Bad Request: 'x-http-method-override' header must use the POST method",
    });
  });

  test('override with an unknown method: passed on (upper case) for the router to answer 405 with Allow', () => {
    expect(resolveMethod('POST', '/t/1', { 'x-http-method-override': 'frob' })).toEqual({ method: 'FROB', path: '/t/1' });
  });

  test('the header wins over a mapping (the suffix is still removed)', () => {
    expect(resolveMethod('POST', '/t/doc:update', { 'x-http-method-override': 'PATCH' })).toEqual({ method: 'PATCH', path: '/t/doc' });
  });

  test('every known method maps, and maps only from its own name', () => {
    for (const m of KNOWN_METHODS) {
      expect(resolveMethod('GET', `/i/d:${m.toLowerCase()}`, none)).toEqual({ method: m, path: '/i/d' });
    }
  });
});
