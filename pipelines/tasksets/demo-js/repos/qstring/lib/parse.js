'use strict';

const { decode } = require('./encode');

const DEFAULTS = { arrayLimit: 20, depth: 5, parseNumbers: false, parseBooleans: false };

// 'a[b][c]' -> ['a', 'b', 'c']; 'a[]' -> ['a', '']; segments past `depth` stay in the last key.
function splitKey(key, depth) {
  const first = key.indexOf('[');
  if (first <= 0) return [key];
  const parts = [key.slice(0, first)];
  const re = /\[([^\]]*)\]/g;
  re.lastIndex = first;
  let m;
  let end = first;
  while ((m = re.exec(key)) !== null && parts.length <= depth) {
    if (m.index !== end) break;
    parts.push(m[1]);
    end = re.lastIndex;
  }
  if (end < key.length) parts.push(key.slice(end));
  return parts;
}

function convert(value, options) {
  if (options.parseNumbers && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  if (options.parseBooleans && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function assign(target, path, value, options) {
  let node = target;
  for (let i = 0; i < path.length; i++) {
    const key = path[i];
    const last = i === path.length - 1;
    if (key === '') {
      // 'a[]=x': append to the list at this point of the path
      if (!Array.isArray(node.__list)) node.__list = [];
      if (last) node.__list.push(value);
      return;
    }
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return;
    if (last) {
      if (Object.prototype.hasOwnProperty.call(node, key)) {
        const old = node[key];
        node[key] = Array.isArray(old) ? old.concat([value]) : [old, value];
      } else {
        node[key] = value;
      }
      return;
    }
    if (path[i + 1] === '') {
      if (!Array.isArray(node[key])) node[key] = node[key] === undefined ? [] : [node[key]];
      if (node[key].length < options.arrayLimit) node[key].push(value);
      return;
    }
    if (typeof node[key] !== 'object' || node[key] === null || Array.isArray(node[key])) node[key] = {};
    node = node[key];
  }
}

function parse(query, opts) {
  const options = Object.assign({}, DEFAULTS, opts);
  const out = {};
  if (typeof query !== 'string') return out;
  const text = query.trim().replace(/^[?#&]/, '');
  if (text === '') return out;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? null : pair.slice(eq + 1);
    const key = decode(rawKey);
    if (key === '') continue;
    const value = rawValue === null ? null : convert(decode(rawValue), options);
    assign(out, splitKey(key, options.depth), value, options);
  }
  return out;
}

module.exports = { parse, splitKey };
