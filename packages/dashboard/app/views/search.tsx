import { useEffect, useState } from 'preact/hooks';
import { call, indexUrl } from '../api';
import { hrefOf, useLoad } from '../load';
import { Failure, Panel } from './common';
import { indexShards } from './indexes';

interface Field {
  path: string;
  type: string;
}

/** The leaf fields of a schema (API.md §8), dotted paths for nested objects. */
export function fieldsOf(schema: Record<string, unknown>, prefix = ''): Field[] {
  const out: Field[] = [];
  for (const [name, spec] of Object.entries(schema)) {
    if (name.startsWith('_') || name.startsWith('#') || spec === null || typeof spec !== 'object') continue;
    const type = String((spec as { _type?: unknown })._type ?? 'object');
    const path = `${prefix}${name}`;
    if (type === 'object' || type.startsWith('object')) out.push(...fieldsOf(spec as Record<string, unknown>, `${path}.`));
    else out.push({ path, type });
  }
  return out;
}

interface Bucket {
  _key: string;
  _doc_count: number;
}

interface Hit {
  _id: unknown;
  _highlight?: Record<string, string[]>;
  '#weight'?: number;
  [field: string]: unknown;
}

interface SearchAnswer {
  hits: Hit[];
  total: number;
  took: string;
  aggregations?: Record<string, unknown>;
}

const FACET = 'facet';
/** Types a facet of distinct values makes sense for. */
const FACET_TYPES = new Set(['keyword', 'string', 'text', 'boolean', 'integer', 'positive', 'float', 'date', 'datetime', 'time', 'uuid']);
const TEXT_TYPES = new Set(['text', 'string']);

/** A query string with a facet value ANDed to it (API.md §9.4: `field:"value"`). */
function narrowed(query: string, field: string, value: string): string {
  const leaf = `${field}:"${value.replace(/"/g, '')}"`;
  return query.trim() === '' || query.trim() === '*' ? leaf : `(${query}) AND ${leaf}`;
}

export function SearchView({ params }: { params: URLSearchParams }) {
  const index = params.get('index') ?? '';
  const query = params.get('q') ?? '';
  const [typed, setTyped] = useState(query);
  useEffect(() => setTyped(query), [query]);
  const description = useLoad(() => (index === '' ? Promise.resolve(undefined)
    : call<{ _schema?: Record<string, unknown> }>('GET', indexUrl(index))), [index]);
  // The known indexes, offered as the index box's choices.
  const known = useLoad(async () => [...(await indexShards()).keys()].sort(), []);
  const fields = fieldsOf(description.data?._schema ?? {});
  const facetFields = fields.filter((f) => FACET_TYPES.has(f.type));
  const facet = params.get('facet') ?? facetFields.find((f) => !TEXT_TYPES.has(f.type))?.path ?? facetFields[0]?.path ?? '';
  const textFields = fields.filter((f) => TEXT_TYPES.has(f.type)).map((f) => f.path);
  const go = (next: Record<string, string>) => {
    location.hash = hrefOf('search', { index, q: query, ...(facet === '' ? {} : { facet }), ...next });
  };
  const answer = useLoad(async () => {
    if (index === '' || description.data === undefined) return undefined;
    return call<SearchAnswer>('SEARCH', indexUrl(index), {
      _query: query.trim() === '' ? '*' : query,
      _limit: 20,
      ...(facet === '' ? {} : { _aggs: { [FACET]: { _values: { _field: facet } } } }),
      // Fragments HTML-escaped by the server, matches in <mark>: safe to put into the page as markup.
      ...(textFields.length === 0 ? {} : { _highlight: { _fields: textFields, _encoder: 'html', _pre_tag: '<mark>', _post_tag: '</mark>', _fragment_size: 120 } }),
    });
  }, [index, query, facet, description.data]);
  const buckets = (answer.data?.aggregations?.[FACET] ?? []) as Bucket[];
  return (
    <Panel title="Search" testId="search">
      <form class="search-form" onSubmit={(event) => { event.preventDefault(); go({ q: typed }); }}>
        <input name="index" aria-label="Index" value={index} placeholder="/index/" list="known-indexes"
          onChange={(event) => { location.hash = hrefOf('search', { index: (event.target as HTMLInputElement).value }); }} />
        <datalist id="known-indexes">{known.data?.map((path) => <option key={path} value={path} />)}</datalist>
        <input name="q" aria-label="Query" value={typed} placeholder="Query string: words, field:value, AND, OR…"
          onInput={(event) => setTyped((event.target as HTMLInputElement).value)} />
        <button type="submit">Search</button>
        {facetFields.length > 0 && (
          <label>Facet <select name="facet" value={facet} onChange={(event) => go({ facet: (event.target as HTMLSelectElement).value })}>
            {facetFields.map((f) => <option key={f.path} value={f.path}>{f.path}</option>)}
          </select></label>
        )}
      </form>
      {index === '' && <p>Choose an index (or search one from the index list).</p>}
      <Failure error={description.error ?? answer.error} />
      {answer.data !== undefined && (
        <div class="results">
          <aside class="facets" data-testid="facets">
            <h3>{facet}</h3>
            <ul>
              {buckets.map((bucket) => (
                <li key={bucket._key}>
                  <a href={hrefOf('search', { index, facet, q: narrowed(query, facet, bucket._key) })}>{bucket._key}</a>
                  <span class="count">{bucket._doc_count}</span>
                </li>
              ))}
            </ul>
          </aside>
          <div class="hits" data-testid="hits">
            <p class="summary">{answer.data.total} matching, {answer.data.hits.length} shown ({answer.data.took})</p>
            <ol>{answer.data.hits.map((hit) => <HitItem key={String(hit._id)} index={index} hit={hit} />)}</ol>
          </div>
        </div>
      )}
    </Panel>
  );
}

function HitItem({ index, hit }: { index: string; hit: Hit }) {
  const highlights = Object.entries(hit._highlight ?? {});
  const fields = Object.entries(hit).filter(([name]) => !name.startsWith('_') && !name.startsWith('#'));
  return (
    <li class="hit">
      <a class="hit-id" href={hrefOf('document', { index, id: String(hit._id) })}>{String(hit._id)}</a>
      {highlights.length > 0
        ? highlights.map(([field, fragments]) => (
          <p key={field} class="highlight"><span class="field">{field}</span>{' '}
            {/* Escaped by the server (`_encoder: html`); only our <mark> tags are markup. */}
            <span dangerouslySetInnerHTML={{ __html: fragments.join(' … ') }} /></p>))
        : <p class="fields">{fields.slice(0, 4).map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join(' · ')}</p>}
    </li>
  );
}
