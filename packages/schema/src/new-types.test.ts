/** time, timedelta, uuid, script and array/<type> through detection, folding, specs, terms and describeSchema. */
import { DEFAULT_DETECTION, type DetectionFlags, detectType } from './detect.js';
import { foldDocument } from './fold.js';
import { error, values } from './fold.fixture.js';
import { createSchema, describeSchema, fieldSpec } from './schema.js';
import { accuracyTerms, fieldTerm } from './terms.js';

const UUID = '5759b016-10c0-4526-a981-47d6d19f6fb4';

describe('detection order of §8.1: uuid → date → datetime → time → timedelta → boolean → text', () => {
  const off = (...flags: Array<keyof DetectionFlags>): DetectionFlags =>
    ({ ...DEFAULT_DETECTION, ...Object.fromEntries(flags.map((f) => [f, false])) });

  test('each string type is detected', () => {
    expect(detectType(UUID.toUpperCase())).toBe('uuid');
    expect(detectType('2015-01-01')).toBe('date');
    expect(detectType('2015-01-01T10:00:00')).toBe('datetime');
    expect(detectType('10:30')).toBe('time');
    expect(detectType('10:30:15.5+01:00')).toBe('time');
    expect(detectType('+01:30')).toBe('timedelta');
    expect(detectType('36:00')).toBe('timedelta');
    expect(detectType('true')).toBe('boolean');
    expect(detectType('hello')).toBe('text');
    expect(detectType(['10:00', '11:00'])).toBe('array/time');
  });

  test('flags switch each step off, falling through to the next', () => {
    expect(detectType(UUID, off('uuid'))).toBe('text');
    expect(detectType('10:30', off('time'))).toBe('timedelta');
    expect(detectType('10:30', off('time', 'timedelta'))).toBe('text');
    expect(detectType('+01:30', off('timedelta'))).toBe('text');
    expect(detectType('10:30', off('time', 'timedelta', 'text'))).toBe('keyword');
  });

  test('flags are inherited from the object that sets them', () => {
    const r = foldDocument({}, { o: { _time_detection: false, _uuid_detection: false, a: '10:30', b: UUID, c: { d: '10:30' } }, t: '10:30' });
    expect(r.schema).toMatchObject({ o: { a: { _type: 'timedelta' }, b: { _type: 'text' }, c: { d: { _type: 'timedelta' } } }, t: { _type: 'time' } });
  });
});

describe('time and timedelta fields', () => {
  test('values are seconds, stored as HH:MM:SS; numbers accepted', () => {
    const r = foldDocument({}, { open: '09:30', close: { _type: 'time', _value: 64800.5 }, late: '-00:15', span: { _type: 'timedelta', _value: 90 } });
    expect(r.schema).toEqual({ open: { _type: 'time' }, close: { _type: 'time' }, late: { _type: 'timedelta' }, span: { _type: 'timedelta' } });
    expect(r.document.stored).toEqual({ open: '09:30:00', close: '18:00:00.5', late: '-00:15:00', span: '+00:01:30' });
    expect(values(r)).toEqual([['open', 34200], ['close', 64800.5], ['late', -900], ['span', 90]]);
  });

  test('bad values are 400s', () => {
    const s = createSchema({ t: { _type: 'time' }, d: { _type: 'timedelta' } });
    expect(error(() => foldDocument(s, { t: '25:00' }))).toMatch(/^400 invalid_value: Invalid 'time' value for field 't'/);
    expect(error(() => foldDocument(s, { t: 86400 }))).toMatch(/^400 invalid_value/);
    expect(error(() => foldDocument(s, { t: true }))).toBe("400 type_mismatch: Type mismatch 'time' -> 'boolean'");
    expect(error(() => foldDocument(s, { d: 'soon' }))).toMatch(/^400 invalid_value: Invalid 'timedelta' value/);
  });

  test('type char T, default accuracy minute and hour, named as seconds steps, buckets as N terms', () => {
    const schema = createSchema({ t: { _type: 'time' } });
    const spec = fieldSpec(schema, 't')!;
    expect(spec.typeChar).toBe('T');
    expect(spec.accuracy).toEqual([60, 3600]);
    expect(fieldTerm(spec, 0)).toBe('t.T80');
    expect(accuracyTerms(spec, 3725)).toEqual(['t.<3c>.Nc0ad10', 't.<e10>.Nc0ac20']);
    const described = describeSchema(schema).t as Record<string, unknown>;
    expect(described._accuracy).toEqual(['minute', 'hour']);
    expect(described._accuracy_prefix).toEqual(['<3c>.', '<e10>.']);
  });

  test('_accuracy takes second/minute/hour only; unchanged accuracy re-merges', () => {
    expect(fieldSpec(createSchema({ t: { _type: 'timedelta', _accuracy: ['second', 'hour'] } }), 't')!.accuracy).toEqual([1, 3600]);
    expect(error(() => createSchema({ t: { _type: 'time', _accuracy: ['day'] } }))).toMatch(/^400 invalid_field_option/);
    expect(error(() => createSchema({ t: { _type: 'time', _accuracy: [60] } }))).toMatch(/^400 invalid_field_option/);
    const s = createSchema({ t: { _type: 'time' } });
    expect(foldDocument(s, { t: { _accuracy: ['minute', 'hour'], _value: '10:00' } }).changed).toBe(false);
  });
});

describe('uuid fields', () => {
  test('canonical lower case stored and indexed; condensed kept verbatim; type char U', () => {
    const r = foldDocument({}, { u: UUID.toUpperCase(), c: { _type: 'uuid', _value: '~Notmet' } });
    expect(r.schema).toEqual({ u: { _type: 'uuid' }, c: { _type: 'uuid' } });
    expect(r.document.stored).toEqual({ u: UUID, c: '~Notmet' });
    expect(values(r)).toEqual([['u', UUID], ['c', '~Notmet']]);
    expect(fieldTerm(fieldSpec(r.schema, 'u')!, UUID)).toBe(`u.U${UUID}`);
  });

  test('not a UUID → 400', () => {
    const s = createSchema({ u: { _type: 'uuid' } });
    expect(error(() => foldDocument(s, { u: 'nope' }))).toMatch(/^400 invalid_value: Invalid 'uuid' value for field 'u'/);
    expect(error(() => foldDocument(s, { u: 5 }))).toBe("400 type_mismatch: Type mismatch 'uuid' -> 'integer'");
  });
});

describe('script fields', () => {
  test('a script object is stored without its options and indexed as the text of its body', () => {
    const r = foldDocument({}, { code: { _type: 'script', _lua: 'return _doc.x + 1' } });
    expect(r.schema).toEqual({ code: { _type: 'script' } });
    expect(r.document.stored).toEqual({ code: { _lua: 'return _doc.x + 1' } });
    expect(values(r)).toEqual([['code', 'return _doc.x + 1']]);
    const spec = fieldSpec(r.schema, 'code')!;
    expect([spec.type, spec.typeChar]).toEqual(['text', 'S']);
    // Later values need no `_type`: the field's type says it is a script.
    const again = foldDocument(r.schema, { code: { _lua: { _body: 'return 2', _params: { a: 1 } } } });
    expect(again.changed).toBe(false);
    expect(values(again)).toEqual([['code', 'return 2']]);
  });

  test('a geo value is never parsed as a script', () => {
    const r = foldDocument({}, { loc: { _point: { _latitude: 1, _longitude: 2 } } });
    expect(r.schema).toEqual({ loc: { _type: 'geo' } });
    expect(values(r)).toEqual([['loc', 'POINT(2 1)']]);
  });

  test('a script field refuses a number', () => {
    expect(error(() => foldDocument(createSchema({ s: { _type: 'script' } }), { s: 3 }))).toBe("400 type_mismatch: Type mismatch 'script' -> 'integer'");
  });
});

describe('array/<type> for every type', () => {
  test.each([
    ['text', ['a b', 'c']], ['keyword', ['A', 'b']], ['integer', [1, 2]], ['positive', [1, 2]], ['floating', [1.5, 2]],
    ['boolean', [true, 'f']], ['date', ['2015-01-01', '2016-01-01']], ['datetime', ['2015-01-01T10:00:00', 0]],
    ['time', ['10:00', 3600]], ['timedelta', ['-01:00', 60]], ['uuid', [UUID, '~abc']],
  ])('array/%s takes arrays (nested ones flattened) and single values', (type, list) => {
    const schema = createSchema({ f: { _type: `array/${type}` } });
    expect(describeSchema(schema).f).toMatchObject({ _type: `array/${type}` });
    const r = foldDocument(schema, { f: [list[0], [list[1]]] });
    expect(r.changed).toBe(false);
    expect(r.document.values).toHaveLength(2);
    expect(foldDocument(schema, { f: list[0] }).document.values).toHaveLength(1);
  });
});
