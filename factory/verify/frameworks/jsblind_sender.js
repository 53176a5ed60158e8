// factory's blind-check sender (`jsblind.py`), preloaded by root's run into every node process of the
// tests (NODE_OPTIONS=--require), before any code of the project; under jest, which runs each test file
// in a vm context of its own, also required by the rewritten test file as its first statement. A blind check of a hidden test calls
// `__factory_seen__(id, actual)` where the test had `assert.strictEqual(actual, 5)`: the expected value
// is on the host, never here; this writes what the test computed, as plain data, to the file root reads
// after the run, and lets the test go on.
//
// What it uses is taken now, before the project's code runs, so nothing that code patches later
// (JSON.stringify, fs.writeSync, Reflect, Number.prototype.toString) changes what is written. It calls
// no code of the project but what the assertion it replaced called too: a loose check (`==`) of an
// object calls the object's own conversion, as `==` does; a deep check calls the getters of enumerable
// properties and a Proxy's traps, as node's deepStrictEqual does. A forger may call this function too,
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
  const get = Reflect.get;
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
  // data, read as node reads them (a built-in with internal slots is named, not read: the host counts
  // it unequal). JSON written by hand: our own arrays would reach a patched Array.prototype.toJSON
  // through JSON.stringify.
  //
  // Node reads an enumerable accessor by calling its getter, and a Proxy through its traps (its
  // prototype, its Symbol.toStringTag, its keys and their descriptors, then each enumerable value by
  // [[Get]]), so a correct result built that way passes under node: this reads them the same way, in
  // that order, and never calls a non-enumerable getter, which node never reads. A getter that throws
  // throws out of this call into the test, as it would out of the assertion, and nothing is sent: the
  // check is missing and the test fails. Running the project's code here opens no forgery: the
  // assertion is gone (the check is this call), so the value judged is the one read here, once, as
  // node reads each value once; a getter that answers differently on each call, or that sees it is
  // read by this sender (its stack says so), can only choose what is judged, and the value that
  // passes is on the host, where no code of the project reads it.
  function tree(value, depth, budget) {
    if (!isObject(value) || typeof value === 'function') return apply(stringify, undefined, [encode(value)]);
    for (let i = 0; i < exotic.length; i++) if (exotic[i](value)) return '{"x":"built-in"}'; // never true of a Proxy
    if (depth >= DEPTH || --budget.left < 0) return '{"x":"too deep or large"}';
    const proto = prototypeOf(value);
    const array = isArray(value);
    const kind = proto === objectPrototype && !array ? 'Object' : proto === arrayPrototype && array ? 'Array'
      : proto === null ? 'null' : 'other';
    // node compares prototypes first: of a value whose prototype is not a literal's it reads nothing more
    if (kind === 'null' || kind === 'other') return '{"p":"' + kind + '","s":0,"k":[]}';
    // node compares Object.prototype.toString's tags: a Proxy's comes from its get trap (an object's own
    // Symbol.toStringTag is counted below). Any tag at all is counted unequal, where node would take
    // one that reads `Object` or `Array`: refusing is the safe side.
    let symbols = isProxy(value) && typeof get(value, toStringTag) === 'string' ? 1 : 0;
    const keys = ownKeys(value);
    const named = { __proto__: null }; // no prototype: a setter the project put on Array.prototype is not met
    let count = 0;
    for (let i = 0; i < keys.length; i++) {
      const own = describe(value, keys[i]);
      if (own === undefined) continue; // a Proxy listed a key it does not have: Object.keys skips it too
      if (typeof keys[i] === 'symbol') {
        if (own.enumerable || keys[i] === toStringTag) symbols = 1;
      } else {
        named[count++] = own;
        named[count++] = keys[i];
      }
    }
    // every key and whether it is enumerable is known before any getter runs, as node takes them
    let entries = '';
    for (let i = 0; i < count; i += 2) {
      const own = named[i];
      const key = named[i + 1];
      const read = own.enumerable ? tree(get(value, key), depth + 1, budget)
        : hasOwnData(own) ? tree(own.value, depth + 1, budget) : 'null'; // node reads no non-enumerable but an array's length
      entries += (entries ? ',' : '') + '[' + apply(stringify, undefined, [key]) + ',' + (own.enumerable ? 1 : 0) + ',' + read + ']';
      if (budget.left < 0) return '{"x":"too deep or large"}';
    }
    return '{"p":"' + kind + '","s":' + symbols + ',"k":[' + entries + ']}';
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
