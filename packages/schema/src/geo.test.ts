/**
 * The geo type in the schema (API.md §8.1, §8.2, §8.6): detection of EWKT
 * strings, shape objects and `[lon, lat]` arrays; stored form as sent and
 * canonical EWKT to index; HTM-level accuracy and the `_partials`/`_error`
 * options; exact-shape terms equal across spellings.
 */
import { DEFAULT_DETECTION, detectType } from './detect.js';
import { foldDocument } from './fold.js';
import { error, values } from './fold.fixture.js';
import { createSchema, describeSchema, fieldSpec } from './schema.js';
import { fieldTerm } from './terms.js';


describe('geo detection (API.md §8.1)', () => {
  test('EWKT strings after timedelta, shape objects, [lon, lat] arrays within range', () => {
    expect(detectType('POINT(-95.63 31.76)')).toBe('geo');
    expect(detectType('SRID=4326;CIRCLE(1 2, 3km)')).toBe('geo');
    expect(detectType('POINT of view')).toBe('text');
    expect(detectType('POINT(1 200)')).toBe('text');
    expect(detectType({ _circle: { _latitude: 1, _longitude: 2, _radius: 3 } })).toBe('geo');
    expect(detectType({ _value: [2, 1], _type: 'geo' })).toBe('geo');
    expect(detectType([-95.63, 31.76])).toBe('geo');
    expect(detectType([1, 2, 30])).toBe('geo');
    expect(detectType([[1, 2], [3, 4]])).toBe('array/geo');
    expect(detectType([200, 2])).toBe('array/integer');
    expect(detectType([1, 2, 3, 4])).toBe('array/integer');
  });

  test('_geo_detection: false leaves arrays numbers and EWKT text', () => {
    const flags = { ...DEFAULT_DETECTION, geo: false };
    expect(detectType([1, 2], flags)).toBe('array/integer');
    expect(detectType('POINT(1 2)', flags)).toBe('text');
    const r = foldDocument({}, { _geo_detection: false, a: [1, 2], p: 'POINT(1 2)' });
    expect(r.schema).toMatchObject({ a: { _type: 'array/integer' }, p: { _type: 'text' } });
  });
});

describe('geo values in documents', () => {
  test('stored as sent, indexed as canonical EWKT', () => {
    const doc = {
      checkin: { _point: { _longitude: -95.63079, _latitude: 31.76212 } },
      area: 'polygon((0 0, 0 10, 10 10, 10 0))',
      home: [-73.97, 40.78],
      visits: [[1, 2], { _point: { _latitude: 4, _longitude: 3 } }, 'POINT(5 6)'],
      zone: { _type: 'geo', _accuracy: [0, 10, 25], _partials: false, _error: 0.1, _value: { _circle: { _latitude: 1, _longitude: 2, _radius: '1km' } } },
    };
    const r = foldDocument({}, doc);
    expect(r.document.stored).toEqual({
      checkin: doc.checkin, area: doc.area, home: doc.home, visits: doc.visits,
      zone: { _circle: { _latitude: 1, _longitude: 2, _radius: '1km' } },
    });
    expect(values(r)).toEqual([
      ['checkin', 'POINT(-95.63079 31.76212)'],
      ['area', 'POLYGON((0 0, 10 0, 10 10, 0 10))'],
      ['home', 'POINT(-73.97 40.78)'],
      ['visits', 'POINT(1 2)'], ['visits', 'POINT(3 4)'], ['visits', 'POINT(5 6)'],
      ['zone', 'CIRCLE(2 1, 1000)'],
    ]);
    expect(r.schema).toMatchObject({
      checkin: { _type: 'geo' }, area: { _type: 'geo' }, home: { _type: 'geo' }, visits: { _type: 'array/geo' },
      zone: { _type: 'geo', _accuracy: [0, 10, 25], _partials: false, _error: 0.1 },
    });
    expect(fieldSpec(r.schema, 'checkin')).toMatchObject({ type: 'geo', typeChar: 'G', accuracy: [3, 5, 8, 10, 12, 15] });
    expect(fieldSpec(r.schema, 'zone')?.accuracy).toEqual([0, 10, 25]);
  });

  test('a declared geo field converts later values; bad ones are 400', () => {
    const schema = createSchema({ loc: { _type: 'geo' } });
    expect(values(foldDocument(schema, { loc: 'CIRCLE(1 2, 3)' }))).toEqual([['loc', 'CIRCLE(1 2, 3)']]);
    expect(error(() => foldDocument(schema, { loc: 5 }))).toBe("400 type_mismatch: Type mismatch 'geo' -> 'integer'");
    expect(error(() => foldDocument(schema, { loc: "40°26'46\"N 79°58'56\"W" }))).toMatch(/^400 invalid_value: Invalid 'geo' value for field 'loc': /);
    expect(error(() => foldDocument(schema, { loc: { _point: { _latitude: '40.5', _longitude: 2 } } }))).toMatch(/^400 invalid_value: .*latitude/);
    expect(error(() => foldDocument(schema, { loc: [1, 2, 3, 4] }))).toBe("400 type_mismatch: Type mismatch 'geo' -> 'integer'");
    expect(error(() => foldDocument(schema, { loc: { _point: { _latitude: 1, _longitude: 2 }, _circle: {} } }))).toMatch(/^400 /);
    const integer = createSchema({ n: { _type: 'integer' } });
    expect(error(() => foldDocument(integer, { n: { _point: { _latitude: 1, _longitude: 2 } } }))).toBe("400 type_mismatch: Type mismatch 'integer' -> 'geo'");
  });

  test('one exact-shape term for every spelling of a shape', () => {
    const spec = fieldSpec(createSchema({ loc: { _type: 'geo' } }), 'loc')!;
    const ewkt = (v: unknown) => values(foldDocument(createSchema({ loc: { _type: 'geo' } }), { loc: v }))[0]![1] as string;
    const term = fieldTerm(spec, ewkt({ _point: { _latitude: 1, _longitude: 2 } }));
    expect(term).toMatch(/^loc\.G[0-9a-f]{16}$/);
    expect(fieldTerm(spec, ewkt('POINT(2 1)'))).toBe(term);
    expect(fieldTerm(spec, ewkt([2, 1]))).toBe(term);
    expect(fieldTerm(spec, ewkt('POINT(2 1.000001)'))).not.toBe(term);
  });
});

describe('geo options (API.md §8.2)', () => {
  test('_accuracy is HTM levels 0–25; _partials and _error only for geo; all reported by GET', () => {
    const s = createSchema({ loc: { _type: 'geo' }, pin: { _type: 'geo', _accuracy: [0, 25], _error: 0.5 } });
    expect(describeSchema(s)).toMatchObject({
      loc: { _type: 'geo', _accuracy: [3, 5, 8, 10, 12, 15], _accuracy_prefix: ['<3>.', '<5>.', '<8>.', '<a>.', '<c>.', '<f>.'], _partials: true, _error: 0.3 },
      pin: { _type: 'geo', _accuracy: [0, 25], _accuracy_prefix: ['<0>.', '<19>.'], _partials: true, _error: 0.5 },
    });
    expect(error(() => createSchema({ loc: { _type: 'geo', _accuracy: [26] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ loc: { _type: 'geo', _accuracy: ['day'] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ loc: { _type: 'geo', _accuracy: [-1] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ n: { _type: 'integer', _accuracy: [0, 10] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ t: { _type: 'text', _partials: true } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ t: { _type: 'keyword', _error: 0.2 } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ loc: { _type: 'geo', _error: -1 } }))).toMatch(/^400 invalid_field_option/);
  });
});
