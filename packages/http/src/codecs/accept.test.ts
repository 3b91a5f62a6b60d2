import { negotiateSerializer, parseAccept } from './accept.js';
import { parseHeaderList } from './header-list.js';

const chosen = (accept: string | undefined, requestType?: string) => negotiateSerializer(accept, requestType)?.serializer.contentType ?? null;

describe('parseAccept', () => {
  it('orders ranges by q, keeping the client order for ties', () => {
    const ranges = parseAccept('text/html;q=0.5, application/json, application/x-yaml;q=0.9, application/msgpack');
    expect(ranges.map((r) => `${r.type}/${r.subtype};${r.q}`)).toEqual([
      'application/json;1', 'application/msgpack;1', 'application/x-yaml;0.9', 'text/html;0.5',
    ]);
  });
  it('reads bare * as */*, lower-cases, and keeps parameters other than q', () => {
    expect(parseAccept('*')).toEqual([{ type: '*', subtype: '*', q: 1, params: {} }]);
    expect(parseAccept('Application/JSON; Indent=4; charset="utf-8"; q=0.7')).toEqual([
      { type: 'application', subtype: 'json', q: 0.7, params: { indent: '4', charset: 'utf-8' } },
    ]);
  });
  it('ignores malformed ranges and q values', () => {
    expect(parseAccept('application/json;q=abc, application/yaml;q=1.5, text/plain;q=.5, application/x-yaml;q=0.250').map((r) => r.subtype)).toEqual(['x-yaml']);
    expect(parseAccept('json, */json, /x, a/, , ;q=1, application/msgpack').map((r) => r.subtype)).toEqual(['msgpack']);
    expect(parseAccept('application/json;p="unterminated, application/yaml')).toEqual([]);
  });
  it('does not split on commas or semicolons inside quoted strings', () => {
    expect(parseHeaderList('a/b;x="1,2;3", c/d;y="q\\"x"')).toEqual([
      { value: 'a/b', params: { x: '1,2;3' } },
      { value: 'c/d', params: { y: 'q"x' } },
    ]);
  });
});

describe('negotiateSerializer', () => {
  it('without Accept: the request body type when it is a serializer, else JSON', () => {
    expect(chosen(undefined)).toBe('application/json; charset=utf-8');
    expect(chosen(undefined, 'application/msgpack')).toBe('application/msgpack');
    expect(chosen(undefined, 'Application/YAML; charset=utf-8')).toBe('application/yaml; charset=utf-8');
    expect(chosen(undefined, 'application/x-ndjson')).toBe('application/json; charset=utf-8');
    expect(chosen(undefined, 'text/plain')).toBe('application/json; charset=utf-8');
    expect(chosen('', 'application/x-yaml')).toBe('application/x-yaml; charset=utf-8');
  });
  it('*/* or application/* first behaves as no Accept', () => {
    expect(chosen('*/*')).toBe('application/json; charset=utf-8');
    expect(chosen('*', 'application/x-msgpack')).toBe('application/x-msgpack');
    expect(chosen('*/*, application/yaml', 'application/x-msgpack')).toBe('application/x-msgpack');
    expect(chosen('application/*', 'application/yaml')).toBe('application/yaml; charset=utf-8');
  });
  it('answers with the matched type', () => {
    expect(chosen('application/msgpack')).toBe('application/msgpack');
    expect(chosen('application/x-msgpack')).toBe('application/x-msgpack');
    expect(chosen('application/yaml, */*')).toBe('application/yaml; charset=utf-8');
    expect(chosen('text/html, application/x-json;q=0.1')).toBe('application/x-json; charset=utf-8');
  });
  it('follows q order, and the client order for equal q', () => {
    expect(chosen('application/json;q=0.5, application/x-msgpack;q=0.8')).toBe('application/x-msgpack');
    expect(chosen('application/x-yaml, application/json')).toBe('application/x-yaml; charset=utf-8');
    expect(chosen('application/json, application/x-yaml')).toBe('application/json; charset=utf-8');
  });
  it('takes the q of the most specific range', () => {
    // JSON is named at 0.5, everything else is welcome at 0.9: not JSON.
    expect(chosen('application/json;q=0.5, */*;q=0.9')).toBe('application/x-yaml; charset=utf-8');
    expect(chosen('application/json;q=0, */*')).toBe('application/x-yaml; charset=utf-8');
    expect(chosen('*/*;q=0, application/msgpack')).toBe('application/msgpack');
  });
  it('reads indent=N (0–16) from the matched range only', () => {
    expect(negotiateSerializer('application/json; indent=4', undefined)?.indent).toBe(4);
    expect(negotiateSerializer('application/json; indent=0', undefined)?.indent).toBe(0);
    expect(negotiateSerializer('application/json; indent=16', undefined)?.indent).toBe(16);
    expect(negotiateSerializer('application/json; indent=17', undefined)?.indent).toBeUndefined();
    expect(negotiateSerializer('application/json; indent=-1', undefined)?.indent).toBeUndefined();
    expect(negotiateSerializer('application/json; indent=x', undefined)?.indent).toBeUndefined();
    expect(negotiateSerializer('*/*; indent=3', 'application/x-yaml')).toMatchObject({ indent: 3, serializer: { mediaType: 'application/x-yaml' } });
    expect(negotiateSerializer('application/yaml;indent=8, application/json;indent=2;q=0.5', undefined)?.indent).toBe(8);
    expect(negotiateSerializer(undefined, undefined)?.indent).toBeUndefined();
  });
  it('gives null (406) when nothing is acceptable', () => {
    expect(negotiateSerializer('text/html', undefined)).toBeNull();
    expect(negotiateSerializer('text/*, image/png', 'application/json')).toBeNull();
    expect(negotiateSerializer('application/json;q=0', undefined)).toBeNull();
    expect(negotiateSerializer('*/*;q=0', 'application/yaml')).toBeNull();
    expect(negotiateSerializer('application/*;q=0, text/html', undefined)).toBeNull();
  });
  it('treats an Accept with no readable range as absent', () => {
    expect(chosen('application/json;q=nope', 'application/msgpack')).toBe('application/msgpack');
  });
  it('answers a repeated Accept from its cache, the same frozen choice, also past the cache bound', () => {
    const first = negotiateSerializer('application/yaml', 'application/json');
    expect(negotiateSerializer('application/yaml', 'application/json')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // Request type and Accept are told apart: the same text in the other place is another question.
    expect(chosen(undefined, 'application/x-msgpack')).toBe('application/x-msgpack');
    expect(chosen('application/x-msgpack', undefined)).toBe('application/x-msgpack');
    expect(negotiateSerializer('text/html', undefined)).toBeNull();
    for (let i = 0; i < 600; i++) negotiateSerializer(`application/json;indent=${i % 17};x=${i}`, undefined);
    expect(negotiateSerializer('application/yaml', 'application/json')).toEqual(first);
    expect(negotiateSerializer('text/html', undefined)).toBeNull();
  });
});
