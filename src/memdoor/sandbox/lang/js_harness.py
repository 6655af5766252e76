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
``f.caller`` finds no function or receiver of the test's realm.

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
const writeSync = fs.writeSync;
const reallyExit = process.reallyExit;
const apply = Reflect.apply;
const parseJSON = JSON.parse;
const includes = Array.prototype.includes;
const fromCharCode = String.fromCharCode;
const format = util.format;
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
  if (text) writeSync(2, text + '\n');
  reallyExit(code);
}

function describe(e) {
  try {
    if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
      const name = typeof e.name === 'string' ? e.name : 'Error';
      const message = typeof e.message === 'string' ? e.message : '';
      return name + ': ' + message;
    }
    return 'Uncaught ' + String(e);
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
    writeSync(2, 'Assertion failed' + (rest.length ? ': ' + format(...rest) : '') + '\n');
  }
};
testConsole.log = testConsole.info = testConsole.debug = (...a) => { writeSync(1, format(...a) + '\n'); };
testConsole.error = testConsole.warn = (...a) => { writeSync(2, format(...a) + '\n'); };
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
    const name = v.name, message = v.message;
    const e = new Error(typeof message === 'string' ? message : '');
    if (typeof name === 'string') define(e, 'name', { value: name, writable: true, configurable: true });
    return e;
  }
  return {
    value: (v) => importValue(v, new Map()),
    error: thrown,
  };
})`, context, { filename: 'memdoor-bridge.js' });

function decode(t) {
  switch (t[0]) {
    case 'u': return undefined;
    case 'z': return null;
    case 'b': case 's': return t[1];
    case 'n': return t[1] === '-0' ? -0 : Number(t[1]);
    case 'i': return BigInt(t[1]);
    case 'a': return t[1].map(decode);
    case 'm': return new Map(t[1].map((p) => [decode(p[0]), decode(p[1])]));
    case 'S': return new Set(t[1].map(decode));
    case 'd': return new Date(t[1]);
    default: {
      const out = {};
      for (const p of t[1]) {
        Object.defineProperty(out, p[0], { value: decode(p[1]), writable: true, enumerable: true, configurable: true });
      }
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
const wanted = [];
for (const name of new Set(test.match(/[A-Za-z_$][\w$]*/g) || [])) {
  if (KEYWORDS.has(name) || declared.has(name) || nodeGlobals.has(name)) continue;
  if (vm.runInContext('typeof globalThis[' + JSON.stringify(name) + "] !== 'undefined'", context)) continue;
  wanted.push(name);
}

// The program: a script of the main realm, with CommonJS's names and no module loader but pure modules.
const PURE = ['assert', 'buffer', 'crypto', 'events', 'path', 'querystring', 'string_decoder', 'url', 'util'];
const harnessRequire = require;
// Any other module is a stand-in whose functions fail when called: a program that only requires it (or names
// its functions) passes, as officially; one that uses it fails.
function unavailable(bare) {
  const refuse = () => {
    throw new Error("module '" + bare + "' is not available to a graded program (only " + PURE.join(', ') + ')');
  };
  const stub = new Proxy(function unavailable() {}, {
    get: (target, key) => (key === 'then' || typeof key === 'symbol' ? undefined : stub),
    apply: refuse, construct: refuse, set: refuse, defineProperty: refuse, deleteProperty: refuse,
  });
  return stub;
}
function limitedRequire(name) {
  const bare = String(name).replace(/^node:/, '');
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
  for (let done = 0; done < chunk.length;) {
    try {
      done += writeSync(fd, chunk, done);
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
  const name = wanted[i];
  try {
    if (vm.runInThisContext('typeof ' + name) === 'undefined') continue;
    sandbox[name] = bridge.value(vm.runInThisContext(name));
  } catch (e) {
    if (e instanceof SyntaxError) continue;
    finish(1, describe(e));
  }
}
try {
  vm.runInContext("'use strict';\n" + test, context, { filename: '/tmp/test.js' });
} catch (e) {
  finish(1, describe(e));
}
writeSync(1, '\n' + secretText() + (failures ? ' failed ' + failures : ' ok') + '\n');
finish(0, '');
"""
