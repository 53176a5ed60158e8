'use strict';

const { parse } = require('./parse');
const { stringify } = require('./stringify');
const { encode, decode } = require('./encode');

// Lists written as 'a[]=1&a[]=2' are kept under a hidden key while parsing; this turns them
// into plain arrays (and a key holding only a list into that list).
function finish(node) {
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map(finish);
  if (Array.isArray(node.__list) && Object.keys(node).length === 1) return node.__list.map(finish);
  const out = {};
  for (const key of Object.keys(node)) {
    if (key !== '__list') out[key] = finish(node[key]);
  }
  return out;
}

function parseUrl(url, opts) {
  const hash = url.indexOf('#');
  const withoutHash = hash === -1 ? url : url.slice(0, hash);
  const q = withoutHash.indexOf('?');
  return {
    url: q === -1 ? withoutHash : withoutHash.slice(0, q),
    query: q === -1 ? {} : finish(parse(withoutHash.slice(q + 1), opts)),
    fragment: hash === -1 ? '' : url.slice(hash + 1),
  };
}

module.exports = {
  parse: (query, opts) => finish(parse(query, opts)),
  stringify,
  parseUrl,
  encode,
  decode,
};
