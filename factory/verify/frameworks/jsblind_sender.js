// factory's blind-check sender (`jsblind.py`), preloaded by root's run into every node process of the
// tests (NODE_OPTIONS=--require), before any code of the project; under jest, which runs each test file
// in a vm context of its own, also required by the rewritten test file as its first statement. A blind check of a hidden test calls
// `__factory_seen__(id, actual)` where the test had `assert.strictEqual(actual, 5)`: the expected value
// is on the host, never here; this writes what the test computed, as plain data, to the file root reads
// after the run, and lets the test go on.
//
// What it uses is taken now, before the project's code runs, so nothing that code patches later
// (JSON.stringify, fs.writeSync, Reflect, Number.prototype.toString) changes what is written. It calls
// no code of the project, with one exception the assertion it replaced made too: a loose check (`==`)
// of an object calls the object's own conversion, as `==` does. A forger may call this function too,
// or write to the file: it can only add values, which fail the test they name (one value per check).
'use strict';

(function () {
  const NAME = '__factory_seen__';
  // jest: the real modules even where the hidden test mocks them (`jest.mock('fs')` is hoisted above this require)
  const load = typeof jest === 'object' && jest !== null ? jest.requireActual : require;
  const fs = load('fs');
  const openSync = fs.openSync;
  const writeSync = fs.writeSync;
  const stringify = JSON.stringify;
  const apply = Reflect.apply;
  const defineProperty = Reflect.defineProperty;
  const hasOwn = Object.prototype.hasOwnProperty;
  const toPrimitiveKey = Symbol.toPrimitive;
  const TypeErrorClass = TypeError;
  const path = process.env.FACTORY_BLIND_SEEN;
  let fd = -1;
  if (path) {
    try {
      fd = openSync(path, 'a', 0o600);
    } catch (e) {
      fd = -1; // nowhere to write: every blind check of the run is missing, and fails
    }
  }

  const types = load('util').types;
  const isProxy = types.isProxy;
  const exotic = [types.isArgumentsObject, types.isBoxedPrimitive, types.isDate, types.isRegExp, types.isMap,
    types.isSet, types.isNativeError, types.isArrayBufferView, types.isAnyArrayBuffer, types.isPromise,
    types.isWeakMap, types.isWeakSet, types.isModuleNamespaceObject];
  const isArray = Array.isArray;
  const ownKeys = Reflect.ownKeys;
  const describe = Reflect.getOwnPropertyDescriptor;
  const prototypeOf = Reflect.getPrototypeOf;
  const objectPrototype = Object.prototype;
  const arrayPrototype = Array.prototype;
  const toStringTag = Symbol.toStringTag;
  const DEPTH = 8;
  const NODES = 20000;
  const isObject = (value) => (typeof value === 'object' && value !== null) || typeof value === 'function';

  // A primitive as `kind TAB value`: numbers as the engine writes them, with NaN and -0 told
  // apart (`Object.is`); strings exactly (JSON, lone surrogates escaped); objects by kind only.
  function encode(value) {
    switch (typeof value) {
      case 'number':
        if (value !== value) return 'number\tNaN';
        return value === 0 && 1 / value < 0 ? 'number\t-0' : 'number\t' + value;
      case 'bigint':
        return 'bigint\t' + value;
      case 'string':
        return 'string\t' + apply(stringify, undefined, [value]);
      case 'boolean':
        return value ? 'boolean\ttrue' : 'boolean\tfalse';
      case 'undefined':
        return 'undefined\t';
      case 'symbol':
        return 'symbol\t';
      case 'function':
        return 'function\t';
      default:
        return value === null ? 'null\t' : 'object\t';
    }
  }

  // The language's ToPrimitive with no hint, which `obj == 5` runs: Symbol.toPrimitive, else
  // valueOf, else toString; a throw goes up to the test, as it would from `==`.
  function toPrimitive(input) {
    const exotic = input[toPrimitiveKey];
    if (exotic !== undefined && exotic !== null) {
      if (typeof exotic !== 'function') throw new TypeErrorClass('Cannot convert object to primitive value');
      const result = apply(exotic, input, ['default']);
      if (isObject(result)) throw new TypeErrorClass('Cannot convert object to primitive value');
      return result;
    }
    const names = ['valueOf', 'toString'];
    for (let i = 0; i < 2; i++) {
      const method = input[names[i]];
      if (typeof method === 'function') {
        const result = apply(method, input, []);
        if (!isObject(result)) return result;
      }
    }
    throw new TypeErrorClass('Cannot convert object to primitive value');
  }

  // For node's deepStrictEqual against an object or array literal: the value's own properties as
  // data, read without running its code (a Proxy, an accessor or a built-in with internal slots
  // is named, not read: the host counts it unequal). JSON written by hand: our own arrays would
  // reach a patched Array.prototype.toJSON through JSON.stringify.
  function tree(value, depth, budget) {
    if (!isObject(value) || typeof value === 'function') return apply(stringify, undefined, [encode(value)]);
    if (isProxy(value)) return '{"x":"proxy"}';
    for (let i = 0; i < exotic.length; i++) if (exotic[i](value)) return '{"x":"built-in"}';
    if (depth >= DEPTH || --budget.left < 0) return '{"x":"too deep or large"}';
    const proto = prototypeOf(value);
    const array = isArray(value);
    const kind = proto === objectPrototype && !array ? 'Object' : proto === arrayPrototype && array ? 'Array'
      : proto === null ? 'null' : 'other';
    const keys = ownKeys(value);
    let out = '{"p":"' + kind + '","s":';
    let symbols = 0;
    let entries = '';
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const own = describe(value, key);
      if (typeof key === 'symbol') {
        if (own.enumerable || key === toStringTag) symbols = 1;
        continue;
      }
      const data = hasOwnData(own);
      entries += (entries ? ',' : '') + '[' + apply(stringify, undefined, [key]) + ',' + (own.enumerable ? 1 : 0) + ',' +
        (data ? tree(own.value, depth + 1, budget) : 'null') + ']';
      if (budget.left < 0) return '{"x":"too deep or large"}';
    }
    return out + symbols + ',"k":[' + entries + ']}';
  }

  const hasOwnData = (descriptor) => apply(hasOwn, descriptor, ['value']);

  function seen(id, value, converts) {
    // 1: an object or a function is converted (`==`); 2: a function only (node's legacy deepEqual);
    // 3: the value's own properties (node's deepStrictEqual against an object or array literal)
    const convert = (converts === 1 && isObject(value)) || (converts === 2 && typeof value === 'function');
    const record = converts === 3 ? 'deep\t' + tree(value, 0, { left: NODES })
      : convert ? (typeof value === 'function' ? 'function>' : 'object>') + encode(toPrimitive(value)) : encode(value);
    const line = (typeof id === 'string' ? apply(stringify, undefined, [id]) : '?') + '\t' + record + '\n';
    if (fd >= 0) {
      try {
        writeSync(fd, line); // one write of the whole line: processes that share the file do not interleave
      } catch (e) {
        // the file was closed under us: this value is missing, and its test fails
      }
    }
  }

  if (!apply(hasOwn, globalThis, [NAME])) {
    defineProperty(globalThis, NAME, { value: seen, writable: false, configurable: false, enumerable: false });
  }
})();
