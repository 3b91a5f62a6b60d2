import { gunzipSync } from 'node:zlib';
import type { HttpRequest } from '@tessera/http';
import { prefersHtml, StaticFiles } from './static-files.js';

function request(headers: Record<string, string> = {}): HttpRequest {
  return { method: 'GET', path: '/', headers } as unknown as HttpRequest;
}

const files = new Map([
  ['index.html', Buffer.from('<!doctype html><div id="app"></div>')],
  ['app-ABC123.js', Buffer.from(`console.log(${JSON.stringify('x'.repeat(4000))});`)],
  ['tiny-XYZ.css', Buffer.from('a{}')],
]);

describe('StaticFiles', () => {
  const served = new StaticFiles(files, 'index.html');

  it('answers only the files it was given, each in its type', () => {
    expect(served.file(request(), '../package.json')).toBeUndefined();
    expect(served.file(request(), 'index.htm')).toBeUndefined();
    expect(served.page(request())?.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(served.file(request(), 'app-ABC123.js')?.headers?.['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(served.file(request(), 'tiny-XYZ.css')?.body?.toString()).toBe('a{}');
  });

  it('revalidates the page and keeps the named-by-content files a year; 304 for a known ETag', () => {
    const page = served.page(request()) as { headers: Record<string, string> };
    expect(page.headers['Cache-Control']).toBe('no-cache');
    expect(page.headers['Content-Security-Policy']).toContain("script-src 'self'");
    expect(served.file(request(), 'app-ABC123.js')?.headers?.['Cache-Control']).toBe('public, max-age=31536000, immutable');
    for (const ifNoneMatch of [page.headers.ETag as string, `"other", W/${page.headers.ETag}`, '*']) {
      const again = served.page(request({ 'if-none-match': ifNoneMatch }));
      expect([ifNoneMatch, again?.status, again?.body]).toEqual([ifNoneMatch, 304, undefined]);
    }
    expect(served.page(request({ 'if-none-match': '"other"' }))?.status).toBe(200);
  });

  it('sends gzip to a client that takes it, for files worth compressing', () => {
    const zipped = served.file(request({ 'accept-encoding': 'gzip, deflate' }), 'app-ABC123.js');
    expect(zipped?.headers?.['Content-Encoding']).toBe('gzip');
    expect((zipped?.body as Buffer).length).toBeLessThan((files.get('app-ABC123.js') as Buffer).length);
    expect(gunzipSync(zipped?.body as Buffer)).toEqual(files.get('app-ABC123.js'));
    // Compressed once, on the first request that took it: the same bytes after.
    expect(served.file(request({ 'accept-encoding': 'gzip' }), 'app-ABC123.js')?.body).toBe(zipped?.body);
    expect(served.file(request(), 'app-ABC123.js')?.headers?.['Content-Encoding']).toBeUndefined();
    expect(served.file(request({ 'accept-encoding': 'gzip' }), 'tiny-XYZ.css')?.headers?.['Content-Encoding']).toBeUndefined();
  });

  it('needs its page', () => {
    expect(() => new StaticFiles(new Map([['a.js', Buffer.from('')]]), 'index.html')).toThrow(/index\.html/);
  });
});

describe('prefersHtml', () => {
  it.each([
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true], // a browser's navigation
    ['text/html', true],
    [undefined, false],
    ['*/*', false], // curl
    ['application/json', false],
    ['text/html, application/json', false], // a tie: the API's answer
    ['application/json;q=0.5, text/html', true],
    ['text/html, application/yaml', false], // a YAML client that also takes HTML
    ['application/x-msgpack', false],
    ['text/html;q=0', false],
  ])('%s → %s', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });
});
