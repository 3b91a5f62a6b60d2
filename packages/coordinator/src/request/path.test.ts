import { parsePath } from './path.js';

describe('parsePath (API.md §1.1)', () => {
  it.each([
    ['/', { indexes: [], id: undefined, selector: undefined }],
    ['/blog/', { indexes: ['/blog/'], id: undefined, selector: undefined }],
    ['/blog/1', { indexes: ['/blog/'], id: '1', selector: undefined }],
    ['/a/b/', { indexes: ['/a/b/'], id: undefined, selector: undefined }],
    ['/a/b', { indexes: ['/a/'], id: 'b', selector: undefined }],
    ['/a,b/c/', { indexes: ['/a/', '/b/c/'], id: undefined, selector: undefined }],
    ['/doc/doc.terms.name', { indexes: ['/doc/'], id: 'doc', selector: 'terms.name' }],
    ['/img/Lenna.png', { indexes: ['/img/'], id: 'Lenna', selector: 'png' }],
    ['/bank/._schema', { indexes: ['/bank/'], id: undefined, selector: '_schema' }],
    ['/.nodes', { indexes: [], id: undefined, selector: 'nodes' }],
    ['/t/a%2Fb%2Ec', { indexes: ['/t/'], id: 'a/b.c', selector: undefined }],
    ['/.xapiand/x', { indexes: ['/.xapiand/'], id: 'x', selector: undefined }],
  ])('%s', (raw, want) => {
    expect(parsePath(raw)).toEqual(want);
  });

  it.each([
    '/bad name/', '/a*b/', '/a:b/', '/a#b/', '/a|b/', '/./', '/../', '/a//b/', '/a.b/', '/%zz/', `/${'x'.repeat(250)}/`,
  ])('refuses %s with 400', (raw) => {
    expect(() => parsePath(raw)).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('decodes + to a space, as Xapiand does; a literal plus is %2B', () => {
    expect(parsePath('/t/hello+world').id).toBe('hello world');
    expect(parsePath('/t/a%2Bb').id).toBe('a+b');
    expect(parsePath('/t/a+b%20c.x+y').selector).toBe('x y');
    expect(() => parsePath('/a+b/')).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('refuses IDs over 245 bytes', () => {
    expect(() => parsePath(`/t/${'é'.repeat(123)}`)).toThrow(expect.objectContaining({ status: 400 }));
    expect(parsePath(`/t/${'x'.repeat(245)}`).id).toHaveLength(245);
  });

  it('allows a trailing * on list items only when asked', () => {
    expect(parsePath('/logs-*/', { allowWildcards: true }).indexes).toEqual(['/logs-*/']);
    expect(() => parsePath('/logs-*/')).toThrow();
  });
});
