'use strict';

const { BY_NAME } = require('./units');

const AMOUNT = String.raw`(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d|w)`;
const WHOLE = new RegExp(`^(?:${AMOUNT}\\s*)+$`);
const PART = new RegExp(AMOUNT, 'g');

// '1h30m', '1.5 h', '-2m', '90s' -> milliseconds; a bare number is milliseconds; NaN for anything else.
function parse(text) {
  if (typeof text === 'number') return text;
  if (typeof text !== 'string') return NaN;
  let rest = text.trim();
  let sign = 1;
  if (rest.startsWith('-')) {
    sign = -1;
    rest = rest.slice(1).trim();
  }
  if (/^\d+(\.\d+)?$/.test(rest)) return sign * Number(rest);
  if (!WHOLE.test(rest)) return NaN;
  let total = 0;
  for (const [, amount, unit] of rest.matchAll(PART)) {
    total += Number.parseFloat(amount) * BY_NAME.get(unit);
  }
  return sign * Math.round(total);
}

module.exports = { parse };
