'use strict';

const tempo = require('../lib');

describe('parse', () => {
  test('reads a single unit', () => {
    expect(tempo.parse('90s')).toBe(90000);
    expect(tempo.parse('2h')).toBe(7200000);
    expect(tempo.parse('250ms')).toBe(250);
  });
  test('reads several units in a row', () => {
    expect(tempo.parse('1h30m')).toBe(5400000);
    expect(tempo.parse('1d 2h')).toBe(93600000);
  });
  test('reads fractional amounts', () => {
    expect(tempo.parse('1.5h')).toBe(5400000);
    expect(tempo.parse('.5s')).toBe(500);
  });
  test('reads a leading minus as a negative duration', () => {
    expect(tempo.parse('-2m')).toBe(-120000);
    expect(tempo.parse('- 1h30m')).toBe(-5400000);
  });
  test('reads a bare number as milliseconds', () => {
    expect(tempo.parse('1500')).toBe(1500);
    expect(tempo.parse(42)).toBe(42);
  });
  test('gives NaN for text it cannot read', () => {
    expect(tempo.parse('soon')).toBeNaN();
    expect(tempo.parse('')).toBeNaN();
    expect(tempo.parse(null)).toBeNaN();
  });
});
