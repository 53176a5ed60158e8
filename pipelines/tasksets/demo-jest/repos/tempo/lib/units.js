'use strict';

// milliseconds per unit, largest first: format walks them in this order
const UNITS = [
  ['w', 7 * 24 * 60 * 60 * 1000],
  ['d', 24 * 60 * 60 * 1000],
  ['h', 60 * 60 * 1000],
  ['m', 60 * 1000],
  ['s', 1000],
  ['ms', 1],
];

const BY_NAME = new Map(UNITS);

module.exports = { UNITS, BY_NAME };
