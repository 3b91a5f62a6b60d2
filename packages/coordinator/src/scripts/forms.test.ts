import { TesseraError } from '@tessera/errors';
import { mergeParams, parseScript } from './forms.js';

describe('parseScript', () => {
  it.each([
    ['a string', '_doc.a = 1', { kind: 'text', text: '_doc.a = 1' }],
    ['_lua with everything', { _type: 'script', _lua: { _body: 'b', _name: 'n', _params: { x: 1 } } }, { kind: 'inline', body: 'b', name: 'n', params: { x: 1 } }],
    ['_lua without _type', { _lua: { _body: 'b' } }, { kind: 'inline', body: 'b' }],
    ['_chai (legacy)', { _type: 'script', _chai: { _body: 'b', _params: { x: 1 } } }, { kind: 'inline', body: 'b', params: { x: 1 } }],
    ['_value holding a body (legacy)', { _value: 'b', _params: { x: 1 } }, { kind: 'inline', body: 'b', params: { x: 1 } }],
    ['_value holding an object (legacy)', { _value: { _body: 'b', _name: 'n' } }, { kind: 'inline', body: 'b', name: 'n' }],
    ['keys directly in _script (legacy)', { _body: 'b', _name: 'n', _params: { x: 1 } }, { kind: 'inline', body: 'b', name: 'n', params: { x: 1 } }],
    ['a name alone', { _name: 'n' }, { kind: 'named', name: 'n' }],
    ['a name with parameters', { _type: 'script', _lua: { _name: 'n' }, _params: { y: 2 } }, { kind: 'named', name: 'n', params: { y: 2 } }],
    ['params inside and beside merge, beside winning', { _lua: { _body: 'b', _params: { x: 1, y: 1 } }, _params: { y: 2 } }, { kind: 'inline', body: 'b', params: { x: 1, y: 2 } }],
    ['foreign', { _type: 'foreign/object', _foreign: '/lib/s1', _params: { q: 1 } }, { kind: 'foreign', index: '/lib/', id: 's1', params: { q: 1 } }],
    ['foreign with .script and no leading slash', { _type: 'foreign/object', _foreign: 'a/b/s1.script' }, { kind: 'foreign', index: '/a/b/', id: 's1' }],
  ])('%s', (_name, value, expected) => {
    expect(parseScript(value)).toEqual(expected);
  });

  it.each([
    ['a number', 42],
    ['an empty string', ''],
    ['an empty object', {}],
    ['an unknown _type', { _type: 'javascript', _lua: { _body: 'b' } }],
    ['an unknown key', { _lua: { _body: 'b' }, _lang: 'lua' }],
    ['an unknown key inside _lua', { _lua: { _body: 'b', _source: 'x' } }],
    ['a non-string body', { _lua: { _body: 1 } }],
    ['an empty body', { _lua: { _body: '' } }],
    ['two holders', { _lua: { _body: 'a' }, _chai: { _body: 'b' } }],
    ['a body beside _lua', { _lua: { _body: 'a' }, _body: 'b' }],
    ['parameters that are not an object', { _lua: { _body: 'b', _params: [1] } }],
    ['a foreign path without an id', { _type: 'foreign/object', _foreign: '/lib/' }],
    ['a foreign path without an index', { _type: 'foreign/object', _foreign: 's1' }],
    ['a foreign script with a body', { _type: 'foreign/object', _foreign: '/lib/s1', _lua: { _body: 'b' } }],
    ['_foreign without its _type', { _type: 'script', _foreign: '/lib/s1' }],
    ['a name too long', { _name: 'x'.repeat(300) }],
  ])('refuses %s with a 400', (_name, value) => {
    let error: unknown;
    try {
      parseScript(value);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TesseraError);
    expect((error as TesseraError).status).toBe(400);
  });
});

describe('mergeParams', () => {
  it('lets call-site values override defaults', () => {
    expect(mergeParams({ a: 1, b: 1 }, { b: 2 })).toEqual({ a: 1, b: 2 });
    expect(mergeParams(undefined, { b: 2 })).toEqual({ b: 2 });
    expect(mergeParams({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(mergeParams(undefined, undefined)).toBeUndefined();
  });
});
