'use strict';

const tempo = require('../lib');

describe('format', () => {
  test('writes each unit that is not zero', () => {
    expect(tempo.format(5400000)).toBe('1h 30m');
    expect(tempo.format(90061001)).toBe('1d 1h 1m 1s 1ms');
  });
  test('leaves zero units out', () => {
    expect(tempo.format(3605000)).toBe('1h 5s');
    expect(tempo.format(604800000)).toBe('1w');
  });
  test('writes zero as 0ms', () => {
    expect(tempo.format(0)).toBe('0ms');
  });
  test('keeps the sign of a negative duration', () => {
    expect(tempo.format(-120000)).toBe('-2m');
  });
  test('keeps the largest units on request', () => {
    expect(tempo.format(90061001, { largest: 2 })).toBe('1d 1h');
    expect(tempo.format(5400000, { compact: true })).toBe('1h30m');
  });
  test('gives an empty string for what is not a finite number', () => {
    expect(tempo.format(Infinity)).toBe('');
    expect(tempo.format('5')).toEqual('');
  });
});

describe('normalize', () => {
  test('reads then writes a duration', () => {
    expect(tempo.normalize('90m')).toBe('1h 30m');
    expect(tempo.normalize('36h', { largest: 1 })).toBe('1d');
  });
});
