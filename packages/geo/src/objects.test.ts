import { TesseraError } from '@tessera/errors';
import { formatEwkt } from './ewkt.js';
import { isCoordinateArray, parseGeoValue } from './objects.js';

function code(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return err instanceof TesseraError ? `${err.status} ${err.code}` : String(err);
  }
  return 'ok';
}

const ewkt = (value: unknown): string => formatEwkt(parseGeoValue(value));

describe('geo values as JSON (API.md §8.6)', () => {
  test('shape objects, arrays and EWKT strings', () => {
    expect(ewkt({ _point: { _latitude: 31.76212, _longitude: -95.63079 } })).toBe('POINT(-95.63079 31.76212)');
    expect(ewkt({ _point: { _lat: 1, _lng: 2, _height: 3 } })).toBe('POINT(2 1 3)');
    expect(ewkt({ _circle: { _latitude: 48.86, _longitude: 2.35, _radius: '2.72km' } })).toBe('CIRCLE(2.35 48.86, 2720)');
    expect(ewkt({ _convex: { _latitude: [1, 1.01], _longitude: [2, 2], _radius: 5000 } })).toBe('CONVEX((2 1, 5000), (2 1.01, 5000))');
    expect(ewkt({ _polygon: { _latitude: [0, 0, 10, 10], _longitude: [0, 10, 10, 0] } })).toBe('POLYGON((0 0, 10 0, 10 10, 0 10))');
    expect(ewkt({ _polygon: { _latitude: [[0, 0, 10, 10], [2, 2, 4]], _longitude: [[0, 10, 10, 0], [2, 4, 4]] } }))
      .toBe('POLYGON((0 0, 10 0, 10 10, 0 10), (2 2, 4 2, 4 4))');
    expect(ewkt({ _chull: { _latitude: [0, 10, 5, 0, 10], _longitude: [0, 0, 5, 10, 10] } })).toBe('POLYGON((0 0, 10 0, 10 10, 0 10))');
    expect(ewkt({ _multipoint: { _latitude: [1, 2], _longitude: [3, 4] } })).toBe('MULTIPOINT(3 1, 4 2)');
    expect(ewkt({ _multicircle: { _latitude: [1, 2], _longitude: [3, 4], _radius: [10, '1km'] } })).toBe('MULTICIRCLE((3 1, 10), (4 2, 1000))');
    expect(ewkt({ _multiconvex: [{ _latitude: [1], _longitude: [2], _radius: 3 }] })).toBe('MULTICONVEX(((2 1, 3)))');
    expect(ewkt({ _multipolygon: [{ _latitude: [0, 0, 1], _longitude: [0, 1, 1] }, { _chull: { _latitude: [5, 5, 6], _longitude: [5, 6, 6] } }] }))
      .toBe('MULTIPOLYGON(((0 0, 1 0, 1 1)), ((5 5, 6 5, 6 6)))');
    expect(ewkt({ _geometrycollection: [{ _point: { _latitude: 1, _longitude: 2 } }, 'CIRCLE(3 4, 5)', [6, 7]] }))
      .toBe('GEOMETRYCOLLECTION(POINT(2 1), CIRCLE(3 4, 5), POINT(6 7))');
    expect(ewkt({ _ewkt: 'POINT(1 2)' })).toBe('POINT(1 2)');
    expect(ewkt([-73.97, 40.78])).toBe('POINT(-73.97 40.78)');
    expect(ewkt([-73.97, 40.78, 10])).toBe('POINT(-73.97 40.78 10)');
    expect(ewkt('CIRCLE(1 2, 3)')).toBe('CIRCLE(1 2, 3)');
  });

  test('[lon, lat] arrays: two or three finite numbers within range', () => {
    expect(isCoordinateArray([-180, 90])).toBe(true);
    expect(isCoordinateArray([1, 2, 3])).toBe(true);
    expect(isCoordinateArray([1])).toBe(false);
    expect(isCoordinateArray([1, 2, 3, 4])).toBe(false);
    expect(isCoordinateArray([181, 0])).toBe(false);
    expect(isCoordinateArray([0, 91])).toBe(false);
    expect(isCoordinateArray(['1', 2])).toBe(false);
    expect(isCoordinateArray([NaN, 2])).toBe(false);
  });

  test('DMS and decimal-degree text, missing or unknown keys, mismatched arrays are 400', () => {
    for (const bad of [
      { _point: { _latitude: "40°26'46\"N", _longitude: "79°58'56\"W" } },
      { _point: { _latitude: '40.4461', _longitude: '-79.9822' } },
      { _point: { _latitude: 1 } },
      { _point: { _latitude: 1, _longitude: 2, _radius: 3 } },
      { _point: [1, 2] },
      { _circle: { _latitude: 1, _longitude: 2 } },
      { _circle: { _latitude: 1, _longitude: 2, _radius: 'far' } },
      { _polygon: { _latitude: [1, 2], _longitude: [1, 2, 3] } },
      { _polygon: { _latitude: 1, _longitude: 2 } },
      { _multipoint: { _latitude: [], _longitude: [] } },
      { _multipolygon: [] },
      { _geometrycollection: 'POINT(1 2)' },
      { _ewkt: 5 },
      { _point: { _latitude: 1, _longitude: 2 }, _circle: { _latitude: 1, _longitude: 2, _radius: 1 } },
      { _foo: 1 },
      {},
      [200, 0],
      [1, 2, 3, 4],
      "40°26'46\"N 79°58'56\"W",
      5,
      null,
    ]) {
      expect({ bad, code: code(() => parseGeoValue(bad)) }).toEqual({ bad, code: '400 invalid_geo' });
    }
  });
});
