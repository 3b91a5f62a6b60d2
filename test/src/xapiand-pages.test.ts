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

describe('tutorials/spatial-search', () => {
  // The tutorial's cities.ndjson (1000 US cities), cut to the Bay Area around
  // El Cerrito and two far cities, one of them a second Richmond: the circle
  // query's result depends on these alone (the population range weighs 0 and
  // a shape's weight is the angle to its centre, §9.3, so no statistics).
  const cities: Array<[city: string, state: string, longitude: number, latitude: number, population: number]> = [
    ['Richmond', 'Virginia', -77.4360481, 37.5407246, 214114],
    ['San Francisco', 'California', -122.4194155, 37.7749295, 837442],
    ['San Mateo', 'California', -122.3255254, 37.5629917, 101128],
    ['San Leandro', 'California', -122.1560768, 37.7249296, 87965],
    ['Vallejo', 'California', -122.2566367, 38.1040864, 118837],
    ['Walnut Creek', 'California', -122.0651819, 37.9100783, 66900],
    ['Berkeley', 'California', -122.272747, 37.8715926, 116768],
    ['Martinez', 'California', -122.1341321, 38.0193657, 37165],
    ['Oakland', 'California', -122.2711137, 37.8043637, 406253],
    ['Richmond', 'California', -122.3477486, 37.9357576, 107571],
    ['Hayward', 'California', -122.0807964, 37.6688205, 151574],
    ['Alameda', 'California', -122.2416355, 37.7652065, 76419],
    ['Concord', 'California', -122.0310733, 37.9779776, 125880],
    ['San Rafael', 'California', -122.5310874, 37.9735346, 58994],
    ['Daly City', 'California', -122.4702079, 37.6879241, 104739],
    ['New York', 'New York', -74.0059413, 40.7127837, 8405837],
  ];
  const query = (radius: number): Record<string, unknown> => ({
    population: { _in: { _range: { _from: 100000 } } },
    location: { _in: { _circle: { _latitude: 37.9180233, _longitude: -122.3198401, _radius: radius } } },
  });
  const nearSanFrancisco = { location: { _order: 'asc', _value: { _point: { _latitude: 37.7576171, _longitude: -122.5776844 } } } };
  const hits = async (body: Record<string, unknown>): Promise<unknown[]> => {
    const r = await call(server, 'GET', '/cities/:search?pretty', body);
    expect(r.status).toBe(200);
    // The page shows Xapiand's pre-0.14 envelope (`#query.#hits`); Tessera answers `hits` (API.md §9.2).
    expect(r.json.total).toBe(r.json.hits.length);
    return r.json.hits;
  };

  beforeAll(async () => {
    const ndjson = cities.map(([city, state, _longitude, _latitude, population]) =>
      JSON.stringify({ city, state, location: { _point: { _longitude, _latitude } }, population })).join('\n');
    const r = await call(server, 'POST', '/cities/:restore?pretty', ndjson, { 'content-type': 'application/x-ndjson' });
    expect([r.status, r.json.indexed]).toEqual([200, cities.length]);
  });

  it('Searching: the big cities within 20 km of El Cerrito, nearest first', async () => {
    // The page lists Vallejo fifth: it lies 21.4 km away, outside the circle.
    // Xapiand matches the HTM trixels that cover the circle (the tutorial's
    // map); API.md §9.3 matches geo values inside the shape, exactly.
    expect(await hits({ _query: query(20000), _selector: 'city' })).toEqual(['Richmond', 'Berkeley', 'Oakland', 'San Francisco']);
    // With the circle reaching it, Vallejo follows, as on the page.
    expect(await hits({ _query: query(22000), _selector: 'city' })).toEqual(['Richmond', 'Berkeley', 'Oakland', 'San Francisco', 'Vallejo']);
  });

  it('Sorting: the same cities, nearest to San Francisco first', async () => {
    // As above, Vallejo only once the circle reaches it (API.md §9.3).
    expect(await hits({ _query: query(20000), _sort: nearSanFrancisco, _selector: 'city' })).toEqual(['San Francisco', 'Oakland', 'Richmond', 'Berkeley']);
    expect(await hits({ _query: query(22000), _sort: nearSanFrancisco, _selector: 'city' })).toEqual(['San Francisco', 'Oakland', 'Richmond', 'Berkeley', 'Vallejo']);
  });
});

/** The keys of an object, sorted (the pages' `have.all.keys`). */
const keysOf = (o: object): string[] => sorted(Object.keys(o));
const NUMERIC_ACCURACY = ['<186a0>', '<2710>', '<3e8>', '<5f5e100>', '<64>', '<f4240>'];
const DATE_ACCURACY = ['<12cc0300>', '<15180>', '<1e13380>', '<278d00>', '<bbf81e00>', '<e10>'];
const GEO_ACCURACY = ['<3>', '<5>', '<8>', '<a>', '<c>', '<f>'];

/**
 * A field's INFO terms as the pages check them: one term under each accuracy
 * prefix and one for the value, all of type `typeChar` (`bucketTypeChar`
 * under the prefixes). The tokens are Tessera's own (API.md §5.8), so only
 * their type chars and counts are compared.
 */
function expectAccuracyTerms(field: Record<string, object>, prefixes: string[], typeChar: string, bucketTypeChar = typeChar): void {
  const valueTerms = Object.keys(field).filter((k) => !prefixes.includes(k));
  expect(valueTerms).toEqual([expect.stringMatching(new RegExp(`^${typeChar}`))]);
  for (const prefix of prefixes) expect(Object.keys(field[prefix]!)).toEqual([expect.stringMatching(new RegExp(`^${bucketTypeChar}`))]);
}

describe('tests/dataStructures/objects', () => {
  const put = async (path: string, body: unknown): Promise<void> => expect((await call(server, 'PUT', path, body)).status).toBe(200);
  const get = async (path: string): Promise<any> => (await call(server, 'GET', path)).json;
  const info = async (path: string): Promise<any> => {
    const r = await call(server, 'INFO', path);
    expect(r.status).toBe(200);
    return r.json;
  };

  it('Object of Mixed Types', async () => {
    await put('/test/mixed_objects/doc', { types: { type: 'human', legs: 2, arms: 2 } });
    const schema = (await get('/test/mixed_objects/'))._schema;
    expect([schema.types.type._type, schema.types.legs._type, schema.types.arms._type]).toEqual(['text', 'integer', 'integer']);
    const i = await info('/test/mixed_objects/doc');
    expectAccuracyTerms(i.terms.types.arms, NUMERIC_ACCURACY, 'N');
    expectAccuracyTerms(i.terms.types.legs, NUMERIC_ACCURACY, 'N');
    expect(keysOf(i.terms.types.type)).toEqual(['Shuman']);
    expect(keysOf(i.values)).toEqual(sorted(['0', '1', '1663382011', '3248593248', '3741895486']));
  });

  it('Value With Nested Object', async () => {
    await put('/test/value_object_nested/doc', { types: { _value: { type: 'human', legs: 2, arms: 2, name: { first: 'John', last: 'Doe' } } } });
    const { types } = (await get('/test/value_object_nested/'))._schema;
    expect([types.type._type, types.legs._type, types.arms._type, types.name._type, types.name.first._type, types.name.last._type])
      .toEqual(['text', 'integer', 'integer', 'object', 'text', 'text']);
  });

  it.each(['object', 'nested_object'])('Simple Object and Nested Object (/test/%s/): INFO drills into terms.name', async (index) => {
    await put(`/test/${index}/doc`, { name: { _value: { first: 'John', middle: 'R', last: 'Doe' } } });
    expect((await get(`/test/${index}/._schema.name`))._type).toBe('object');
    // The selector after the ID drills into INFO's answer (API.md §1.1, §1.3).
    const name = await info(`/test/${index}/doc.terms.name`);
    expect(keysOf(name)).toEqual(['first', 'last', 'middle']);
    expect(keysOf(name.first)).toEqual(['Sjohn']);
    expect(keysOf(name.last)).toEqual(['Sdoe']);
    expect(keysOf(name.middle)).toEqual(['Sr']);
    // A drill path INFO's answer lacks: 404 (§1.3).
    expect((await call(server, 'INFO', `/test/${index}/doc.terms.nickname`)).status).toBe(404);
  });

  it('Complex Object', async () => {
    const personality = 'A lot can be assumed when you first see Michael Lee, but at the very least you will find out he is elegant and heroic. '
      + 'Of course he is also loyal, passionate and clever, but in a way they are lesser traits and tained by behaviors of being prejudiced as well. '
      + 'His elegance though, this is what he is kind of cherished for. Friends frequently count on this and his excitement in times of need. '
      + 'All in all, Michael has a range of flaws to deal with too. His disruptive nature and insulting nature risk ruining pleasant moods and reach all around. '
      + 'Fortunately his heroic nature helps lighten the blows and moods when needed.';
    await put('/test/complex_object/doc', {
      accountNumber: 121931,
      balance: 221.46,
      employer: 'Globoil',
      name: { firstName: 'Michael', lastName: 'Lee' },
      age: 24,
      gender: 'male',
      contact: { address: '630 Victor Road', city: 'Leyner', state: 'Indiana', postcode: '61952', phone: '+1 (924) 594-3216', email: 'michael.lee@globoil.co.uk' },
      checkin: { _point: { _longitude: -95.63079, _latitude: 31.76212 } },
      favoriteFruit: 'lemon',
      eyeColor: 'blue',
      style: { _namespace: true, clothing: { pants: 'khakis', shirt: 't-shirt' }, hairstyle: 'slick back' },
      personality: { _language: 'en', _value: personality, _type: 'text' },
    });

    const s = await get('/test/complex_object/._schema');
    const types = (paths: string[]): string[] => paths.map((p) => p.split('.').reduce((node, key) => node[key], s)._type);
    expect(types(['accountNumber', 'balance', 'employer', 'name', 'name.firstName', 'name.lastName', 'age', 'gender'])).toEqual(
      ['integer', 'floating', 'text', 'object', 'text', 'text', 'integer', 'text']);
    expect(types(['contact', 'contact.address', 'contact.city', 'contact.state', 'contact.postcode', 'contact.phone', 'contact.email'])).toEqual(
      ['object', 'text', 'text', 'text', 'text', 'text', 'text']);
    expect(types(['checkin', 'favoriteFruit', 'eyeColor', 'style', 'personality'])).toEqual(['geo', 'text', 'text', 'text', 'text']);

    const { terms } = await info('/test/complex_object/doc');
    // `_language: en` stems: the stems under `Z<path>`, beside the words.
    expect(keysOf(terms.Zpersonality)).toEqual(sorted(['Sassum', 'Sbehavior', 'Sblow', 'Scherish', 'Sclever', 'Scount', 'Sdeal', 'Sdisrupt', 'Seleg', 'Sexcit',
      'Sfind', 'Sflaw', 'Sfortun', 'Sfrequent', 'Sfriend', 'Shelp', 'Sheroic', 'Sinsult', 'Skind', 'Slee', 'Slesser', 'Slighten', 'Slot', 'Sloyal',
      'Smichael', 'Smood', 'Snatur', 'Sneed', 'Spassion', 'Spleasant', 'Sprejud', 'Srang', 'Sreach', 'Srisk', 'Sruin', 'Stain', 'Stime', 'Strait']));
    expect(keysOf(terms.personality)).toEqual(sorted(['Sa', 'Sall', 'Salso', 'Sand', 'Sare', 'Saround', 'Sas', 'Sassumed', 'Sat', 'Sbe', 'Sbehaviors',
      'Sbeing', 'Sblows', 'Sbut', 'Sby', 'Scan', 'Scherished', 'Sclever', 'Scount', 'Scourse', 'Sdeal', 'Sdisruptive', 'Selegance', 'Selegant',
      'Sexcitement', 'Sfind', 'Sfirst', 'Sflaws', 'Sfor', 'Sfortunately', 'Sfrequently', 'Sfriends', 'Shas', 'She', 'Shelps', 'Sheroic', 'Shis',
      'Sin', 'Sinsulting', 'Sis', 'Skind', 'Sleast', 'Slee', 'Slesser', 'Slighten', 'Slot', 'Sloyal', 'Smichael', 'Smoods', 'Snature', 'Sneed',
      'Sneeded', 'Sof', 'Son', 'Sout', 'Spassionate', 'Spleasant', 'Sprejudiced', 'Srange', 'Sreach', 'Srisk', 'Sruining', 'Ssee', 'Stained',
      'Sthe', 'Sthey', 'Sthis', 'Sthough', 'Stimes', 'Sto', 'Stoo', 'Straits', 'Svery', 'Sway', 'Swell', 'Swhat', 'Swhen', 'Swill', 'Swith', 'Syou']));
    expect(keysOf(terms.contact.address)).toEqual(['S630', 'Sroad', 'Svictor']);
    expect(keysOf(terms.contact.city)).toEqual(['Sleyner']);
    expect(keysOf(terms.contact.email)).toEqual(['Sco', 'Sgloboil', 'Slee', 'Smichael', 'Suk']);
    expect(keysOf(terms.contact.phone)).toEqual(['S1', 'S3216', 'S594', 'S924']);
    expect(keysOf(terms.contact.postcode)).toEqual(['S61952']);
    expect(keysOf(terms.contact.state)).toEqual(['Sindiana']);
    expect(keysOf(terms.employer)).toEqual(['Sgloboil']);
    expect(keysOf(terms.eyeColor)).toEqual(['Sblue']);
    expect(keysOf(terms.favoriteFruit)).toEqual(['Slemon']);
    expect(keysOf(terms.gender)).toEqual(['Smale']);
    expect(keysOf(terms.name.firstName)).toEqual(['Smichael']);
    expect(keysOf(terms.name.lastName)).toEqual(['Slee']);
    expect(keysOf(terms.style.clothing.pants)).toEqual(['Skhakis']);
    expect(keysOf(terms.style.clothing.shirt)).toEqual(['Sshirt', 'St']);
    expect(keysOf(terms.style.hairstyle)).toEqual(['Sback', 'Sslick']);
    expect(keysOf(terms.style.pants)).toEqual(['Skhakis']);
    expect(keysOf(terms.style.shirt)).toEqual(['Sshirt', 'St']);
    // Xapiand's binary term for 221.46 holds a `.` byte, so its page nests a
    // key under the value term; Tessera's tokens are hex, without dots (§5.8).
    for (const field of ['accountNumber', 'age', 'balance']) expectAccuracyTerms(terms[field], NUMERIC_ACCURACY, 'N');
    expectAccuracyTerms(terms.checkin, GEO_ACCURACY, 'G');
  });
});

describe('tests/dataStructures/arrays', () => {
  const SLOT = '1680431078'; // `types.` as text (API.md §5.8)
  const index = async (path: string, types: unknown): Promise<any> => {
    expect((await call(server, 'PUT', `${path}doc`, { types })).status).toBe(200);
    expect((await call(server, 'GET', `${path}._schema.types`)).json._type).toBe('array/text');
    const r = await call(server, 'INFO', `${path}doc`);
    expect(r.status).toBe(200);
    return r.json;
  };
  const letters = (upTo: string): string[] => Array.from({ length: upTo.charCodeAt(0) - 64 }, (_, i) => String.fromCharCode(65 + i));

  it('Single Array: one value, the raw string in its slot', async () => {
    const i = await index('/test/array_single/', ['A']);
    expect(i.terms.types).toHaveProperty('Sa');
    expect(i.values[SLOT]).toBe('A');
  });

  it.each([
    ['Simple Array', '/test/array/', letters('H')],
    ['Array of Array', '/test/array-of-array/', [['A', 'B', 'C', 'D'], ['E', 'F', 'G', 'H']]],
    ['Array of Array of Arrays', '/test/array-of-arrays-of-arrays/', [[['A', 'B'], ['C', 'D']], [['E', 'F'], ['G', 'H']]]],
    ['Array Mixed With Text', '/test/arrays/', ['A', 'B', ['C', 'D'], ['E', 'F', ['G', 'H']], 'I', ['J', ['K', ['L', ['M', 'N']]]]]],
  ])('%s: flattened into one field and one slot', async (_title, path, types) => {
    const i = await index(path, types);
    const expected = letters(path === '/test/arrays/' ? 'N' : 'H');
    expect(keysOf(i.terms.types)).toEqual(expected.map((c) => `S${c.toLowerCase()}`));
    // The page's slot holds Xapiand's serialised string list
    // (`\0\1A\1B…`); Tessera's INFO lists the values (API.md §5.8).
    expect(i.values[SLOT]).toEqual(expected);
  });

  it('Array of Objects', async () => {
    const types = letters('H').map((property, n) => ({ property, number: n + 1 }));
    expect((await call(server, 'PUT', '/test/array_of_objects/doc', { types })).status).toBe(200);
    const schema = (await call(server, 'GET', '/test/array_of_objects/')).json._schema;
    expect([schema.types._type, schema.types.property._type, schema.types.number._type]).toEqual(['array/object', 'text', 'integer']);
    const i = (await call(server, 'INFO', '/test/array_of_objects/doc')).json;
    expect(keysOf(i.terms.types.property)).toEqual(letters('H').map((c) => `S${c.toLowerCase()}`));
    expect(keysOf(i.values)).toEqual(sorted(['0', '1', '1666287912', '3452157842']));
  });
});

describe('tests/dataTypes/check-data-types', () => {
  const ID = '~notmet';
  const body = {
    positive: { _type: 'positive', _value: 123456 },
    integer: { _type: 'integer', _value: 123456 },
    floating: { _type: 'floating', _value: 123456 },
    boolean: { _type: 'boolean', _value: true },
    keyword: { _type: 'keyword', _value: 'true' },
    text: { _type: 'text', _value: 'this field is text' },
    date: { _type: 'date', _value: '2019-05-17' },
    datetime: { _type: 'datetime', _value: '2019-05-17T10:12:12.123' },
    time: { _type: 'time', _value: '10:12:12.123' },
    timedelta: { _type: 'timedelta', _value: '+10:12:12.123' },
    uuid: { _type: 'uuid', _value: '22214800-78c7-11e9-b7d0-e5256ff63dab' },
  };

  beforeAll(async () => {
    expect((await call(server, 'PUT', `/test/types/${ID}`, body)).status).toBe(200);
  });

  it('Check Datatypes: every type and its accuracy', async () => {
    // Xapiand nests the fields under `_schema.schema`; Tessera's `_schema` holds them (API.md §7.2).
    const schema = (await call(server, 'GET', '/test/types/')).json._schema;
    for (const type of Object.keys(body)) expect({ type, is: schema[type]._type }).toEqual({ type, is: type });
    const numeric = [100, 1000, 10000, 100000, 1000000, 100000000];
    for (const type of ['floating', 'integer', 'positive']) expect(schema[type]._accuracy).toEqual(numeric);
    for (const type of ['date', 'datetime']) expect(schema[type]._accuracy).toEqual(['hour', 'day', 'month', 'year', 'decade', 'century']);
    for (const type of ['time', 'timedelta']) expect(schema[type]._accuracy).toEqual(['minute', 'hour']);
  });

  it('Info Datatypes: the terms and values of every type', async () => {
    const { terms, values } = (await call(server, 'INFO', `/test/types/${ID}`)).json;
    // The page's ID term is `QU` + the condensed UUID decoded; API.md §1.2
    // keeps condensed UUIDs verbatim, so `~notmet` is a keyword ID.
    expect(terms).toHaveProperty(`QK${ID}`);
    expect(keysOf(terms.boolean)).toEqual(['Bt']);
    expect(keysOf(terms.keyword)).toEqual(['Ktrue']);
    expect(Object.keys(terms.uuid)).toEqual([expect.stringMatching(/^U/)]);
    expect(keysOf(terms.text)).toEqual(['Sfield', 'Sis', 'Stext', 'Sthis']);
    expectAccuracyTerms(terms.date, DATE_ACCURACY, 'D');
    expectAccuracyTerms(terms.datetime, DATE_ACCURACY, 'D');
    // A midnight date: the hour and the day buckets are one instant, one term (as on the page).
    expect(Object.keys(terms.date['<e10>'])).toEqual(Object.keys(terms.date['<15180>']));
    // The date and the datetime share every bucket from the day up.
    for (const p of DATE_ACCURACY.filter((p) => p !== '<e10>')) expect(terms.datetime[p]).toEqual(terms.date[p]);
    // 123456 as positive, integer and floating: the same terms (as on the page).
    for (const type of ['floating', 'integer', 'positive']) expectAccuracyTerms(terms[type], NUMERIC_ACCURACY, 'N');
    expect(terms.integer).toEqual(terms.floating);
    expect(terms.positive).toEqual(terms.floating);
    // A time's value term is `T`, its buckets (numbers of seconds) `N`.
    for (const type of ['time', 'timedelta']) expectAccuracyTerms(terms[type], ['<3c>', '<e10>'], 'T', 'N');
    expect(terms.timedelta).toEqual(terms.time);
    expect(keysOf(values)).toEqual(sorted(['0', '1', '318005193', '774410579', '1446142349', '1627686662', '1998353627', '2090108769',
      '2153937510', '2668794980', '3480268142', '3547094521', '3917830578']));
  });
});
