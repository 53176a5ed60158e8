'use strict';

const { UNITS } = require('./units');

// milliseconds -> '1h 30m'; zero units are left out, '0ms' for zero.
function format(ms, options = {}) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.round(Math.abs(ms));
  const parts = [];
  for (const [name, size] of UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0) parts.push(`${count}${name}`);
  }
  if (parts.length === 0) return '0ms';
  const shown = options.largest ? parts.slice(0, options.largest) : parts;
  return sign + shown.join(options.compact ? '' : ' ');
}

module.exports = { format };
