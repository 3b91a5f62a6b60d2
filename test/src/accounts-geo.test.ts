/**
 * Geospatial search over HTTP (API.md §8.6, §9.3, §9.5, §10) on
 * ../shared/data/accounts.ndjson: 1,000 accounts whose `checkin` is a
 * `{"_point": …}`, restored into an index of 3 shards. Points within circles
 * and polygons are checked against a brute-force great-circle computation
 * written here, and sorts by distance against the same distances; `_in`
 * weights, exact-shape equality, the stored form, the schema, aggregation
 * keys (EWKT for geo, ISO 8601 for dates) and the 400s.
 *
 * The data's `style` is a `_namespace`, another issue's subject: left out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, REPO_ROOT, removeDir, startServer, type Server } from './harness.js';

interface Account {
  _id: number;
  checkin: { _point: { _longitude: number; _latitude: number } };
  opened: string;
}

const R = 6_371_008.8;
const RAD = Math.PI / 180;

/** Great-circle distance in metres (haversine). */
function distance(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const h = Math.sin(((lat2 - lat1) * RAD) / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(((lon2 - lon1) * RAD) / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}

type V = [number, number, number];
const vec = (lat: number, lon: number): V => [Math.cos(lat * RAD) * Math.cos(lon * RAD), Math.cos(lat * RAD) * Math.sin(lon * RAD), Math.sin(lat * RAD)];
const cross = (a: V, b: V): V => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const dot = (a: V, b: V): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/** In a convex polygon given counter-clockwise (edges are great circles): on the left of every edge; 'edge' within ~1 m of one. */
function inPolygon(ring: Array<[number, number]>, lat: number, lon: number): boolean | 'edge' {
  const p = vec(lat, lon);
  let inside = true;
  for (let i = 0; i < ring.length; i++) {
    const n = cross(vec(...ring[i]!), vec(...ring[(i + 1) % ring.length]!));
    const s = dot(n, p) / Math.hypot(...n);
    if (Math.abs(s) < 1e-7) return 'edge';
    if (s < 0) inside = false;
  }
  return inside;
}

let server: Server;
let docs: Account[] = [];
const lat = (d: Account): number => d.checkin._point._latitude;
const lon = (d: Account): number => d.checkin._point._longitude;

beforeAll(async () => {
  server = await startServer();
  const lines = readFileSync(join(REPO_ROOT, '../shared/data/accounts.ndjson'), 'utf8').trim().split('\n');
  const bodies = lines.map((line) => {
    const d = JSON.parse(line) as Record<string, unknown>;
    delete d.style;
    d.opened = `2015-0${1 + ((d._id as number) % 9)}-1${(d._id as number) % 3}`;
    return d;
  });
  docs = bodies as unknown as Account[];
  expect((await call(server, 'PUT', '/geo/', { _settings: { number_of_shards: 3 } })).status).toBe(200);
  const r = await call(server, 'RESTORE', '/geo/', bodies.map((d) => JSON.stringify(d)).join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(r.json).toMatchObject({ indexed: docs.length });
}, 60_000);

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

async function searchIds(body: Record<string, unknown>): Promise<{ ids: number[]; total: number; hits: Array<Record<string, unknown>> }> {
  const r = await call(server, 'SEARCH', '/geo/', { _limit: 1000, ...body });
  expect(r.status).toBe(200);
  const json = r.json as { hits: Array<Record<string, unknown>>; total: number };
  return { ids: json.hits.map((h) => h._id as number), total: json.total, hits: json.hits };
}

const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

describe('geo fields of the accounts sample', () => {
  test('checkin is detected as geo, reported with its options, and stored as sent', async () => {
    const index = await call(server, 'GET', '/geo/');
    expect((index.json as { _schema: Record<string, unknown> })._schema.checkin).toMatchObject({
      _type: 'geo', _accuracy: [3, 5, 8, 10, 12, 15], _partials: true, _error: 0.3,
    });
    const doc = await call(server, 'GET', '/geo/1');
    expect((doc.json as Account).checkin).toEqual(docs[0]!.checkin);
  });

  test.each([
    { lat: 31.76, lon: -95.63, r: 300_000 },
    { lat: 40.7, lon: -74, r: '500km' },
    { lat: 37.5, lon: -100, r: '1000mi' },
    { lat: 45, lon: -120, r: 50_000 },
    { lat: 0, lon: 0, r: 10 },
  ])('points within circle %o are the brute-force set, weighted π − angle to the centre', async ({ lat: la, lon: lo, r }) => {
    const metres = typeof r === 'number' ? r : r.endsWith('mi') ? parseFloat(r) * 1609.344 : parseFloat(r) * 1000;
    const expected = docs.filter((d) => distance(la, lo, lat(d), lon(d)) <= metres).map((d) => d._id);
    const found = await searchIds({ _query: { checkin: { _in: { _circle: { _latitude: la, _longitude: lo, _radius: r } } } } });
    expect(found.total).toBe(expected.length);
    expect(sorted(found.ids)).toEqual(sorted(expected));
    // Ranked by weight: the nearest first.
    const byDistance = [...expected].sort((a, b) => distance(la, lo, lat(docs[a - 1]!), lon(docs[a - 1]!)) - distance(la, lo, lat(docs[b - 1]!), lon(docs[b - 1]!)));
    expect(found.ids).toEqual(byDistance);
    for (const hit of found.hits) {
      const d = docs[(hit._id as number) - 1]!;
      expect(hit['#weight']).toBeCloseTo(Math.PI - distance(la, lo, lat(d), lon(d)) / R, 9);
    }
  });

  test('points within polygons (convex, EWKT, CHULL) are the brute-force set', async () => {
    const ring: Array<[number, number]> = [[30, -105], [30, -90], [42, -88], [45, -100], [38, -110]]; // [lat, lon], counter-clockwise
    const verdicts = docs.map((d) => ({ id: d._id, inside: inPolygon(ring, lat(d), lon(d)) }));
    expect(verdicts.some((v) => v.inside === true)).toBe(true);
    const polygon = { _polygon: { _latitude: ring.map((p) => p[0]), _longitude: ring.map((p) => p[1]) } };
    const byObject = await searchIds({ _query: { checkin: { _in: polygon } } });
    for (const v of verdicts) if (v.inside !== 'edge') expect({ id: v.id, found: byObject.ids.includes(v.id) }).toEqual({ id: v.id, found: v.inside });
    const ewkt = `POLYGON((${[...ring].reverse().map(([a, o]) => `${o} ${a}`).join(', ')}))`; // clockwise: the same polygon
    expect(sorted((await searchIds({ _query: { checkin: { _in: { _ewkt: ewkt } } } })).ids)).toEqual(sorted(byObject.ids));
    const hullPoints = [...ring, [36, -98] as [number, number]];
    const chull = { _chull: { _latitude: hullPoints.map((p) => p[0]), _longitude: hullPoints.map((p) => p[1]) } };
    expect(sorted((await searchIds({ _query: { checkin: { _in: chull } } })).ids)).toEqual(sorted(byObject.ids));
  });

  test('sorted by great-circle distance to a point, ascending and descending, also as sort=field:EWKT', async () => {
    const ref = { lat: 39.74, lon: -104.99 };
    const order = docs.map((d) => ({ id: d._id, m: distance(ref.lat, ref.lon, lat(d), lon(d)) })).sort((a, b) => a.m - b.m || a.id - b.id);
    const point = { _point: { _latitude: ref.lat, _longitude: ref.lon } };
    const asc = await searchIds({ _limit: 25, _sort: { checkin: { _value: point, _order: 'asc' } } });
    expect(asc.ids).toEqual(order.slice(0, 25).map((o) => o.id));
    const desc = await searchIds({ _limit: 25, _offset: 5, _sort: { checkin: { _value: point, _order: 'desc' } } });
    // Ties (the sample has 160 distinct places) by _id ascending in either direction (§9.5).
    expect(desc.ids).toEqual([...order].sort((a, b) => b.m - a.m || a.id - b.id).slice(5, 30).map((o) => o.id));
    const byString = await call(server, 'GET', `/geo/:search?limit=10&sort=${encodeURIComponent(`checkin:POINT(${ref.lon} ${ref.lat})`)}`);
    expect((byString.json as { hits: Array<{ _id: number }> }).hits.map((h) => h._id)).toEqual(order.slice(0, 10).map((o) => o.id));
    // Within a circle, nearest first by a sort on another centre.
    const within = await searchIds({
      _query: { checkin: { _in: { _circle: { _latitude: ref.lat, _longitude: ref.lon, _radius: '800km' } } } },
      _sort: { checkin: { _value: `POINT(${ref.lon} ${ref.lat})` } },
    });
    expect(within.ids).toEqual(order.filter((o) => o.m <= 800_000).map((o) => o.id));
  });

  test('exact shape equality matches the accounts at that point, however the point is written', async () => {
    const d = docs[41]!;
    const expected = docs.filter((x) => lat(x) === lat(d) && lon(x) === lon(d)).map((x) => x._id);
    expect(expected.length).toBeGreaterThan(1);
    const point = { _point: { _latitude: lat(d), _longitude: lon(d) } };
    expect(sorted((await searchIds({ _query: { checkin: point } })).ids)).toEqual(expected);
    expect(sorted((await searchIds({ _query: { checkin: { _ewkt: `POINT(${lon(d)} ${lat(d)})` } } })).ids)).toEqual(expected);
    expect(sorted((await searchIds({ _query: { checkin: `POINT(${lon(d)} ${lat(d)})` } })).ids)).toEqual(expected);
    const nearby = { _point: { _latitude: lat(d), _longitude: lon(d) + 1e-5 } };
    expect((await searchIds({ _query: { checkin: nearby } })).ids).toEqual([]);
  });

  test('aggregation keys: geo values as EWKT, date buckets as ISO 8601', async () => {
    const r = await call(server, 'SEARCH', '/geo/', {
      _query: { _id: [1, 2, 3] }, _limit: 0,
      _aggs: {
        places: { _values: { _field: 'checkin' } },
        months: { _histogram: { _field: 'opened', _interval: 86400 * 30 } },
        spans: { _range: { _field: 'opened', _ranges: [{ _from: '2015-01-01', _to: '2015-03-01' }, { _from: '2015-03-01' }] } },
      },
    });
    expect(r.status).toBe(200);
    const aggs = (r.json as { aggregations: Record<string, Array<{ _key: string; _doc_count: number }>> }).aggregations;
    expect(aggs.places!.map((b) => b._key).sort()).toEqual(docs.slice(0, 3).map((d) => `POINT(${lon(d)} ${lat(d)})`).sort());
    for (const b of aggs.months!) expect(b._key).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(aggs.spans!.map((b) => b._key)).toEqual(['2015-01-01T00:00:00..2015-03-01T00:00:00', '2015-03-01T00:00:00..']);
  });

  test('bad geo input is 400 with a clear message, and changes nothing', async () => {
    const noValue = await call(server, 'SEARCH', '/geo/', { _sort: { checkin: { _order: 'asc' } } });
    expect(noValue.status).toBe(400);
    expect(String((noValue.json as { message: string }).message)).toMatch(/checkin.*_value/);
    const bad = await call(server, 'SEARCH', '/geo/', { _query: { checkin: { _in: { _circle: { _latitude: 95, _longitude: 0, _radius: 1 } } } } });
    expect(bad.status).toBe(400);
    expect(String((bad.json as { message: string }).message)).toMatch(/latitude/i);
    const dms = await call(server, 'PUT', '/geo/5000', { checkin: "40°26'46\"N 79°58'56\"W" });
    expect(dms.status).toBe(400);
    expect((await call(server, 'GET', '/geo/5000')).status).toBe(404);
    const units = await call(server, 'SEARCH', '/geo/', { _query: { checkin: { _in: { _circle: { _latitude: 1, _longitude: 2, _radius: '3 parsecs' } } } } });
    expect(units.status).toBe(400);
  });
});
