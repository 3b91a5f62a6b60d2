import { parseHighlight } from './request.js';

describe('parseHighlight', () => {
  it('applies top-level options to every field and per-field options over them', () => {
    expect(parseHighlight({ _fields: ['a', 'b.c'] })).toEqual({
      encoder: 'default',
      fields: [
        { path: 'a', preTag: '<em>', postTag: '</em>', fragmentSize: 150, numberOfFragments: 5 },
        { path: 'b.c', preTag: '<em>', postTag: '</em>', fragmentSize: 150, numberOfFragments: 5 },
      ],
    });
    expect(parseHighlight({ _fields: { a: { _number_of_fragments: 0, _pre_tag: '[' }, b: {} }, _fragment_size: 20, _post_tag: ']', _encoder: 'html' })).toEqual({
      encoder: 'html',
      fields: [
        { path: 'a', preTag: '[', postTag: ']', fragmentSize: 20, numberOfFragments: 0 },
        { path: 'b', preTag: '<em>', postTag: ']', fragmentSize: 20, numberOfFragments: 5 },
      ],
    });
  });

  it('rejects what it does not know with invalid_highlight', () => {
    for (const bad of [
      null, [], { _fields: {} }, { _fields: [1] }, { _fields: ['a', 'a'] }, { _fields: ['.a'] }, { _fields: Array.from({ length: 33 }, (_, i) => `f${i}`) },
      { _fields: ['a'], _fragment_size: 10_001 }, { _fields: ['a'], _number_of_fragments: 101 }, { _fields: ['a'], _fragment_size: 1.5 },
      { _fields: ['a'], _pre_tag: 'x'.repeat(257) }, { _fields: ['a'], _type: 'plain' },
    ]) {
      expect(() => parseHighlight(bad)).toThrow(expect.objectContaining({ code: 'invalid_highlight', status: 400 }));
    }
  });
});
