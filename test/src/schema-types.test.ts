/**
 * The rest of the schema over HTTP (API.md §8): `time`, `timedelta`, `uuid`
 * and `script` values (stored forms, equality, ranges, sorts, casts),
 * `array/<type>`, namespaces with partial paths (§8.7), UUID-named children,
 * `_strict` and the `--strict` server option (§8.8, 412s), `_dynamic: false`,
 * `_recurse: false`, `_ignore`, `_meta`, the detection flags, foreign schemas
 * (§8.9) and `_language` with Snowball languages. Each rejected write is
 * checked to have changed nothing.
 */
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';

let server: Server;
let strictServer: Server;

const U1 = '5759b016-10c0-4526-a981-47d6d19f6fb4';
const U2 = 'c1e7d0f0-1f6e-11ee-be56-0242ac120002';

/** Opening hours and delays: times, timedeltas and UUIDs, typed by detection. */
const SHOPS = [
  { _id: 1, open: '08:00', late: '-00:15', ref: U1.toUpperCase(), hours: ['08:00', '12:00'] },
  { _id: 2, open: '10:00', late: '+00:00', ref: U2, hours: ['10:00', '18:30:00'] },
  { _id: 3, open: '11:45:30', late: '+01:30', ref: '~condensed', hours: ['13:00'] },
  { _id: 4, open: '12:30', late: '+25:00', ref: U1, hours: [] },
  { _id: 5, open: '23:00+02:00', late: -3600, ref: U2 },
];

beforeAll(async () => {
  const dir = tempDataDir();
  [server, strictServer] = await Promise.all([
    startServer(),
    startServer({ dataDir: dir, args: ['--port', '0', '--data', dir, '--strict'] }),
  ]);
  expect((await call(server, 'PUT', '/shops/', {
    _settings: { number_of_shards: 2 },
    _schema: { ref: { _type: 'uuid' }, hours: { _type: 'array/time' } },
  })).status).toBe(200);
  const restored = await call(server, 'RESTORE', '/shops/', SHOPS.map((d) => JSON.stringify(d)).join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(restored.json.indexed).toBe(SHOPS.length);
}, 60_000);

afterAll(async () => {
  for (const s of [server, strictServer]) {
    await s.stop();
    removeDir(s.dataDir);
  }
});

async function ids(index: string, query: unknown, sort?: unknown): Promise<number[]> {
  const r = await call(server, 'SEARCH', index, { _query: query, _limit: 100, ...(sort === undefined ? {} : { _sort: sort }) });
  if (r.status !== 200) throw new Error(`SEARCH ${JSON.stringify(query)}: ${r.status} ${r.text}`);
  expect(r.json.total).toBe(r.json.hits.length);
  const found = (r.json.hits as Array<{ _id: number }>).map((h) => h._id);
  return sort === undefined ? found.sort((a, b) => a - b) : found;
}

async function schemaOf(target: Server, index: string): Promise<Record<string, any>> {
  const r = await call(target, 'GET', index);
  expect(r.status).toBe(200);
  return r.json._schema;
}

describe('time, timedelta and uuid', () => {
  test('detected and declared types, with their type char accuracy in the schema', async () => {
    const schema = await schemaOf(server, '/shops/');
    expect(schema.open).toMatchObject({ _type: 'time', _accuracy: ['minute', 'hour'], _accuracy_prefix: ['<3c>.', '<e10>.'] });
    expect(schema.late).toMatchObject({ _type: 'timedelta', _accuracy: ['minute', 'hour'] });
    expect(schema.ref._type).toBe('uuid');
    expect(schema.hours._type).toBe('array/time');
  });

  test('stored forms: HH:MM:SS, ±HH:MM:SS, lower-case UUIDs, condensed kept', async () => {
    const one = await call(server, 'GET', '/shops/1');
    expect(one.json).toMatchObject({ open: '08:00:00', late: '-00:15:00', ref: U1, hours: ['08:00:00', '12:00:00'] });
    expect((await call(server, 'GET', '/shops/3')).json).toMatchObject({ open: '11:45:30', late: '+01:30:00', ref: '~condensed' });
    expect((await call(server, 'GET', '/shops/5')).json).toMatchObject({ open: '21:00:00', late: '-01:00:00' });
  });

  test('equality, in any accepted spelling', async () => {
    expect(await ids('/shops/', { open: '10:00' })).toEqual([2]);
    expect(await ids('/shops/', { open: '10:00:00.000' })).toEqual([2]);
    expect(await ids('/shops/', { open: 36000 })).toEqual([2]);
    expect(await ids('/shops/', { late: '-00:15:00' })).toEqual([1]);
    expect(await ids('/shops/', { ref: U1.toUpperCase() })).toEqual([1, 4]);
    expect(await ids('/shops/', { ref: '~condensed' })).toEqual([3]);
    expect(await ids('/shops/', { ref: '~CONDENSED' })).toEqual([]);
    expect(await ids('/shops/', { hours: '18:30' })).toEqual([2]);
  });

  test('ranges: _range objects and range strings', async () => {
    expect(await ids('/shops/', { open: { _in: { _range: { _from: '10:00', _to: '12:30' } } } })).toEqual([2, 3, 4]);
    expect(await ids('/shops/', { open: { _in: '[10:00..12:30]' } })).toEqual([2, 3, 4]);
    expect(await ids('/shops/', { open: { _in: '..10:00' } })).toEqual([1, 2]);
    expect(await ids('/shops/', { late: { _in: '[-01:00..+00:00]' } })).toEqual([1, 2, 5]);
    expect(await ids('/shops/', { late: { _in: '[+24:00..]' } })).toEqual([4]);
    expect(await ids('/shops/', { hours: { _in: '[12:00..13:00]' } })).toEqual([1, 3]);
    expect(await ids('/shops/', { open: { _in: '[12:30..10:00]' } })).toEqual([]);
  });

  test('terms only: ranges match by the N-named accuracy buckets (§8.3), as INFO lists them', async () => {
    expect((await call(server, 'PUT', '/shop_terms/', {
      _settings: { number_of_shards: 2 }, _schema: { open: { _type: 'time', _index: 'field_terms' } },
    })).status).toBe(200);
    for (const { _id, open } of SHOPS) expect((await call(server, 'PUT', `/shop_terms/${_id}`, { open })).status).toBe(200);
    const terms = (await call(server, 'INFO', '/shop_terms/2')).json.terms.open;
    expect(Object.keys(terms['<3c>'])).toEqual([expect.stringMatching(/^N/)]);
    expect(Object.keys(terms['<e10>'])).toEqual([expect.stringMatching(/^N/)]);
    // 10:00..10:30 is 30 minutes: the hour step, bucket 10:00; 11:00..12:59 spans buckets 11:00 and 12:00.
    expect(await ids('/shop_terms/', { open: { _in: '[10:00..10:30]' } })).toEqual([2]);
    expect(await ids('/shop_terms/', { open: { _in: '[11:00..12:59]' } })).toEqual([3, 4]);
  });

  test('sorts by seconds', async () => {
    expect(await ids('/shops/', '*', 'open')).toEqual([1, 2, 3, 4, 5]);
    expect(await ids('/shops/', '*', '-late')).toEqual([4, 3, 2, 1, 5]);
  });

  test('casts _time, _timedelta and _uuid', async () => {
    expect(await ids('/shops/', { open: { _time: '10:00' } })).toEqual([2]);
    expect(await ids('/shops/', { late: { _timedelta: -900 } })).toEqual([1]);
    expect(await ids('/shops/', { ref: { _uuid: U2.toUpperCase() } })).toEqual([2, 5]);
    expect((await call(server, 'SEARCH', '/shops/', { _query: { open: { _uuid: U1 } } })).status).toBe(400);
  });

  test('uuid ranges compare canonical (lower-case) strings; uuid values aggregate by their text', async () => {
    const sorted = [...new Set(SHOPS.map((d) => (d as { ref?: string }).ref).filter((r): r is string => r !== undefined).map((r) => r.toLowerCase()))].sort();
    const from = sorted[1] as string;
    const expected = SHOPS.filter((d) => { const r = (d as { ref?: string }).ref; return r !== undefined && r.toLowerCase() >= from; })
      .map((d) => (d as { _id: number })._id).sort((a, b) => a - b);
    expect(await ids('/shops/', { ref: { _in: { _range: { _from: from.toUpperCase() } } } })).toEqual(expected);
    const aggs = await call(server, 'SEARCH', '/shops/', { _limit: 0, _aggs: { refs: { _values: { _field: 'ref' } } } });
    expect(aggs.json.aggregations.refs.map((b: { _key: string }) => b._key).sort()).toEqual(sorted);
  });

  test('a bad value is a 400 and writes nothing', async () => {
    for (const [field, value] of [['open', '25:00'], ['late', 'later'], ['ref', 'not-a-uuid'], ['open', true]] as const) {
      const r = await call(server, 'PUT', '/shops/9', { [field]: value });
      expect({ field, status: r.status }).toEqual({ field, status: 400 });
    }
    expect((await call(server, 'GET', '/shops/9')).status).toBe(404);
  });
});

describe('script fields and array/<type>', () => {
  test('a script value is stored as sent and searched as the text of its body', async () => {
    const put = await call(server, 'PUT', '/scripts_f/1', { code: { _type: 'script', _lua: 'return _doc.total * 2' } });
    expect(put.status).toBe(200);
    expect((await call(server, 'GET', '/scripts_f/1')).json.code).toEqual({ _lua: 'return _doc.total * 2' });
    expect((await schemaOf(server, '/scripts_f/')).code._type).toBe('script');
    expect(await ids('/scripts_f/', { code: 'total' })).toEqual([1]);
  });

  test('array/<type> for dates, uuids and timedeltas', async () => {
    expect((await call(server, 'PUT', '/arrays/', {
      _schema: { d: { _type: 'array/date' }, u: { _type: 'uuid/array' }, t: { _type: 'array/timedelta' } },
    })).status).toBe(200);
    expect((await call(server, 'PUT', '/arrays/1', { d: ['2020-01-01', '2021-01-01'], u: [U1, U2], t: ['+01:00', ['-01:00']] })).status).toBe(200);
    expect((await call(server, 'PUT', '/arrays/2', { d: '2022-01-01', u: U2, t: '+02:00' })).status).toBe(200);
    expect(await ids('/arrays/', { u: U1 })).toEqual([1]);
    expect(await ids('/arrays/', { u: U2 })).toEqual([1, 2]);
    expect(await ids('/arrays/', { t: { _in: '[-01:00..-01:00]' } })).toEqual([1]);
    expect(await ids('/arrays/', { d: { _in: '[2021-06-01..]' } })).toEqual([2]);
    const schema = await schemaOf(server, '/arrays/');
    expect([schema.d._type, schema.u._type, schema.t._type]).toEqual(['array/date', 'array/uuid', 'array/timedelta']);
  });
});

describe('namespaces and UUID-named children (§8.7)', () => {
  beforeAll(async () => {
    const docs = [
      { _id: 1, style: { _namespace: true, clothing: { footwear: 'boots', pants: 'jeans' }, hairstyle: 'bun' } },
      { _id: 2, style: { _namespace: true, clothing: { footwear: 'sandals' }, shoes: { footwear: 'boots' } } },
      { _id: 3, style: { _namespace: true, footwear: 'sneakers' } },
    ];
    for (const { _id, ...body } of docs) expect((await call(server, 'PUT', `/ns/${_id}`, body)).status).toBe(200);
  });

  test('full paths and partial paths (namespace root + leaf)', async () => {
    expect(await ids('/ns/', { 'style.clothing.footwear': 'boots' })).toEqual([1]);
    expect(await ids('/ns/', { 'style.footwear': 'boots' })).toEqual([1, 2]);
    expect(await ids('/ns/', { 'style.footwear': '*' })).toEqual([1, 2, 3]);
    expect(await ids('/ns/', { style: { clothing: { footwear: 'sandals' } } })).toEqual([2]);
    expect(await ids('/ns/', { 'style.pants': 'jeans' })).toEqual([1]);
  });

  test('descendants never enter the schema; the namespace reports their type', async () => {
    const schema = await schemaOf(server, '/ns/');
    expect(schema.style).toMatchObject({ _namespace: true, _type: 'text' });
    expect(Object.keys(schema.style).filter((k) => !k.startsWith('_'))).toEqual([]);
  });

  test('a value of another detected type is a 400 and changes nothing', async () => {
    const r = await call(server, 'PUT', '/ns/9', { style: { size: 42 } });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe("Bad Request: Type mismatch 'text' -> 'integer'");
    expect((await call(server, 'GET', '/ns/9')).status).toBe(404);
  });

  test('UUID-named children share <uuid_field>; uuid (default) and uuid_field indexing', async () => {
    expect((await call(server, 'PUT', '/people/1', { team: { [U1]: { name: 'Ann' }, [U2]: { name: 'Bob' } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/people/2', { team: { [U2.toUpperCase()]: { name: 'Ann' } } })).status).toBe(200);
    const schema = await schemaOf(server, '/people/');
    expect(Object.keys(schema.team).filter((k) => !k.startsWith('_'))).toEqual(['<uuid_field>']);
    expect(await ids('/people/', { [`team.${U1}.name`]: 'ann' })).toEqual([1]);
    expect(await ids('/people/', { [`team.${U2}.name`]: 'ann' })).toEqual([2]);
    expect((await call(server, 'GET', '/people/2')).json.team).toEqual({ [U2.toUpperCase()]: { name: 'Ann' } });

    expect((await call(server, 'PUT', '/people2/', { _schema: { team: { _type: 'object', _index_uuid_field: 'uuid_field' } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/people2/1', { team: { [U1]: { name: 'Ann' } } })).status).toBe(200);
    expect(await ids('/people2/', { 'team.<uuid_field>.name': 'ann' })).toEqual([1]);
  });
});

describe('_strict and --strict (§8.8)', () => {
  test('--strict: a new index needs _settings (412), a new field needs _type (412)', async () => {
    const noSettings = await call(strictServer, 'PUT', '/s/1', { a: 1 });
    expect(noSettings.status).toBe(412);
    expect((await call(strictServer, 'GET', '/s/')).status).toBe(404);
    expect((await call(strictServer, 'PUT', '/s/', { _schema: { a: { _type: 'integer' } } })).status).toBe(412);
    expect((await call(strictServer, 'PUT', '/s/', { _settings: { number_of_shards: 1 }, _schema: { a: { _type: 'integer' } } })).status).toBe(200);
    const missing = await call(strictServer, 'PUT', '/s/1', { a: 1, b: 'x' });
    expect(missing.status).toBe(412);
    expect(missing.json.message).toBe("Precondition Failed: Type of field 'b' is missing");
    expect((await call(strictServer, 'GET', '/s/1')).status).toBe(404);
    expect((await call(strictServer, 'PUT', '/s/1', { a: 1, b: { _type: 'keyword', _value: 'x' } })).status).toBe(200);
    expect((await schemaOf(strictServer, '/s/')).b._type).toBe('keyword');
  });

  test('_strict: true in a schema, inherited; _strict: false below lifts it', async () => {
    expect((await call(server, 'PUT', '/strict/', { _schema: { _strict: true, loose: { _type: 'object', _strict: false } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/strict/1', { x: 1 })).status).toBe(412);
    expect((await call(server, 'PUT', '/strict/1', { loose: { x: 1 } })).status).toBe(200);
    expect((await call(server, 'PUT', '/strict/2', { y: { _type: 'integer', _value: 2 } })).status).toBe(200);
  });
});

describe('_dynamic, _recurse, _ignore, _meta, detection flags', () => {
  test('_dynamic: false keeps unknown fields unindexed and out of the schema', async () => {
    expect((await call(server, 'PUT', '/dyn/', { _schema: { _dynamic: false, name: { _type: 'keyword' } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/dyn/1', { name: 'a', other: 'kept', deep: { n: 1 } })).status).toBe(200);
    expect((await call(server, 'GET', '/dyn/1')).json).toMatchObject({ name: 'a', other: 'kept', deep: { n: 1 } });
    const schema = await schemaOf(server, '/dyn/');
    expect([schema.other, schema.deep]).toEqual([undefined, undefined]);
    expect(await ids('/dyn/', { other: 'kept' })).toEqual([]);
    expect(await ids('/dyn/', { name: 'a' })).toEqual([1]);
  });

  test('_recurse: false keeps an object as sent, untyped and unindexed', async () => {
    expect((await call(server, 'PUT', '/rec/1', { raw: { _recurse: false, a: { b: 1 }, s: '10:00' }, n: 1 })).status).toBe(200);
    expect((await call(server, 'GET', '/rec/1')).json.raw).toEqual({ a: { b: 1 }, s: '10:00' });
    const schema = await schemaOf(server, '/rec/');
    expect(schema.raw).toMatchObject({ _recurse: false });
    expect(schema.raw.a).toBeUndefined();
    expect(await ids('/rec/', { 'raw.a.b': 1 })).toEqual([]);
  });

  test('_ignore names children kept but not indexed', async () => {
    expect((await call(server, 'PUT', '/ign/', { _schema: { user: { _type: 'object', _ignore: ['secret'] } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/ign/1', { user: { name: 'ann', secret: 'pw' } })).status).toBe(200);
    expect((await call(server, 'GET', '/ign/1')).json.user).toEqual({ name: 'ann', secret: 'pw' });
    expect(await ids('/ign/', { 'user.secret': 'pw' })).toEqual([]);
    expect(await ids('/ign/', { 'user.name': 'ann' })).toEqual([1]);
    expect((await schemaOf(server, '/ign/')).user.secret).toBeUndefined();
  });

  test('_meta is stored and returned, never interpreted', async () => {
    const meta = { owner: 'team', notes: ['x', 1], _type: 'not a type' };
    expect((await call(server, 'PUT', '/meta/', { _schema: { _meta: { v: 2 }, f: { _type: 'keyword', _meta: meta } } })).status).toBe(200);
    const schema = await schemaOf(server, '/meta/');
    expect(schema._meta).toEqual({ v: 2 });
    expect(schema.f._meta).toEqual(meta);
  });

  test('detection flags switch detection steps off, inherited', async () => {
    expect((await call(server, 'PUT', '/det/', { _schema: { _time_detection: false, o: { _type: 'object', _uuid_detection: false, _timedelta_detection: false } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/det/1', { t: '10:30', o: { u: U1, t: '10:30' }, u: U1 })).status).toBe(200);
    const schema = await schemaOf(server, '/det/');
    expect([schema.t._type, schema.u._type, schema.o.u._type, schema.o.t._type]).toEqual(['timedelta', 'uuid', 'text', 'text']);
  });
});

describe('foreign schemas (§8.9)', () => {
  test('the schema lives in a document, created from the given fields, shared by the indexes naming it', async () => {
    const a = await call(server, 'PUT', '/fa/', { _schema: { _type: 'foreign/object', _foreign: 'schemas/shared', name: { _type: 'keyword' } } });
    expect(a.status).toBe(200);
    const holder = await call(server, 'GET', '/schemas/shared');
    expect(holder.status).toBe(200);
    expect(holder.json.schema).toMatchObject({ name: { _type: 'keyword' } });
    expect((await call(server, 'PUT', '/fb/', { _schema: { _type: 'foreign/object', _foreign: '/schemas/shared' } })).status).toBe(200);
    expect((await schemaOf(server, '/fb/')).name._type).toBe('keyword');

    expect((await call(server, 'PUT', '/fa/1', { name: 'Ann', extra: 5 })).status).toBe(200);
    expect((await schemaOf(server, '/fb/')).extra._type).toBe('integer');
    expect((await call(server, 'GET', '/schemas/shared')).json.schema.extra).toEqual({ _type: 'integer' });
    const mismatch = await call(server, 'PUT', '/fb/1', { extra: 'five' });
    expect(mismatch.status).toBe(400);
    expect((await call(server, 'PUT', '/fb/2', { name: 'Bob', extra: 6 })).status).toBe(200);
    expect(await ids('/fb/', { name: 'bob' })).toEqual([2]);
  });

  test('an existing holder document gives its schema; unreadable targets are 400s', async () => {
    // The holder's `schema` field is not typed (`_recurse: false` on the field, its content as `_value`).
    expect((await call(server, 'PUT', '/schemas/given', { schema: { _recurse: false, _value: { when: { _type: 'time' } } } })).status).toBe(200);
    expect((await call(server, 'PUT', '/fc/', { _schema: { _type: 'foreign/object', _foreign: 'schemas/given' } })).status).toBe(200);
    expect((await schemaOf(server, '/fc/')).when._type).toBe('time');

    expect((await call(server, 'PUT', '/schemas/plain', { title: 'no schema here' })).status).toBe(200);
    for (const foreign of ['schemas/plain', 'nope', 42]) {
      const r = await call(server, 'PUT', '/fd/', { _schema: { _type: 'foreign/object', _foreign: foreign } });
      expect({ foreign, status: r.status }).toEqual({ foreign, status: 400 });
    }
    expect((await call(server, 'GET', '/fd/')).status).toBe(404);
    expect((await call(server, 'PUT', '/fa/', { _schema: { _type: 'foreign/object', _foreign: 'schemas/given' } })).status).toBe(400);
  });
});

describe('_language: Snowball languages', () => {
  test.each([
    ['es', 'corriendo', 'correr'], ['french', 'chevaux', 'cheval'], ['de', 'Häuser', 'haus'], ['porter', 'running', 'runs'],
    // Lower-case queries: under stem_some a capitalised query word is not stemmed (Xapian's rule).
  ])('_language %s: "%s" is found by "%s"', async (language, indexed, query) => {
    const index = `/lang_${language}/`;
    expect((await call(server, 'PUT', `${index}1`, { body: { _type: 'text', _language: language, _value: `x ${indexed} y` } })).status).toBe(200);
    expect(await ids(index, { body: query })).toEqual([1]);
  });

  test('an unknown language is a 400', async () => {
    const r = await call(server, 'PUT', '/lang_bad/1', { body: { _type: 'text', _language: 'klingon', _value: 'x' } });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/klingon/);
    expect((await call(server, 'GET', '/lang_bad/1')).status).toBe(404);
  });
});
