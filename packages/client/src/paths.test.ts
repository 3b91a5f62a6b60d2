import { documentPath, entryPath, indexPath, queryString } from './paths.js';

describe('paths', () => {
  it('index paths end in / and lists join with a comma', () => {
    expect(indexPath('bank')).toBe('/bank/');
    expect(indexPath('/logs/2026/')).toBe('/logs/2026/');
    expect(indexPath(['a', '/b/c/'])).toBe('/a,b/c/');
    expect(indexPath('logs*')).toBe('/logs*/');
    expect(() => indexPath('/')).toThrow(TypeError);
    expect(() => indexPath([])).toThrow(TypeError);
  });

  it('IDs are percent-encoded, the dot included, so no character of the grammar is read as one', () => {
    expect(documentPath('t', 1)).toBe('/t/1');
    expect(documentPath('t', 'gir1.2-cvc')).toBe('/t/gir1%2E2-cvc');
    expect(documentPath('t', 'a/b:c,d+e f')).toBe('/t/a%2Fb%3Ac%2Cd%2Be%20f');
    expect(documentPath('img', 'Lenna', 'png')).toBe('/img/Lenna.png');
  });

  it('entries of the admin collections; aliases are index paths', () => {
    expect(entryPath('templates', 'logs')).toBe('/.templates/logs');
    expect(entryPath('aliases', 'first/one')).toBe('/.aliases/first/one');
    expect(entryPath('keys', 'ci.bot')).toBe('/.keys/ci%2Ebot');
  });

  it('query strings keep the parameters that are set', () => {
    expect(queryString({})).toBe('');
    expect(queryString({ commit: undefined })).toBe('');
    expect(queryString({ commit: true, version: 0, selector: 'a b' })).toBe('?commit=true&version=0&selector=a%20b');
  });
});
