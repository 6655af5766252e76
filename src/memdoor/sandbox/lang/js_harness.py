"""The JavaScript check harness: ``node /tmp/harness.js`` in the candidate's sandbox, in place of HumanEval-X's
``node main.js`` on ``program + test`` (issue 41, class 6: a test that never ran must not pass).

Node runs the harness (trusted, strict mode) first. It reads the run's secret from ``/tmp/secret`` and deletes
the file (the secret stays in memory only masked with random bytes until the end line is written: a program
that could read its own memory would not find it as text), reads then deletes ``main.js`` and ``test.js``,
takes its own references to what it needs (``fs.writeSync``, ``process.reallyExit``, ``vm``), removes from
``process`` what would give the program a module loader, the inspector, a file or a libuv handle
(``binding``, ``mainModule``, ``getBuiltinModule``, ``loadEnvFile``, ``report``, ``_getActiveHandles``, ...),
replaces ``process.stdin``/``stdout``/``stderr``/``openStdin`` (Node's are an ``fs.ReadStream`` holding the
``fs`` module on /dev/null, a ``net.Socket`` on a pipe) with streams of its own that write to fd 1 and 2 at
once (so ``console.log`` output still fails the test) and read nothing, then runs the program as a script of
the main realm, with a ``require`` limited to pure modules and the CommonJS names (``module``, ``exports``,
``__filename``, ``__dirname``). The test code
runs in a second realm (``vm.createContext``) that no program code ever touches, compiled in strict mode: its
own ``console``, ``JSON``, ``Math``, ``Object``, prototypes... Each name of the program the test uses (the
function, the prompt's helpers) reaches it as a wrapper: arguments are copied into the main realm, the result
(and a thrown value) back into the test's realm as plain data, functions wrapped again. So a program that
replaces ``console.assert``, ``process.stderr.write``, ``JSON.stringify`` or a prototype changes only its own
realm. Strict mode everywhere on the test's side means a program's ``Error.prepareStackTrace`` or
``f.caller`` finds no function or receiver of the test's realm. The harness's own code that runs once program
code has (decoding the arguments, the program's ``require``, the test's ``console``, the end line) uses only
built-ins it took before: a program that replaces ``Array.prototype.map``, ``Map``, ``Object.defineProperty``
or String methods, or adds ``lineOffset`` or ``errno`` to ``Object.prototype`` (``vm.runInContext`` and
``fs.writeSync`` read them from a fresh ``{}``), breaks only its own realm; the test and the names it reads
are compiled before any program code runs, and an error a write reports is dropped.

Only when the test code has returned without a failed assertion does the harness write the secret on stdout
(``<secret> ok``) and end the process itself; a failed ``console.assert`` writes "Assertion failed" on stderr,
as Node does, and the end line says how many failed. A program that ends the process (``process.exit(0)``),
swallows the test's exception (an ``uncaughtException`` handler) or stops it in any other way never lets the
secret be written: :func:`memdoor.sandbox.lang.javascript.run_check` fails it.
"""

from __future__ import annotations

HARNESS_FILE = "harness.js"
SECRET_FILE = "secret"
PROGRAM_FILE = "main.js"
TEST_FILE = "test.js"

SOURCE = r"""'use strict';
const fs = require('fs');
const vm = require('vm');
const util = require('util');
const { Readable, Writable } = require('stream');
const randomBytes = require('crypto').randomBytes;
// Every built-in the harness's own code uses once program code has run, taken now, before any has: a program
// that replaces Array.prototype.map, Map, Object.defineProperty, String... changes nothing of the harness.
const writeSync = fs.writeSync;
const reallyExit = process.reallyExit;
const apply = Reflect.apply;
const defineProperty = Reflect.defineProperty;
const parseJSON = JSON.parse;
const includes = Array.prototype.includes;
const fromCharCode = String.fromCharCode;
const startsWith = String.prototype.startsWith, stringSlice = String.prototype.slice;
const SafeMap = Map, mapSet = Map.prototype.set, SafeSet = Set, setAdd = Set.prototype.add, SafeDate = Date;
const SafeNumber = Number, SafeBigInt = BigInt, SafeString = String, SafeError = Error, SafeProxy = Proxy;
const typedArrayLength = Reflect.getOwnPropertyDescriptor(Reflect.getPrototypeOf(Uint8Array.prototype), 'length').get;
const Script = vm.Script;
const runHere = Script.prototype.runInThisContext, runIn = Script.prototype.runInContext;
const format = util.format;
// The harness's own lines (the end line, "Assertion failed", what the test logs, an error). fs.writeSync of a
// string hands it to the binding as it is (fs.writeFileSync, on a Node without its C++ fast path, gives it to
// Buffer.from, which a program can replace: it would see the secret), then reads errno and error of a fresh {}: a
// getter a program put on Object.prototype runs there, after the text is written; what it throws is dropped
// (a line that could not be written is missing, and a run without its end line fails).
function emit(fd, text) {
  try {
    writeSync(fd, text);
  } catch (_) { /* see above */ }
}
// The secret, kept masked: while program code runs, no copy of it is in the process's memory as text.
const secretFile = fs.readFileSync('/tmp/secret');
fs.unlinkSync('/tmp/secret');
let secretFrom = 0, secretTo = secretFile.length;
while (secretFrom < secretTo && secretFile[secretFrom] <= 32) secretFrom += 1;
while (secretTo > secretFrom && secretFile[secretTo - 1] <= 32) secretTo -= 1;
const secretLength = secretTo - secretFrom;
const secretMask = new Uint8Array(randomBytes(secretLength));
const maskedSecret = new Uint8Array(secretLength);
for (let i = 0; i < secretLength; i++) maskedSecret[i] = secretFile[secretFrom + i] ^ secretMask[i];
secretFile.fill(0);
// Only operators, typed-array elements and a function taken above: nothing the program can have replaced.
function secretText() {
  let text = '';
  for (let i = 0; i < secretLength; i++) text += fromCharCode(maskedSecret[i] ^ secretMask[i]);
  return text;
}
const program = fs.readFileSync('/tmp/main.js', 'utf8');
const test = fs.readFileSync('/tmp/test.js', 'utf8');
fs.unlinkSync('/tmp/main.js');
fs.unlinkSync('/tmp/test.js');

function finish(code, text) {
  if (text) emit(2, text + '\n');
  reallyExit(code);
}

function describe(e) {
  try {
    if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
      const name = e.name, message = e.message;
      return (typeof name === 'string' ? name : 'Error') + ': ' + (typeof message === 'string' ? message : '');
    }
    return 'Uncaught ' + SafeString(e);
  } catch (_) {
    return 'Error: an exception that cannot be described';
  }
}

// The official harness parses program + test as one CommonJS module: a syntax error there fails here too.
try {
  vm.compileFunction(program + '\n' + test, ['exports', 'require', 'module', '__filename', '__dirname']);
} catch (e) {
  finish(1, describe(e));
}

// The test's realm: no program code ever runs in it or gets a value of it.
let failures = 0;
const sandbox = Object.create(null);
const testConsole = Object.create(null);
testConsole.assert = (ok, ...rest) => {
  if (!ok) {
    failures += 1;
    emit(2, 'Assertion failed' + (rest.length ? ': ' + apply(format, undefined, rest) : '') + '\n');
  }
};
testConsole.log = testConsole.info = testConsole.debug = (...a) => { emit(1, apply(format, undefined, a) + '\n'); };
testConsole.error = testConsole.warn = (...a) => { emit(2, apply(format, undefined, a) + '\n'); };
sandbox.console = testConsole;
const context = vm.createContext(sandbox);
const makeBridge = vm.runInContext(`(function (callOut) {
  'use strict';
  const isArray = Array.isArray, keys = Object.keys, define = Object.defineProperty, is = Object.is;
  const stringify = JSON.stringify;
  const call = Function.prototype.call.bind(Function.prototype.call);
  const mapHas = Map.prototype.has, setHas = Set.prototype.has, mapForEach = Map.prototype.forEach;
  const setForEach = Set.prototype.forEach, getTime = Date.prototype.getTime;
  function kind(v) {
    try { call(mapHas, v, 0); return 'map'; } catch (_) { /* not a Map */ }
    try { call(setHas, v, 0); return 'set'; } catch (_) { /* not a Set */ }
    try { call(getTime, v); return 'date'; } catch (_) { /* not a Date */ }
    return 'object';
  }
  const slot = (value) => ({ value, writable: true, enumerable: true, configurable: true });
  // A value of the program's realm, read once into plain data of this realm (functions: wrappers).
  function importValue(v, seen) {
    if (typeof v === 'function') return function (...args) { return callOut(v, stringify(encode(args))); };
    if (v === null || typeof v !== 'object') return v;
    if (seen.has(v)) return seen.get(v);
    if (isArray(v)) {
      const out = [];
      seen.set(v, out);
      const n = v.length;
      for (let i = 0; i < n; i++) define(out, i, slot(importValue(v[i], seen)));
      return out;
    }
    const k = kind(v);
    if (k === 'date') return new Date(call(getTime, v));
    if (k === 'map') {
      const out = new Map();
      seen.set(v, out);
      call(mapForEach, v, (x, key) => out.set(importValue(key, seen), importValue(x, seen)));
      return out;
    }
    if (k === 'set') {
      const out = new Set();
      seen.set(v, out);
      call(setForEach, v, (x) => out.add(importValue(x, seen)));
      return out;
    }
    const out = {};
    seen.set(v, out);
    for (const key of keys(v)) define(out, key, slot(importValue(v[key], seen)));
    return out;
  }
  // The test's arguments, as text the program's realm decodes: no object of this realm leaves it.
  function encode(v) {
    switch (typeof v) {
      case 'undefined': return ['u'];
      case 'boolean': return ['b', v];
      case 'string': return ['s', v];
      case 'number': return ['n', is(v, -0) ? '-0' : String(v)];
      case 'bigint': return ['i', String(v)];
      case 'object':
        if (v === null) return ['z'];
        if (isArray(v)) return ['a', v.map(encode)];
        if (v instanceof Map) return ['m', [...v].map(([k, x]) => [encode(k), encode(x)])];
        if (v instanceof Set) return ['S', [...v].map(encode)];
        if (v instanceof Date) return ['d', v.getTime()];
        return ['o', keys(v).map((k) => [k, encode(v[k])])];
      default:
        throw new TypeError('a test argument of type ' + typeof v + ' cannot be passed to the program');
    }
  }
  // A value the program threw: an error of this realm with its name and message (strings only), else a copy.
  function thrown(v) {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return v;
    let name, message;  // a getter that throws: what it throws stays in the program's realm
    try { name = v.name; } catch (_) { /* no name */ }
    try { message = v.message; } catch (_) { /* no message */ }
    const e = new Error(typeof message === 'string' ? message : '');
    if (typeof name === 'string') define(e, 'name', { value: name, writable: true, configurable: true });
    return e;
  }
  return {
    value: (v) => importValue(v, new Map()),
    error: thrown,
  };
})`, context, { filename: 'memdoor-bridge.js' });

// The test's arguments, built in the program's realm as the test's literals would be: with the built-ins taken
// at the start, index loops (no iterator, no Array.prototype method) and descriptors with no prototype (an
// Object.prototype.get of the program's is not read as one); an element is defined, not assigned (no setter).
function field(value) {
  return { __proto__: null, value, writable: true, enumerable: true, configurable: true };
}
function decode(t) {
  const items = t[1];
  switch (t[0]) {
    case 'u': return undefined;
    case 'z': return null;
    case 'b': case 's': return items;
    case 'n': return items === '-0' ? -0 : SafeNumber(items);
    case 'i': return SafeBigInt(items);
    case 'd': return new SafeDate(items);
    case 'a': {
      const out = [];
      for (let i = 0; i < items.length; i++) defineProperty(out, i, field(decode(items[i])));
      return out;
    }
    case 'm': {
      const out = new SafeMap();
      for (let i = 0; i < items.length; i++) apply(mapSet, out, [decode(items[i][0]), decode(items[i][1])]);
      return out;
    }
    case 'S': {
      const out = new SafeSet();
      for (let i = 0; i < items.length; i++) apply(setAdd, out, [decode(items[i])]);
      return out;
    }
    default: {
      const out = {};
      for (let i = 0; i < items.length; i++) defineProperty(out, items[i][0], field(decode(items[i][1])));
      return out;
    }
  }
}

let bridge = null;
// A call from the test to a function of the program: only text in, only plain data of the test's realm out.
function callOut(fn, encodedArgs) {
  let result;
  try {
    result = bridge.value(apply(fn, undefined, decode(parseJSON(encodedArgs))));
  } catch (e) {  // what the program threw, or a getter of its result (the test only ever sees a copy)
    throw bridge.error(e);
  }
  return result;
}
bridge = makeBridge(callOut);

// Names the test uses that are neither its own nor its realm's: the program's (its function, the prompt's helpers).
const KEYWORDS = new Set(['break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default',
  'delete', 'do', 'else', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in',
  'instanceof', 'let', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof',
  'var', 'void', 'while', 'with', 'yield', 'await', 'async', 'of', 'static', 'get', 'set', 'undefined',
  'eval', 'arguments', 'enum', 'implements', 'interface', 'package', 'private', 'protected', 'public']);
const nodeGlobals = new Set(Object.getOwnPropertyNames(globalThis));
const declared = new Set();
for (const m of test.matchAll(/\b(?:const|let|var|function|class)\s+([A-Za-z_$][\w$]*)/g)) declared.add(m[1]);
// Compiled now, before any program code runs (so is the test): after it, only Script.prototype's own methods
// run them, with no options object (vm.runInContext would copy one into a plain {} and read cachedData,
// lineOffset, importModuleDynamically... from the program's Object.prototype).
const wanted = [];
for (const name of new Set(test.match(/[A-Za-z_$][\w$]*/g) || [])) {
  if (KEYWORDS.has(name) || declared.has(name) || nodeGlobals.has(name)) continue;
  if (vm.runInContext('typeof globalThis[' + JSON.stringify(name) + "] !== 'undefined'", context)) continue;
  try {
    wanted.push({ __proto__: null, text: name, typeOf: new Script('typeof ' + name), read: new Script(name) });
  } catch (_) { /* not a name a script can read */ }
}
let testScript = null;
try {
  testScript = new Script("'use strict';\n" + test, { __proto__: null, filename: '/tmp/test.js' });
} catch (e) {
  finish(1, describe(e));
}

// The program: a script of the main realm, with CommonJS's names and no module loader but pure modules.
const PURE = ['assert', 'buffer', 'crypto', 'events', 'path', 'querystring', 'string_decoder', 'url', 'util'];
const PURE_NAMES = PURE.join(', ');
const harnessRequire = require;
// Any other module is a stand-in whose functions fail when called: a program that only requires it (or names
// its functions) passes, as officially; one that uses it fails.
function unavailable(bare) {
  const refuse = () => {
    throw new SafeError("module '" + bare + "' is not available to a graded program (only " + PURE_NAMES + ')');
  };
  const stub = new SafeProxy(function unavailable() {}, {
    __proto__: null,  // no trap of the program's Object.prototype
    get: (target, key) => (key === 'then' || typeof key === 'symbol' ? undefined : stub),
    apply: refuse, construct: refuse, set: refuse, defineProperty: refuse, deleteProperty: refuse,
  });
  return stub;
}
function limitedRequire(name) {
  const text = SafeString(name);
  const bare = apply(startsWith, text, ['node:']) ? apply(stringSlice, text, [5]) : text;
  return apply(includes, PURE, [bare]) ? harnessRequire(bare) : unavailable(bare);
}
for (const key of ['binding', '_linkedBinding', 'dlopen', 'getBuiltinModule', 'mainModule', '_debugProcess',
  '_debugEnd', 'reallyExit', 'loadEnvFile', 'report', '_getActiveHandles', '_getActiveRequests', 'channel',
  'send', 'disconnect', 'execve']) {
  try { delete process[key]; } catch (_) { /* not there */ }
}
process.reallyExit = (code) => reallyExit(code);  // process.exit keeps working for the program
// Node builds process.stdin/stdout/stderr when first read, of the module their fd needs: stdin on a file
// (/dev/null) is an fs.ReadStream holding the fs module (and its constructor opens any path), a pipe a
// net.Socket with its handle. The program gets streams of its own instead, built on writeSync only: what
// it writes still reaches fd 1 or 2 at once (console.log included), so any output fails the test as before;
// stdin is empty, as /dev/null.
function writeAll(fd, chunk) {
  const length = apply(typedArrayLength, chunk, []);  // a Buffer: not a length of the program's prototypes
  for (let done = 0; done < length;) {
    try {
      done += writeSync(fd, chunk, done, length - done);
    } catch (e) {
      if (!e || e.code !== 'EAGAIN') throw e;
    }
  }
}
function outputStream(fd) {
  const stream = new Writable({
    write(chunk, encoding, callback) {
      try {
        writeAll(fd, chunk);
      } catch (e) {
        callback(e);
        return;
      }
      callback();
    },
  });
  stream.fd = fd;
  return stream;
}
const programStdin = new Readable({ read() { this.push(null); } });
programStdin.fd = 0;
const programStreams = {
  stdin: programStdin,
  stdout: outputStream(1),
  stderr: outputStream(2),
  openStdin() {
    programStdin.resume();
    return programStdin;
  },
};
for (const key of Object.keys(programStreams)) {
  Object.defineProperty(process, key, { value: programStreams[key], enumerable: true, writable: false, configurable: false });
}
const cjsModule = { exports: {}, id: '.', filename: '/tmp/main.js', loaded: false, children: [], paths: [] };
Object.assign(globalThis, {
  require: limitedRequire, module: cjsModule, exports: cjsModule.exports, __filename: '/tmp/main.js', __dirname: '/tmp',
});
try {
  vm.runInThisContext(program, { filename: '/tmp/main.js' });
} catch (e) {
  finish(1, describe(e));
}

for (let i = 0; i < wanted.length; i++) {
  const entry = wanted[i];
  try {
    if (apply(runHere, entry.typeOf, []) === 'undefined') continue;
    sandbox[entry.text] = bridge.value(apply(runHere, entry.read, []));
  } catch (e) {
    finish(1, describe(e));
  }
}
try {
  apply(runIn, testScript, [context]);
} catch (e) {
  finish(1, describe(e));
}
emit(1, '\n' + secretText() + (failures ? ' failed ' + failures : ' ok') + '\n');
finish(0, '');
"""
