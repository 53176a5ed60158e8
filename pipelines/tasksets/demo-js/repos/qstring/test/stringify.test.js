'use strict';

const assert = require('node:assert');
const qs = require('../lib');

describe('stringify', () => {
  it('writes simple pairs in key order', () => {
    assert.strictEqual(qs.stringify({ b: 2, a: 'x' }), 'b=2&a=x');
  });
  it('sorts keys on request', () => {
    assert.strictEqual(qs.stringify({ b: 2, c: 3, a: 1 }, { sort: true }), 'a=1&b=2&c=3');
  });
  it('sorts with a compare function', () => {
    assert.strictEqual(qs.stringify({ b: 2, c: 3, a: 1 }, { sort: (x, y) => y.localeCompare(x) }), 'c=3&b=2&a=1');
  });
  it('encodes reserved characters', () => {
    assert.strictEqual(qs.stringify({ q: "a b&c=d!'()*" }), 'q=a%20b%26c%3Dd%21%27%28%29%2A');
  });
  it('encodes unicode', () => {
    assert.strictEqual(qs.stringify({ city: 'Zürich' }), 'city=Z%C3%BCrich');
  });
  it('writes null as a bare key and skips undefined', () => {
    assert.strictEqual(qs.stringify({ a: null, b: undefined, c: 1 }), 'a&c=1');
  });
  it('skips null with skipNull', () => {
    assert.strictEqual(qs.stringify({ a: null, c: 1 }, { skipNull: true }), 'c=1');
  });
  it('repeats keys for arrays by default', () => {
    assert.strictEqual(qs.stringify({ a: [1, 2] }), 'a=1&a=2');
  });
  it('writes bracket arrays', () => {
    assert.strictEqual(qs.stringify({ a: [1, 2] }, { arrayFormat: 'bracket' }), 'a[]=1&a[]=2');
  });
  it('writes index arrays', () => {
    assert.strictEqual(qs.stringify({ a: ['x', 'y'] }, { arrayFormat: 'index' }), 'a[0]=x&a[1]=y');
  });
  it('writes comma arrays', () => {
    assert.strictEqual(qs.stringify({ a: [1, 2, 3], b: 1 }, { arrayFormat: 'comma' }), 'a=1%2C2%2C3&b=1');
  });
  it('writes nested objects with brackets', () => {
    assert.strictEqual(qs.stringify({ user: { name: 'ann', age: 3 } }), 'user[name]=ann&user[age]=3');
  });
  it('writes dates as ISO strings', () => {
    assert.strictEqual(qs.stringify({ at: new Date(Date.UTC(2024, 0, 2)) }), 'at=2024-01-02T00%3A00%3A00.000Z');
  });
  it('returns an empty string for non-objects', () => {
    assert.strictEqual(qs.stringify(null), '');
    assert.strictEqual(qs.stringify('a=1'), '');
  });
});

describe('round trip', () => {
  it('parses what it writes with bracket arrays', () => {
    const value = { a: ['1', '2'], user: { name: 'a b', tags: ['x'] }, q: 'é&=' };
    assert.deepStrictEqual(qs.parse(qs.stringify(value, { arrayFormat: 'bracket' })), value);
  });
  it('parses what it writes with repeated keys', () => {
    const value = { tag: ['x', 'y'], n: '5' };
    assert.deepStrictEqual(qs.parse(qs.stringify(value)), value);
  });
});
