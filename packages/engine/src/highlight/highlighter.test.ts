import { createSchema } from '@tessera/schema';
import { parseHighlight, parseQuery, parseQueryString } from '@tessera/search-model';
import { buildFragments } from './fragments.js';
import { Highlighter } from './highlighter.js';

const SCHEMA = createSchema({
  title: { _type: 'text', _language: 'en' },
  raw: { _type: 'text' },
  user: { _type: 'object', name: { _type: 'text' } },
  tag: { _type: 'keyword' },
});

const highlight = (query: unknown, options: unknown, body: Record<string, unknown>) =>
  new Highlighter(typeof query === 'string' ? parseQueryString(query) : parseQuery(query), parseHighlight(options), SCHEMA).highlight(body);

describe('Highlighter', () => {
  it('marks tokens by the field analyser: stems under a language, exact tokens without one', () => {
    expect(highlight({ title: 'connection' }, { _fields: ['title'] }, { title: 'Connected, connecting; CONNECTIONS!' }))
      .toEqual({ title: ['<em>Connected</em>, <em>connecting</em>; <em>CONNECTIONS</em>!'] });
    expect(highlight({ raw: 'connection' }, { _fields: ['raw'] }, { raw: 'connected connection' })).toEqual({ raw: ['connected <em>connection</em>'] });
    // A stop word the query drops marks nothing; kept with +, it does.
    expect(highlight({ title: 'the cat' }, { _fields: ['title'] }, { title: 'the cat' })).toEqual({ title: ['the <em>cat</em>'] });
    expect(highlight({ title: '+the cat' }, { _fields: ['title'] }, { title: 'the cat' })).toEqual({ title: ['<em>the</em> <em>cat</em>'] });
  });

  it('reads nested paths, arrays and {"_value"} values; skips other fields, keyword fields and unmatched ones', () => {
    expect(highlight({ 'user.name': 'ann' }, { _fields: ['user.name', 'tag', 'title'] }, { user: [{ name: 'Ann Lee' }, { name: { _value: 'ann' } }], tag: 'ann', title: 'ann' }))
      .toEqual({ 'user.name': ['<em>Ann</em> Lee', '<em>ann</em>'] });
    // A bare word counts in every field.
    expect(highlight('ann', { _fields: ['user.name', 'title'] }, { user: { name: 'Ann' }, title: 'ann' }))
      .toEqual({ 'user.name': ['<em>Ann</em>'], title: ['<em>ann</em>'] });
    expect(highlight({ raw: 'x' }, { _fields: ['title'] }, { title: 'x' })).toEqual({});
  });

  it('marks wildcard and prefix expansions, not excluded words', () => {
    expect(highlight({ raw: 'ab*d pre**' }, { _fields: ['raw'] }, { raw: 'abcd abd abx prefix pr' })).toEqual({ raw: ['<em>abcd</em> <em>abd</em> abx <em>prefix</em> pr'] });
    expect(highlight({ raw: 'keep -drop' }, { _fields: ['raw'] }, { raw: 'keep drop' })).toEqual({ raw: ['<em>keep</em> drop'] });
    expect(highlight({ _not: [{ raw: 'drop' }] }, { _fields: ['raw'] }, { raw: 'keep drop' })).toEqual({});
  });

  it('keeps the best fragments, in text order, and escapes with the html encoder', () => {
    const text = 'aa x x x x x x x bb x x x x x x x aa bb x x x x x x x x x x x x x aa';
    expect(highlight({ raw: 'aa bb' }, { _fields: ['raw'], _fragment_size: 10, _number_of_fragments: 1 }, { raw: text }))
      .toEqual({ raw: ['x x <em>aa</em> <em>bb</em>'] });
    expect(highlight({ raw: 'a' }, { _fields: ['raw'], _encoder: 'html', _pre_tag: '<b>', _post_tag: '</b>' }, { raw: '<a> & "a"' }))
      .toEqual({ raw: ['&lt;<b>a</b>&gt; &amp; &quot;<b>a</b>&quot;'] });
  });
});

describe('buildFragments', () => {
  it('cuts at token boundaries around matches without overlapping', () => {
    const value = 'one two three four five six seven';
    const starts = [0, 4, 8, 14, 19, 24, 28];
    const ends = [3, 7, 13, 18, 23, 27, 33];
    const fragments = buildFragments(value, [{ start: 8, end: 13, token: 'three' }, { start: 24, end: 27, token: 'six' }], starts, ends, 17);
    // Centred on the match, snapped inwards to whole tokens; the second starts after the first.
    expect(fragments.map((f) => value.slice(f.start, f.end))).toEqual(['two three four', 'five six seven']);
    // A match longer than the size is one fragment, whole.
    expect(buildFragments(value, [{ start: 8, end: 13, token: 'three' }], starts, ends, 2).map((f) => value.slice(f.start, f.end))).toEqual(['three']);
  });
});
