/**
 * Pages of Xapiand's documentation (Kronuz/Xapiand, `docs/`), their requests
 * sent to a real server and their answers checked as each page's tests check
 * them (issue 20). Where a page's answer conflicts with API.md, API.md wins and
 * the test says so beside the assertion.
 *
 * The bank pages use ../shared/data/accounts.ndjson restored as it is into
 * `/bank/` with the default settings, as the documentation's "Exploring Your
 * Data" page loads it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, REPO_ROOT, removeDir, startServer, type Server } from './harness.js';

let server: Server;

beforeAll(async () => {
  server = await startServer();
  const ndjson = readFileSync(join(REPO_ROOT, '../shared/data/accounts.ndjson'), 'utf8');
  const r = await call(server, 'RESTORE', '/bank/', ndjson, { 'content-type': 'application/x-ndjson' });
  expect(r.status).toBe(200);
  expect(r.json.indexed).toBe(1000);
}, 60_000);

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

interface Hit { _id: unknown; [field: string]: unknown }

async function search(path: string, body: Record<string, unknown>): Promise<{ total: number; count: number; hits: Hit[] }> {
  const r = await call(server, 'SEARCH', path, body);
  if (r.status !== 200) throw new Error(`${JSON.stringify(body)}: ${r.status} ${r.text}`);
  return r.json;
}

const sorted = <T>(xs: T[]): T[] => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('reference-guide/search/query-dsl/leaf-queries/text-queries/default-operator', () => {
  // Xapiand's English stop words are the SMART list: "these", "are", "few",
  // "and", "far" and "between" are all stop words, so the text reduces to
  // "days" (stemmed `day`), under `_and` as under the default `_or`.
  const query = { personality: { _and: 'these days are few and far between' } };
  const expected = [298, 958, 234, 923, 132, 567, 906, 116, 182, 600];

  it('matches what "days" matches: 333 accounts, a first page of 10', async () => {
    const r = await search('/bank/', { _query: query });
    expect(r.count).toBe(10);
    expect(r.hits).toHaveLength(10);
    expect(r.total).toBe(333);
    // The stop words page: the OR form matches the same 333.
    expect((await search('/bank/', { _query: { personality: 'these days are few and far between' } })).total).toBe(333);
    expect((await search('/bank/', { _query: { personality: 'days' } })).total).toBe(333);
  });

  it("matches every hit the page shows (the order is Tessera's ranking, API.md §9.6)", async () => {
    // The page lists Xapian's order: BM25 over statistics combined across
    // shards with the length of the whole document. API.md §9.6 ranks with
    // per-field statistics, and each shard weighs with its own (STYLE.md
    // §2.10), so the first page differs; every hit the page shows matches.
    const r = await search('/bank/', { _query: query, _limit: 1000, _selector: '{_id}' });
    const ids = new Set(r.hits.map((h) => h._id));
    expect(sorted(expected.filter((id) => ids.has(id)))).toEqual(sorted(expected));
  });
});

describe('tests/schema/empty-value', () => {
  it('accepts a field given only options, a field without a value', async () => {
    const put = await call(server, 'PUT', '/test/empty-field/doc', { field: { _type: 'keyword', _index: 'field_all' } });
    expect(put.status).toBe(200);
    const get = await call(server, 'GET', '/test/empty-field/doc');
    expect(get.status).toBe(200);
    expect(sorted(Object.keys(get.json))).toEqual(sorted(['_id', '_version', '#docid', '#shard']));
    // The options define the field.
    const schema = await call(server, 'GET', '/test/empty-field/');
    expect(schema.json._schema.field).toMatchObject({ _type: 'keyword', _index: 'field' });
  });
});

describe('tests/schema/range-search', () => {
  const put = async (mode: string, value: number): Promise<void> => {
    const r = await call(server, 'PUT', `/test/${mode}/doc${value}`, { foo: { _type: 'integer', _value: value, _index: mode } });
    expect(r.status).toBe(200);
  };
  const range = { _query: { foo: { _in: { _range: { _from: 50, _to: 150 } } } } };

  it.each([
    // Terms only: the range is approximate, the buckets of step 100 (API.md §8.3).
    ['field_terms', [20, 100, 180]],
    ['field_values', [100]],
    ['field_all', [100]],
  ])('%s', async (mode, expected) => {
    for (const v of [20, 100, 180, 210]) await put(mode, v);
    const r = await search(`/test/${mode}/?sort=foo`, range);
    expect(r.total).toBe(expected.length);
    // `field_terms` keeps no values, so `_sort: foo` leaves the hits in `_id`
    // order (API.md §9.5: doc100, doc180, doc20); the page expects 20, 100, 180.
    expect(sorted(r.hits.map((h) => h.foo as number))).toEqual(expected);
  });
});

describe('tests/schema/uuid-field', () => {
  const uuids = {
    'cfe052b3-c9d6-43b5-b971-7fdcb5375d6c': 'first',
    '50ffd30b-6b76-4827-b805-f37f5e95f093': 'second',
    'b63d5fc1-29ff-4ef0-835f-b5415d7f166d': 'third',
  };
  const fieldTerms = { Sfirst: expect.anything(), Ssecond: expect.anything(), Sthird: expect.anything() };

  it.each(['uuid', 'uuid_field', 'both'])('_index_uuid_field: %s', async (mode) => {
    const body = mode === 'uuid' ? { uuids } : { uuids: { _index_uuid_field: mode, ...uuids } };
    expect((await call(server, 'PUT', `/test/uuid/${mode}/doc`, body)).status).toBe(200);
    // Xapiand nests the fields under `_schema.schema`; Tessera's `_schema` holds them (API.md §7.2).
    const schema = (await call(server, 'GET', `/test/uuid/${mode}/`)).json._schema;
    const entry = schema.uuids['<uuid_field>'];
    expect(entry._prefix).toBe('<uuid_field>.');
    expect(entry._type).toBe('text');
    // The page's slot for `uuid` (296138942) hashes Xapiand's binary UUID
    // prefix; Tessera's encodings are its own (API.md §5.8).
    if (mode !== 'uuid') expect(entry._slot).toBe(2761136387);

    const info = (await call(server, 'INFO', `/test/uuid/${mode}/doc`)).json;
    expect(info.terms).toHaveProperty('QKdoc');
    if (mode !== 'uuid_field') {
      for (const [uuid, word] of Object.entries(uuids)) expect(info.terms.uuids[uuid]).toHaveProperty(`S${word}`);
    }
    if (mode !== 'uuid') {
      expect(info.terms.uuids['<uuid_field>']).toMatchObject(fieldTerms);
      if (mode === 'uuid_field') expect(sorted(Object.keys(info.values))).toEqual(sorted(['0', '1', '2761136387']));
    }
  });
});

describe('reference-guide/search/query-dsl/leaf-queries/namespace-queries', () => {
  it('finds a namespaced value by a partial path, sorted by account number', async () => {
    const r = await search('/bank/', { _query: { 'style.footwear': 'casual shoes' }, _sort: 'accountNumber' });
    expect(r.count).toBe(10);
    expect(r.hits).toHaveLength(10);
    expect(r.hits.map((h) => h.accountNumber)).toEqual([103486, 111405, 112573, 114726, 115447, 116552, 121222, 121870, 123013, 123939]);
  });
});

describe('tests/namespace/namespace', () => {
  const strict = { _strict: true, _settings: { number_of_shards: 5, number_of_replicas: 1 } };
  const put = async (path: string, body: unknown, status = 200): Promise<void> => {
    const r = await call(server, 'PUT', path, body);
    expect([r.status, r.text]).toEqual([status, expect.any(String)]);
  };
  const get = async (path: string): Promise<any> => (await call(server, 'GET', path)).json;
  const info = async (path: string): Promise<any> => (await call(server, 'INFO', path)).json;
  const keys = (o: object): string[] => sorted(Object.keys(o));

  it('namespace with partial paths', async () => {
    await put('/test/namespace/doc', { style: { _namespace: true, clothing: { pants: 'khakis', shirt: 't-shirt' }, hairstyle: 'slick back' } });
    expect((await get('/test/namespace/._schema.style'))._namespace).toBe(true);
    const i = await info('/test/namespace/doc');
    expect(keys(i.terms.style.clothing.pants)).toEqual(['Skhakis']);
    expect(keys(i.terms.style.clothing.shirt)).toEqual(['Sshirt', 'St']);
    expect(keys(i.terms.style.hairstyle)).toEqual(['Sback', 'Sslick']);
    expect(keys(i.terms.style.pants)).toEqual(['Skhakis']);
    expect(keys(i.terms.style.shirt)).toEqual(['Sshirt', 'St']);
    expect(keys(i.values)).toEqual(sorted(['0', '1', '271287252', '439783812', '1032232283', '2277530749', '2821621140']));
  });

  it('namespace without partial paths', async () => {
    await put('/test/namespace/no_partial_paths/doc', {
      style: { _namespace: true, _partial_paths: false, clothing: { pants: 'khakis', footwear: 'casual shoes' }, hairstyle: 'afro' },
    });
    expect(await get('/test/namespace/no_partial_paths/._schema.style')).toMatchObject({ _namespace: true, _partial_paths: false });
    const i = await info('/test/namespace/no_partial_paths/doc');
    expect(keys(i.terms.style.clothing.footwear)).toEqual(['Scasual', 'Sshoes']);
    expect(keys(i.terms.style.clothing.pants)).toEqual(['Skhakis']);
    expect(keys(i.terms.style.hairstyle)).toEqual(['Safro']);
    expect(keys(i.values)).toEqual(sorted(['0', '1', '333121230', '439783812', '2277530749']));
  });

  it('strict keyword namespaces, single and array values', async () => {
    await put('/test/namespace/strict_namespace/doc', { ...strict, tags: { _namespace: true, _type: 'keyword', field: { subfield: { _value: 'value' } } } });
    expect(await get('/test/namespace/strict_namespace/._schema.tags')).toMatchObject({ _namespace: true, _type: 'keyword' });
    let i = await info('/test/namespace/strict_namespace/doc');
    expect(i.terms.tags.field.subfield).toHaveProperty('Kvalue');
    expect(i.terms.tags.subfield).toHaveProperty('Kvalue');
    expect(keys(i.values)).toEqual(sorted(['0', '1', '3362632514', '3554249428']));

    const values = ['value1', 'value2', 'value3'];
    await put('/test/namespace/strict_namespace_array/doc', { ...strict, tags: { _namespace: true, _type: 'array/keyword', field: { subfield: { _value: values } } } });
    expect(await get('/test/namespace/strict_namespace_array/._schema.tags')).toMatchObject({ _namespace: true, _type: 'array/keyword' });
    i = await info('/test/namespace/strict_namespace_array/doc');
    expect(keys(i.terms.tags.field.subfield)).toEqual(['Kvalue1', 'Kvalue2', 'Kvalue3']);
    expect(keys(i.terms.tags.subfield)).toEqual(['Kvalue1', 'Kvalue2', 'Kvalue3']);
    expect(keys(i.values)).toEqual(sorted(['0', '1', '3362632514', '3554249428']));

    // A descendant of another type: 400.
    await put('/test/namespace/namespace_different/doc', {
      ...strict, tags: { _namespace: true, _type: 'array/keyword', field: { subfield: { _value: values } }, numeric_field: 10 },
    }, 400);
  });

  it('text namespace', async () => {
    await put('/test/namespace/namespace_text/doc', { ...strict, tags: { _namespace: true, _type: 'text', field: { subfield: { _value: 'This is a value' } } } });
    expect(await get('/test/namespace/namespace_text/._schema.tags')).toMatchObject({ _namespace: true, _type: 'text' });
    const i = await info('/test/namespace/namespace_text/doc');
    // The page also lists `term_freq` and `wdf` among the keys: Xapiand's own
    // statistics of the path; Tessera's leaves carry them per term (API.md §5.8).
    expect(keys(i.terms.tags.field.subfield)).toEqual(['Sa', 'Sis', 'Sthis', 'Svalue']);
    expect(keys(i.terms.tags.subfield)).toEqual(['Sa', 'Sis', 'Sthis', 'Svalue']);
    expect(keys(i.values)).toEqual(sorted(['0', '1', '1380202056', '1586983639']));
  });

  it('datetime namespace: accuracy terms under both paths', async () => {
    await put('/test/namespace/namespace_datetime/doc', { ...strict, tags: { _namespace: true, _type: 'datetime', field: { subfield: { _value: '2001-05-24T10:41:25.123Z' } } } });
    const schema = await get('/test/namespace/namespace_datetime/._schema.tags');
    expect(schema._type).toBe('datetime');
    expect(schema._accuracy_prefix).toEqual(['<e10>.', '<15180>.', '<278d00>.', '<1e13380>.', '<12cc0300>.', '<bbf81e00>.']);
    expect(schema._accuracy).toEqual(['hour', 'day', 'month', 'year', 'decade', 'century']);
    const i = await info('/test/namespace/namespace_datetime/doc');
    // One term under each accuracy prefix, and the value's own term; the
    // terms' bytes are Tessera's own (API.md §5.8).
    for (const path of [i.terms.tags.field.subfield, i.terms.tags.subfield]) {
      const prefixes = ['<12cc0300>', '<15180>', '<1e13380>', '<278d00>', '<bbf81e00>', '<e10>'];
      for (const p of prefixes) expect(Object.keys(path[p])).toHaveLength(1);
      expect(Object.keys(path).filter((k) => !prefixes.includes(k))).toHaveLength(1);
    }
    expect(keys(i.values)).toEqual(sorted(['0', '1', '760467980', '2973955702']));
  });

  it('integer namespace: accuracy terms, searched by value and by range', async () => {
    await put('/test/namespace/types/integer/doc', { style: { _namespace: true, clothing: { pants: 123, footwear: 456 }, hairstyle: 789 } });
    const schema = await get('/test/namespace/types/integer/._schema.style');
    expect(schema._type).toBe('integer');
    expect(schema._accuracy_prefix).toEqual(['<64>.', '<3e8>.', '<2710>.', '<186a0>.', '<f4240>.', '<5f5e100>.']);
    expect(schema._accuracy).toEqual([100, 1000, 10000, 100000, 1000000, 100000000]);
    const i = await info('/test/namespace/types/integer/doc');
    const prefixes = ['<186a0>', '<2710>', '<3e8>', '<5f5e100>', '<64>', '<f4240>'];
    for (const path of [i.terms.style.clothing.footwear, i.terms.style.clothing.pants, i.terms.style.footwear, i.terms.style.pants, i.terms.style.hairstyle]) {
      for (const p of prefixes) expect(Object.keys(path[p])).toHaveLength(1);
    }
    expect(keys(i.values)).toEqual(sorted(['0', '1', '328441664', '1844154444', '2306662042', '2533366391', '3009507063']));
    for (const query of [{ 'style.clothing.footwear': 456 }, { 'style.clothing.footwear': { _in: { _range: { _from: 450, _to: 460 } } } }]) {
      const r = await search('/test/namespace/types/integer/', { _query: query });
      expect(r.total).toBe(1);
      expect(r.hits[0]!._id).toBe('doc');
      expect(r.hits[0]).toHaveProperty('style');
    }
  });

  it('geospatial namespace (`geospatial` names the geo type)', async () => {
    await put('/test/namespace/types/geospatial/doc', {
      ...strict, tags: { _namespace: true, _type: 'geospatial', field: { _point: { _longitude: -80.31727, _latitude: 25.67927 } } },
    });
    const schema = await get('/test/namespace/types/geospatial/._schema.tags');
    expect(schema).toMatchObject({ _type: 'geo', _namespace: true, _accuracy: [3, 5, 8, 10, 12, 15] });
    expect(schema._accuracy_prefix).toEqual(['<3>.', '<5>.', '<8>.', '<a>.', '<c>.', '<f>.']);
    const i = await info('/test/namespace/types/geospatial/doc');
    const field = Object.keys(i.terms.tags.field);
    expect(field.filter((k) => k.startsWith('<'))).toEqual(['<3>', '<5>', '<8>', '<a>', '<c>', '<f>']);
    expect(field.filter((k) => k.startsWith('G'))).toHaveLength(1);
    expect(keys(i.values)).toEqual(sorted(['0', '1', '3171062315']));
  });
});

describe('reference-guide/search/query-dsl/compound-queries/geospatial-searches', () => {
  it('a _point matches the accounts checked in at that point (API.md §9.3)', async () => {
    // The page expects the first 10 accounts by _id (1..10, checked in all
    // over the country): Xapiand matches a point by its coarse HTM trixels.
    // API.md §9.3 has a shape without `_in` match geo values equal to it:
    // the three accounts checked in at that point.
    const accounts = readFileSync(join(REPO_ROOT, '../shared/data/accounts.ndjson'), 'utf8').trim().split('\n')
      .map((line) => JSON.parse(line) as { _id: number; checkin?: { _point?: { _latitude: number; _longitude: number } } });
    const at = accounts.filter((a) => a.checkin?._point?._latitude === 41.50343 && a.checkin._point._longitude === -74.01042).map((a) => a._id);
    expect(at).toEqual([156, 768, 891]);
    for (const shape of [{ _point: { _latitude: 41.50343, _longitude: -74.01042 } }, { _ewkt: 'POINT(-74.01042 41.50343)' }]) {
      const r = await search('/bank/?sort=_id', { _query: { checkin: shape } });
      expect(r.hits.map((h) => h._id)).toEqual(at);
    }
  });
});
