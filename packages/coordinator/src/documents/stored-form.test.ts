import { storedForm } from './stored-form.js';

describe('stored form (API.md §5.7)', () => {
  it('turns option objects into their value and drops options and comments', () => {
    expect(storedForm({
      title: { _type: 'text', _language: 'en', _value: 'Hi' },
      '#comment': 1,
      '': 2,
      nested: { a: { _index: 'none', _value: [1, { _value: 2 }] } },
      gone: { _store: false, _value: 'x' },
      _schema: { ignored: true },
    })).toEqual({ title: 'Hi', nested: { a: [1, 2] } });
  });

  it('keeps typed values as sent', () => {
    const point = { _point: { _latitude: 1, _longitude: 2 } };
    expect(storedForm({ where: point })).toEqual({ where: point });
  });

  it('keeps _recurse: false subtrees verbatim', () => {
    expect(storedForm({ _recurse: false, script: { _lua: { _body: 'x = 1' } } }))
      .toEqual({ script: { _lua: { _body: 'x = 1' } } });
  });

  it('refuses unknown reserved keys anywhere', () => {
    expect(() => storedForm({ _bogus: 1 })).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => storedForm({ a: { b: { _nope: 1 } } })).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('never writes through a prototype', () => {
    const body = JSON.parse('{"constructor": {"prototype": {"x": 1}}}') as Record<string, unknown>;
    const out = storedForm(body);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(out.constructor).toEqual({ prototype: { x: 1 } });
  });
});
