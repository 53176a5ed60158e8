'use strict';

const { encode } = require('./encode');

const DEFAULTS = { arrayFormat: 'repeat', sort: false, skipNull: false, encode: true };

function pairsOf(prefix, value, options, out) {
  if (value === undefined) return;
  if (value === null) {
    if (!options.skipNull) out.push([prefix, null]);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      let key = prefix;
      if (options.arrayFormat === 'bracket') key = `${prefix}[]`;
      else if (options.arrayFormat === 'index') key = `${prefix}[${i}]`;
      pairsOf(key, item, options, out);
    });
    if (options.arrayFormat === 'comma' && value.length) {
      out.splice(out.length - value.length, value.length, [prefix, value.join(',')]);
    }
    return;
  }
  if (typeof value === 'object' && !(value instanceof Date)) {
    for (const key of Object.keys(value)) pairsOf(`${prefix}[${key}]`, value[key], options, out);
    return;
  }
  out.push([prefix, value instanceof Date ? value.toISOString() : value]);
}

function stringify(object, opts) {
  const options = Object.assign({}, DEFAULTS, opts);
  if (object === null || typeof object !== 'object') return '';
  let keys = Object.keys(object);
  if (options.sort) keys = keys.slice().sort(typeof options.sort === 'function' ? options.sort : undefined);
  const pairs = [];
  for (const key of keys) pairsOf(key, object[key], options, pairs);
  const enc = options.encode ? encode : String;
  return pairs
    .map(([key, value]) => {
      const k = options.encode ? enc(key).replace(/%5B/g, '[').replace(/%5D/g, ']') : key;
      return value === null ? k : `${k}=${enc(value)}`;
    })
    .join('&');
}

module.exports = { stringify };
