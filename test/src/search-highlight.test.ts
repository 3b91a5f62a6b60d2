/**
 * Highlights (`_highlight`, docs/highlights-and-cursors.md) over HTTP
 * through @tessera/client, on the embedded server and on a coordinator with three nodes: fragments of
 * the stored text with the tokens the query matches marked, by the field's
 * own analyser (English stemming here), at word boundaries.
 */
import type { Highlight, SearchRequest } from '@tessera/client';
import { SERVER_KINDS, serversForSuite, type ServerKind } from './cluster-harness.js';
import { clientForSuite } from './harness.js';

const LONG = `${'Filler words come first here. '.repeat(10)}The runner was running fast. ${'More filler text follows on. '.repeat(10)}Runs end the story.`;

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  const client = clientForSuite(serversForSuite(kind));

  beforeAll(async () => {
    const schema = { title: { _type: 'text', _language: 'en' }, body: { _type: 'text', _language: 'en' }, plain: { _type: 'text' }, tag: { _type: 'keyword' } };
    await client().createIndex('hl', { _settings: { number_of_shards: 3 }, _schema: schema });
    const docs = [
      { _id: 1, title: 'Running shoes for runners', body: LONG, plain: 'Running <b>& running</b>', tag: 'running' },
      { _id: 2, title: 'A quiet walk', body: 'Nothing here runs. <script>', plain: 'walks', tag: 'walk' },
      { _id: 3, title: 'Searching the web', body: 'search engines index the web', plain: 'search', tag: 'web', tags: ['x'] },
      { _id: 4, title: ['First run', 'Second title without'], body: 'the end', plain: 'x', tag: 'y' },
    ];
    expect((await client().import('hl', docs)).indexed).toBe(docs.length);
  }, 60_000);

  const search = async (body: SearchRequest) => (await client().search('hl', { _sort: '_id', ...body })).hits.map((h) => ({ ...h, _highlight: h._highlight! }));

  it('marks the tokens whose stem the query looks up, in fragments at word boundaries', async () => {
    const hits = await search({ _query: { _or: [{ title: 'run' }, { body: 'run' }] }, _highlight: { _fields: ['title', 'body'], _fragment_size: 40 } });
    expect(hits.map((h) => h._id)).toEqual([1, 2, 4]);
    expect(hits[0]!._highlight.title).toEqual(['<em>Running</em> shoes for runners']);
    // Two fragments of about 40 characters around the matches of a long body, whole words only.
    const body = hits[0]!._highlight.body!;
    expect(body).toEqual(['The runner was <em>running</em> fast. More', 'text follows on. <em>Runs</em> end the story.']);
    for (const fragment of body) expect(fragment.replace(/<\/?em>/g, '').length).toBeLessThanOrEqual(40);
    // `runner` and `runners` stem to `runner`, not `run`: unmarked, as the index would not match them.
    expect(hits[0]!._highlight.title![0]).not.toContain('<em>runners');
    // Arrays: each value on its own; the matching one.
    expect(hits[1]!._highlight).toEqual({ body: ['Nothing here <em>runs</em>. <script>'] });
    expect(hits[2]!._highlight).toEqual({ title: ['First <em>run</em>'] });
  });

  it('takes tags, fragment counts and the html encoder; whole values with _number_of_fragments 0', async () => {
    const hits = await search({
      _query: { plain: 'running' },
      _highlight: { _fields: { plain: { _number_of_fragments: 0, _pre_tag: '[', _post_tag: ']' } }, _encoder: 'html' },
    });
    expect(hits.map((h) => h._highlight)).toEqual([{ plain: ['[Running] &lt;b&gt;&amp; [running]&lt;/b&gt;'] }]);
    const raw = await search({ _query: { plain: 'running' }, _highlight: { _fields: ['plain'] } });
    expect(raw[0]!._highlight).toEqual({ plain: ['<em>Running</em> <b>& <em>running</em></b>'] });
    const one = await search({ _query: { body: 'run' }, _highlight: { _fields: ['body'], _fragment_size: 30, _number_of_fragments: 1 } });
    expect(one.find((h) => h._id === 1)!._highlight.body).toHaveLength(1);
  });

  it('marks bare words in every highlighted field, prefixes, and nothing for excluded words or other fields', async () => {
    const bare = await client().search('hl', { _query: 'search', _sort: '_id', _highlight: { _fields: ['title', 'body', 'tag'] } });
    expect(bare.hits.map((h) => h._highlight)).toEqual([
      { title: ['<em>Searching</em> the web'], body: ['<em>search</em> engines index the web'] },
    ]);
    const prefix = await search({ _query: { title: 'sear**' }, _highlight: { _fields: ['title'] } });
    expect(prefix[0]!._highlight).toEqual({ title: ['<em>Searching</em> the web'] });
    const excluded = await search({ _query: { _and_not: [{ title: 'walk' }, { body: 'runs' }] }, _highlight: { _fields: ['title', 'body'] } });
    expect(excluded).toEqual([]);
    const notBody = await search({ _query: { _and: [{ title: 'walk' }, { _not: [{ body: 'search' }] }] }, _highlight: { _fields: ['title', 'body'] } });
    expect(notBody.map((h) => h._highlight)).toEqual([{ title: ['A quiet <em>walk</em>'] }]);
    // A field the query does not name: no fragments, an empty `_highlight`.
    const other = await search({ _query: { tag: 'web' }, _highlight: { _fields: ['title'] } });
    expect(other.map((h) => h._highlight)).toEqual([{}]);
  });

  it('rejects bad options with 400 invalid_highlight', async () => {
    for (const bad of [
      'title', {}, { _fields: [] }, { _fields: 'title' }, { _fields: ['title'], _fragment_size: 0 }, { _fields: ['title'], _number_of_fragments: -1 },
      { _fields: ['title'], _pre_tag: 3 }, { _fields: ['title'], _encoder: 'xml' }, { _fields: ['title'], _order: 'score' },
      { _fields: { title: { _encoder: 'html' } } }, { _fields: { title: 'x' } }, { _fields: ['_id'] },
    ] as unknown as Highlight[]) {
      // Sent as they are: the client's types would refuse them.
      await expect(client().search('hl', { _query: { title: 'run' }, _highlight: bad }))
        .rejects.toMatchObject({ status: 400, type: 'Bad Request', code: 'invalid_highlight' });
    }
  });
});
