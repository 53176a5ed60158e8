'use strict';

const { parse } = require('./parse');
const { format } = require('./format');

module.exports = {
  parse,
  format,
  // '90m' -> '1h 30m'
  normalize: (text, options) => format(parse(text), options),
};
