import {
  formatTime, formatTimedelta, isTimedeltaString, isTimeString, parseTimedeltaString, parseTimeString, TIMEDELTA_SECONDS_MAX,
} from './times.js';

describe('time', () => {
  test('HH:MM[:SS[.f]] is seconds after midnight', () => {
    expect(parseTimeString('00:00')).toBe(0);
    expect(parseTimeString('10:30')).toBe(37800);
    expect(parseTimeString('23:59:59')).toBe(86399);
    expect(parseTimeString('12:00:00.25')).toBe(43200.25);
  });

  test('an offset is subtracted and wrapped into the day', () => {
    expect(parseTimeString('10:00+02:00')).toBe(8 * 3600);
    expect(parseTimeString('01:00+02:00')).toBe(23 * 3600);
    expect(parseTimeString('23:00-02:00')).toBe(3600);
    expect(parseTimeString('10:00Z')).toBe(36000);
  });

  test('out-of-range parts and other text are not times', () => {
    for (const s of ['24:00', '10:60', '10:00:60', '1:00', '10', '10:00:00.', 'noon', '+10:00', '10:00+25:00', '']) {
      expect(parseTimeString(s)).toBeUndefined();
      expect(isTimeString(s)).toBe(false);
    }
  });

  test('stored form: HH:MM:SS with the fraction trimmed', () => {
    expect(formatTime(0)).toBe('00:00:00');
    expect(formatTime(37800)).toBe('10:30:00');
    expect(formatTime(43200.25)).toBe('12:00:00.25');
    expect(formatTime(parseTimeString('23:59:59.123456')!)).toBe('23:59:59.123456');
  });
});

describe('timedelta', () => {
  test('[±]HH:MM[:SS[.f]] is signed seconds, hours unbounded', () => {
    expect(parseTimedeltaString('+01:30')).toBe(5400);
    expect(parseTimedeltaString('-00:00:01.5')).toBe(-1.5);
    expect(parseTimedeltaString('36:00')).toBe(129600);
    expect(parseTimedeltaString('10:00')).toBe(36000);
  });

  test('bad minutes or seconds and other text are not timedeltas', () => {
    for (const s of ['+01:60', '01:00:61', '++01:00', '01', 'x1:00', '', '2000001:00']) expect(isTimedeltaString(s)).toBe(false);
    expect(parseTimedeltaString('-2000000:00:00')).toBe(-TIMEDELTA_SECONDS_MAX);
  });

  test('stored form keeps the sign', () => {
    expect(formatTimedelta(5400)).toBe('+01:30:00');
    expect(formatTimedelta(-1.5)).toBe('-00:00:01.5');
    expect(formatTimedelta(129600)).toBe('+36:00:00');
    expect(formatTimedelta(0)).toBe('+00:00:00');
  });
});
