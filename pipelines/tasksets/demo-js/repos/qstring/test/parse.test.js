'use strict';

const assert = require('node:assert');
const qs = require('../lib');

describe('parse', () => {
  it('reads simple pairs', () => {
    assert.deepStrictEqual(qs.parse('a=1&b=two'), { a: '1', b: 'two' });
  });
  it('ignores a leading ? # or &', () => {
    assert.deepStrictEqual(qs.parse('?a=1'), { a: '1' });
    assert.deepStrictEqual(qs.parse('#a=1'), { a: '1' });
    assert.deepStrictEqual(qs.parse('&a=1'), { a: '1' });
  });
  it('returns an empty object for empty or non-string input', () => {
    assert.deepStrictEqual(qs.parse(''), {});
    assert.deepStrictEqual(qs.parse('?'), {});
    assert.deepStrictEqual(qs.parse(undefined), {});
  });
  it('decodes plus as space and percent escapes', () => {
    assert.deepStrictEqual(qs.parse('q=hello+world&x=%C3%A9t%C3%A9'), { q: 'hello world', x: 'été' });
  });
  it('keeps malformed escapes as they are', () => {
    assert.deepStrictEqual(qs.parse('a=100%&b=%zz%41'), { a: '100%', b: '%zzA' });
  });
  it('keeps an equals sign inside the value', () => {
    assert.deepStrictEqual(qs.parse('token=abc==&eq=a=b'), { token: 'abc==', eq: 'a=b' });
  });
  it('gives null for a key without a value and empty string for an empty value', () => {
    assert.deepStrictEqual(qs.parse('flag&empty='), { flag: null, empty: '' });
  });
  it('skips empty pairs and empty keys', () => {
    assert.deepStrictEqual(qs.parse('a=1&&=x&b=2&'), { a: '1', b: '2' });
  });
  it('collects repeated keys into an array', () => {
    assert.deepStrictEqual(qs.parse('tag=x&tag=y&tag=z'), { tag: ['x', 'y', 'z'] });
  });
  it('reads bracket lists', () => {
    assert.deepStrictEqual(qs.parse('a[]=1&a[]=2'), { a: ['1', '2'] });
  });
  it('caps bracket lists at arrayLimit', () => {
    assert.deepStrictEqual(qs.parse('a[]=1&a[]=2&a[]=3', { arrayLimit: 2 }), { a: ['1', '2'] });
  });
  it('reads nested keys', () => {
    assert.deepStrictEqual(qs.parse('user[name]=ann&user[langs][]=go&user[langs][]=js'),
      { user: { name: 'ann', langs: ['go', 'js'] } });
  });
  it('keeps segments past depth in the last key', () => {
    assert.deepStrictEqual(qs.parse('a[b][c][d]=1', { depth: 2 }), { a: { b: { c: { '[d]': '1' } } } });
  });
  it('refuses prototype keys', () => {
    const out = qs.parse('__proto__[admin]=1&constructor[x]=2&ok=1');
    assert.deepStrictEqual(out, { ok: '1' });
    assert.strictEqual({}.admin, undefined);
  });
  it('converts numbers and booleans on request', () => {
    assert.deepStrictEqual(qs.parse('n=42&f=1.5&b=true&s=abc&e=', { parseNumbers: true, parseBooleans: true }),
      { n: 42, f: 1.5, b: true, s: 'abc', e: '' });
  });
  it('leaves numbers as strings by default', () => {
    assert.deepStrictEqual(qs.parse('n=007'), { n: '007' });
  });
});

describe('parseUrl', () => {
  it('splits url, query and fragment', () => {
    assert.deepStrictEqual(qs.parseUrl('https://x.org/p?a=1&b=2#top'),
      { url: 'https://x.org/p', query: { a: '1', b: '2' }, fragment: 'top' });
  });
  it('does not read the fragment as query', () => {
    assert.deepStrictEqual(qs.parseUrl('/p#a=1').query, {});
    assert.deepStrictEqual(qs.parseUrl('/p?x=1#y=2').query, { x: '1' });
  });
});
