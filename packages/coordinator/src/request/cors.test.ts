import type { HttpRequest, HttpResponse } from '@tessera/http';
import { CORS_MAX_AGE_S, CorsPolicy, parseCorsOrigins } from './cors.js';

const METHODS = 'GET, HEAD, PUT, POST, SEARCH, OPTIONS';

function request(method: string, headers: Record<string, string>): HttpRequest {
  return {
    method, originalMethod: method, target: '/idx/', path: '/idx/', query: '', httpVersion: 11, headers,
    body: Buffer.alloc(0), bodyStream: undefined, remoteAddress: '127.0.0.1', startedAt: 0n,
  };
}

describe('parseCorsOrigins', () => {
  it('reads *, a list of origins, and nothing', () => {
    expect(parseCorsOrigins('')).toBeUndefined();
    expect(parseCorsOrigins(' , ')).toBeUndefined();
    expect(parseCorsOrigins('*')).toBe('*');
    expect(parseCorsOrigins('https://a.example, http://localhost:3000')).toEqual(new Set(['https://a.example', 'http://localhost:3000']));
  });

  it('refuses what a browser never sends as an Origin, saying what to write', () => {
    expect(() => parseCorsOrigins('https://a.example/')).toThrow(/write https:\/\/a\.example$/);
    expect(() => parseCorsOrigins('https://A.example')).toThrow(/write https:\/\/a\.example$/);
    expect(() => parseCorsOrigins('https://a.example:443')).toThrow(/write https:\/\/a\.example$/);
    expect(() => parseCorsOrigins('a.example')).toThrow(/not an origin/);
    expect(() => parseCorsOrigins('ftp://a.example')).toThrow(/not an origin/);
    expect(() => parseCorsOrigins('*, https://a.example')).toThrow(/alone/);
  });
});

describe('CorsPolicy', () => {
  const listed = new CorsPolicy(new Set(['https://a.example']), METHODS);

  it('recognises a preflight by OPTIONS + Origin + Access-Control-Request-Method only', () => {
    expect(CorsPolicy.isPreflight(request('OPTIONS', { origin: 'https://a.example', 'access-control-request-method': 'SEARCH' }))).toBe(true);
    expect(CorsPolicy.isPreflight(request('OPTIONS', { origin: 'https://a.example' }))).toBe(false);
    expect(CorsPolicy.isPreflight(request('OPTIONS', { 'access-control-request-method': 'SEARCH' }))).toBe(false);
    expect(CorsPolicy.isPreflight(request('GET', { origin: 'https://a.example', 'access-control-request-method': 'SEARCH' }))).toBe(false);
  });

  it('answers a preflight with the methods, the headers asked for (names only, once each) and the max age', () => {
    const answer = listed.preflight(request('OPTIONS', {
      origin: 'https://a.example', 'access-control-request-method': 'SEARCH',
      'access-control-request-headers': 'Content-Type, x-trace, bad header, X-TRACE, ',
    }));
    expect(answer.status).toBe(204);
    expect(answer.headers).toMatchObject({
      'Access-Control-Allow-Origin': 'https://a.example',
      'Access-Control-Allow-Methods': METHODS,
      'Access-Control-Max-Age': CORS_MAX_AGE_S,
    });
    expect(String(answer.headers!['Access-Control-Allow-Headers']).split(', '))
      .toEqual(['Authorization', 'Content-Type', 'Accept', 'X-HTTP-Method-Override', 'HTTP-Method-Override', 'X-Request-Id', 'x-trace']);
  });

  it('refuses a preflight from an origin not listed with 403 cors_origin_not_allowed', () => {
    expect(() => listed.preflight(request('OPTIONS', { origin: 'https://b.example', 'access-control-request-method': 'GET' })))
      .toThrow(expect.objectContaining({ code: 'cors_origin_not_allowed', status: 403 }));
  });

  it('decorates a response: Vary merged with what is there, a forwarded response\'s own CORS headers replaced, not doubled', () => {
    const forwarded: HttpResponse = { status: 200, headers: { vary: 'Accept, Accept-Encoding', 'access-control-allow-origin': 'https://a.example' } };
    listed.decorate(request('GET', { origin: 'https://a.example' }), forwarded);
    expect(forwarded.headers).toEqual({
      Vary: 'Accept, Accept-Encoding, Origin',
      'Access-Control-Allow-Origin': 'https://a.example',
      'Access-Control-Expose-Headers': expect.stringContaining('Location'),
    });
    const twice: HttpResponse = { status: 200, headers: { Vary: 'Origin' } };
    listed.decorate(request('GET', {}), twice);
    expect(twice.headers).toEqual({ Vary: 'Origin' });
    const unlisted: HttpResponse = { status: 200 };
    listed.decorate(request('GET', { origin: 'https://b.example' }), unlisted);
    expect(unlisted.headers).toEqual({ Vary: 'Origin' });
  });

  it('with *: Access-Control-Allow-Origin: * and no Vary', () => {
    const any = new CorsPolicy('*', METHODS);
    const response: HttpResponse = { status: 200 };
    any.decorate(request('GET', { origin: 'https://z.example' }), response);
    expect(response.headers).toEqual({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': expect.any(String) });
    expect(any.preflight(request('OPTIONS', { origin: 'https://z.example', 'access-control-request-method': 'PUT' })).headers)
      .not.toHaveProperty('Vary');
  });
});
