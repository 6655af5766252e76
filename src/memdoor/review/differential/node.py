"""The Node program that runs one version's JavaScript in the sandbox, and what it reports.

It carries the version's JavaScript files (and ``package.json`` files), writes them into the sandbox's
private ``/tmp`` and then, in one of two modes:

- **a function**: reads one request on standard input (file, function name, the JSON argument list),
  evaluates the file as CommonJS does (``export`` keywords and re-exports dropped, ``export default x`` an
  assignment, ``require`` relative to it) with a ``return`` of the function added at its end, so top-level
  functions are reached whether exported or not (a file with ``import`` declarations cannot be evaluated
  so: :func:`module_syntax` says so, and the stage lists it as skipped). A method ``X.m`` (or
  ``X.prototype.m``: an instance method whose class has a static one of the same name) is reached
  through its class: a static one on ``X``, an instance one on ``new X()`` built afresh for each call (a
  constructor that throws is ``import``: the method cannot be called, which is no behaviour), the
  constructor as ``new X(...)``. It calls it (awaiting a promise; a generator's items read with the
  built-in ``next``, at most :data:`MAX_ITEMS`, so its outcome is ``Generator [1, 2]``, with what it
  returns, what it throws after them, or a note where it was cut) with its own output discarded, and
  prints one line: :data:`MARK` then the JSON of the outcome (as the Python driver's: ``k``, ``t``,
  ``r``, ``h``, ``a``, ``ah``; and, only for an instance method whose call changed its instance's own
  enumerable fields, ``s``/``sh`` those after the call, sorted by name, and ``sb`` before it). Values are
  written as canonical text: ``undefined``, ``NaN``, ``Infinity``, ``-0``, ``12n``, Maps and Sets, class
  names, ``[Circular]``, so that what JSON cannot say is still compared; a value nested deeper than 40
  levels as ``...#`` and a digest of its whole (walked without recursion, :data:`MAX_NODES` values at most).
- **a program** (``TARGET``): it runs in a Node process of its own, started by the driver, whose standard
  input is the test's and whose file descriptor 1 is a file: it runs as ``node file > file`` would
  (``require``, or ``import()`` for an ES module), and its output is all it writes to descriptor 1
  (``console.log``, ``fs.writeSync(1, ...)``, a child process's). That process reports how it ended on
  descriptor 3, in a line after a random key it wrote there before loading any code; the driver's line
  holds the output's text and digest, and that end: ``exit status N`` or the uncaught exception's type
  (without the report, its exit status; killed by a signal, a ``crash``; a line there that starts with
  another key-shaped value, a guess at the key, a forged result: :data:`.seal.FORGED`). A file that does
  not parse, or that needs a module the sandbox does not have (an error Node's own module resolver threw),
  is ``import`` (it cannot run), not behaviour; an error the program throws with such a code itself is
  compared.

Each result line is at most :data:`MAX_LINE` characters (a long type cut with its digest after, long shown
texts cut further: their digests are compared), with the characters Python reads as line breaks escaped.

The test's first line is the nonce (:mod:`.seal`): the driver reads standard input before any code
under test is loaded, takes that line out (the input file keeps only the rest, and standard input reads it
again from its start) and prints it in its result line, after :data:`MARK`. Everything printed comes from
untrusted code and is read as data (:func:`read_js`): only the last line with the nonce is a result, and
one with another nonce-shaped value makes the outcome a forged result (:func:`.seal.forged`: one guess).
Nothing keeps a function's code from reading the driver's memory (``/proc/self/mem``) for the nonce.

A function under test runs in the driver's process (a program, in its own beside the driver's code that
reports its end) and may replace any global, prototype method or module function (``JSON.stringify``,
``Array.prototype.join``, ``crypto.createHash``, ``Promise.prototype.then``…).
The driver takes every built-in it uses after loading that code at start-up and calls it with a captured
``Reflect.apply``; it builds its text by concatenation and index loops (no array method, no iterator), its
records have no prototype (no setter of ``Object.prototype`` takes a field), it writes its JSON line field
by field (no ``toJSON`` is looked up), and it never hands a result on through a promise (resolving one
looks ``then`` up). Freezing the built-ins instead would change the behaviour of the code under test.
"""

from __future__ import annotations

import hashlib
import json

from memdoor.core.problem import TestCase
from memdoor.core.verdict import TestResult
from memdoor.review.differential.driver import MARK, MAX_LINE, MAX_NODES, MAX_TEXT, CallOutcome, outcome
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.jsscan import tokens
from memdoor.review.differential.seal import FORGED, FORGED_DIGEST
from memdoor.review.differential.stdin_inputs import stdin_of

MAX_ITEMS = 100
"""A generator's items the driver reads, at most (its outcome says when it was cut there)."""

DRIVER = r"""
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const util = require('util');
const vm = require('vm');
const Module = require('module');
const { spawnSync } = require('child_process');
const { pathToFileURL } = require('url');
const ROOT = path.join('/tmp', TREE);
const CHILD = '--memdoor-program';
const IN_CHILD = process.argv[2] === CHILD;

// Every built-in the driver uses once code under test may have run, taken now, before any is loaded: that
// code may replace a global, a prototype's method or a module's function, and the result line must not
// change with it. A captured function is called with Reflect.apply (``call``), on values the driver made;
// its records have no prototype, its lists are walked by index: no lookup reaches what the code can patch.
const $apply = Reflect.apply;
const $construct = Reflect.construct;
const call = (fn, self, ...args) => $apply(fn, self, args);
const $String = String;
const $TypeError = TypeError;
const $Set = Set;
const $WeakSet = WeakSet;
const { create: $create, getPrototypeOf: $getProto, hasOwn: $hasOwn, is: $is, keys: $keys } = Object;
const { parse: $parse, stringify: $stringify } = JSON;
const $isArray = Array.isArray;
const $isView = ArrayBuffer.isView;
const $sort = Array.prototype.sort;
const $slice = String.prototype.slice;
const $charCodeAt = String.prototype.charCodeAt;
const $isPrototypeOf = Object.prototype.isPrototypeOf;
const OBJECT_PROTO = Object.prototype;
const ERROR_PROTO = Error.prototype;
const { isDate, isGeneratorObject, isMap, isRegExp, isSet, isTypedArray } = util.types;
const $mapEntries = Map.prototype.entries;
const $mapNext = $getProto(new Map().entries()).next;
const $setValues = Set.prototype.values;
const $setNext = $getProto(new Set().values()).next;
const { add: $setAdd, has: $setHas, delete: $setDelete } = Set.prototype;
const { add: $weakAdd, has: $weakHas } = WeakSet.prototype;
const $getTime = Date.prototype.getTime;
const $toISOString = Date.prototype.toISOString;
const getter = (proto, name) => { const d = Object.getOwnPropertyDescriptor(proto, name); return d ? d.get : undefined; };
const $source = getter(RegExp.prototype, 'source');
const FLAGS = [['hasIndices', 'd'], ['global', 'g'], ['ignoreCase', 'i'], ['multiline', 'm'], ['dotAll', 's'],
  ['unicode', 'u'], ['unicodeSets', 'v'], ['sticky', 'y']].filter(([n]) => getter(RegExp.prototype, n)).map(([n, c]) => [getter(RegExp.prototype, n), c]);
const TYPED_PROTO = $getProto(Uint8Array.prototype);
const $typedLength = getter(TYPED_PROTO, 'length');
const $utf8Slice = Buffer.prototype.utf8Slice;
const $bufferFrom = Buffer.from;
const ERROR_NAMES = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError]
  .map((C) => [C.prototype, C.prototype.name]);
const GENERATOR_PROTO = $getProto($getProto((function* () {})()));
const ASYNC_GENERATOR_PROTO = $getProto($getProto((async function* () {})()));
const $generatorNext = GENERATOR_PROTO.next;
const $asyncGeneratorNext = ASYNC_GENERATOR_PROTO.next;
const $hash = typeof crypto.hash === 'function' ? crypto.hash : null;
const $createHash = crypto.createHash;
const HASH_PROTO = $getProto(crypto.createHash('sha256'));
const $update = HASH_PROTO.update;
const $digest = HASH_PROTO.digest;
const $exit = process.exit;
const writeSync = fs.writeSync;
const RESULT_FIELDS = ['k', 't', 'r', 'h', 'm', 'a', 'ah', 's', 'sh', 'sb'];
const SHOWN_FIELDS = ['r', 'a', 's', 'sb', 'm'];
const DONE = $create(null);
const MISSING = new $WeakSet();
const NONCE = IN_CHILD ? '' : takeNonce();

function takeNonce() {
  // The test's first line, read before any code under test is loaded; the input file keeps only the rest,
  // opened again as standard input (descriptor 0, the lowest free), so the program reads it from its start.
  const all = fs.readFileSync(0);
  const at = all.indexOf(10) < 0 ? all.length : all.indexOf(10);
  const rest = all.subarray(Math.min(at + 1, all.length));
  let where = null;
  try { if (fs.fstatSync(0).isFile()) where = fs.readlinkSync('/proc/self/fd/0'); } catch (_) { where = null; }
  fs.closeSync(0);
  try {
    if (where === null) throw new Error('standard input is no file');
    fs.writeFileSync(where, rest);
  } catch (_) {
    if (where !== null) { try { fs.unlinkSync(where); } catch (_) { /* nothing else can remove it */ } }
    where = path.join('/tmp', TREE + '-input');
    fs.writeFileSync(where, rest);
  }
  fs.openSync(where, 'r');
  return all.subarray(0, at).toString('latin1');
}

function setup() {
  const ready = path.join(ROOT, '.memdoor-ready');
  if (fs.existsSync(ready)) return;
  for (const [rel, text] of Object.entries(FILES)) {
    const p = path.join(ROOT, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  }
  fs.writeFileSync(ready, '');
}

function record(k, t, body) {
  // A result: no prototype, so that no setter or getter of Object.prototype takes a field.
  const o = $create(null);
  o.k = k; o.t = t; o.r = body.r; o.h = body.h;
  return o;
}

function errorName(e) {
  // e.name, where a built-in error's prototype gives the name it had at start-up.
  for (let o = e, n = 0; o !== null && typeof o === 'object' && n < 1000; o = $getProto(o), n++) {
    for (let i = 0; i < ERROR_NAMES.length; i++) if (ERROR_NAMES[i][0] === o) return ERROR_NAMES[i][1];
    if ($hasOwn(o, 'name')) break;
  }
  return e.name;
}

function listed(v, each) {
  // Each of an array's items as ``each`` writes it, separated by commas (by index: no iterator).
  let out = '';
  for (let i = 0; i < v.length; i++) out += (i ? ', ' : '') + each(v[i]);
  return out;
}

function leaf(v) {
  // canon's text of a value that holds none it writes inside it; null for an array, Map, Set or other object.
  const t = typeof v;
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (t === 'number') return $is(v, -0) ? '-0' : $String(v);
  if (t === 'bigint') return $String(v) + 'n';
  if (t === 'string') return $stringify(v);
  if (t === 'boolean') return $String(v);
  if (t === 'symbol') return $String(v);
  if (t === 'function') return '[Function ' + (v.name || 'anonymous') + ']';
  if ($isArray(v) || isMap(v) || isSet(v)) return null;
  if (isDate(v)) { const time = call($getTime, v); return 'Date ' + (time !== time ? 'Invalid' : call($toISOString, v)); }
  if (isRegExp(v)) { let f = ''; for (let i = 0; i < FLAGS.length; i++) if (call(FLAGS[i][0], v)) f += FLAGS[i][1]; return '/' + call($source, v) + '/' + f; }
  if (call($isPrototypeOf, ERROR_PROTO, v)) return $String(errorName(v)) + ': ' + $String(v.message);
  if ($isView(v)) {
    let out = '';
    if (isTypedArray(v)) for (let i = 0, n = call($typedLength, v); i < n; i++) out += (i ? ', ' : '') + $String(v[i]);
    return v.constructor.name + ' [' + out + ']';
  }
  if (typeof v.then === 'function') return '[Promise]';
  return null;
}

function objectName(v) {
  // How canon names an object's class before its fields ('' for a plain object).
  const proto = $getProto(v);
  if (proto === null) return '[Object: null prototype] ';
  return proto === OBJECT_PROTO ? '' : ((proto.constructor && proto.constructor.name) || '?') + ' ';
}

function budget() {
  // The values deep may read of one value's deepest parts, all together.
  const left = $create(null);
  left.n = MAX_NODES;
  return left;
}

function canon(v, depth, seen, left) {
  // ``seen``: the objects this one is inside, a chain of {v, up} records. A value nested deeper than 40 is
  // written '...#' and a digest of its whole (deep); ``left``: what deep may still read (budget()).
  if (depth > 40) return '...#' + deep(v, seen, left);
  const own = leaf(v);
  if (own !== null) return own;
  for (let s = seen; s !== null; s = s.up) if (s.v === v) return '[Circular]';
  const inside = { v, up: seen };
  const inner = (x) => canon(x, depth + 1, inside, left);
  if ($isArray(v)) return '[' + listed(v, inner) + ']';
  if (isMap(v)) {
    let out = '';
    for (const it = call($mapEntries, v); ;) {
      const step = call($mapNext, it);
      if (step.done) break;
      out += (out ? ', ' : '') + inner(step.value[0]) + ' => ' + inner(step.value[1]);
    }
    return 'Map {' + out + '}';
  }
  if (isSet(v)) {
    let out = '';
    for (const it = call($setValues, v); ;) {
      const step = call($setNext, it);
      if (step.done) break;
      out += (out ? ', ' : '') + inner(step.value);
    }
    return 'Set {' + out + '}';
  }
  return objectName(v) + '{' + listed($keys(v), (k) => $stringify(k) + ': ' + inner(v[k])) + '}';
}

function deep(v, seen, left) {
  // The whole of a value nested too deep for canon to write, as a digest (so that two values that differ
  // only down there still differ): an array, Map, Set or other object the digest of its kind and its items'
  // digests (an object's with their keys), any other value of its text. It is walked without recursion, an
  // object met again inside itself is [Circular], and at most left.n values are read in all (a part not
  // read is "cut"): its time and memory are bounded.
  const path = new $Set();
  for (let s = seen; s !== null; s = s.up) call($setAdd, path, s.v);
  const stack = $create(null);
  let n = 0;
  let d = enter(v, path, left);
  for (;;) {
    if (typeof d !== 'string') stack[n++] = d;
    else if (n === 0) return call($slice, d, 0, 16);
    else { const f = stack[n - 1]; f.acc += (f.items++ ? ',' : '') + f.label + d; }
    const f = stack[n - 1];
    const x = left.n > 0 ? nextItem(f) : DONE;
    if (x !== DONE) { d = enter(x, path, left); continue; }
    n--;
    call($setDelete, path, f.self);
    d = digest(f.kind + '(' + f.acc + (left.n > 0 ? '' : ',cut') + ')');
  }
}

function enter(v, path, left) {
  // v's digest when it holds none canon writes inside it; else the frame deep walks its items with.
  left.n--;
  if (left.n < 0) return 'cut';
  const own = leaf(v);
  if (own !== null) return digest('value ' + own);
  if (call($setHas, path, v)) return '[Circular]';
  call($setAdd, path, v);
  const f = $create(null);
  f.self = v; f.acc = ''; f.items = 0; f.label = ''; f.i = 0; f.it = null; f.pending = DONE;
  if ($isArray(v)) { f.kind = 'Array'; f.count = v.length; }
  else if (isMap(v)) { f.kind = 'Map'; f.it = call($mapEntries, v); f.next = $mapNext; }
  else if (isSet(v)) { f.kind = 'Set'; f.it = call($setValues, v); f.next = $setNext; }
  else { f.kind = objectName(v) + 'Object'; f.keys = $keys(v); f.count = f.keys.length; }
  return f;
}

function nextItem(f) {
  // The next value of a frame of deep (a Map's key, then its value), or DONE.
  if (f.kind === 'Array') return f.i < f.count ? f.self[f.i++] : DONE;
  if (f.it !== null) {
    if (f.pending !== DONE) { const x = f.pending; f.pending = DONE; return x; }
    const step = call(f.next, f.it);
    if (step.done) return DONE;
    if (f.kind !== 'Map') return step.value;
    f.pending = step.value[1];
    return step.value[0];
  }
  if (f.i >= f.count) return DONE;
  const k = f.keys[f.i++];
  f.label = $stringify(k) + ':';
  return f.self[k];
}

function safeCanon(v, left) {
  // ``left``: a budget() shared with other values (a generator's items); a fresh one when undefined.
  try { return canon(v, 0, null, left === undefined ? budget() : left); } catch (e) { return '[unprintable]'; }
}

function ownState(self) {
  // An instance's own enumerable fields, sorted by name, each value as canon writes it (itself inside
  // them [Circular]): what an instance method leaves behind.
  try {
    const names = $keys(self);
    call($sort, names);
    const left = budget();
    return '{' + listed(names, (k) => $stringify(k) + ': ' + canon(self[k], 1, { v: self, up: null }, left)) + '}';
  } catch (e) { return '[unprintable]'; }
}

function digest(s) {
  if ($hash !== null) return $hash('sha256', s, 'hex');
  return call($digest, call($update, $createHash('sha256'), s), 'hex');
}

function text(s) {
  return { r: call($slice, s, 0, MAX_TEXT), h: call($slice, digest(s), 0, 32) };
}

function typeName(v) {
  if (v === null) return 'null';
  if ($isArray(v)) return 'Array';
  if (typeof v === 'object') { const p = $getProto(v); return p && p.constructor ? $String(p.constructor.name) : 'Object'; }
  return typeof v;
}

function errType(e) {
  try {
    if (call($isPrototypeOf, ERROR_PROTO, e) || (e && typeof e === 'object' && typeof e.name === 'string')) return $String(errorName(e) || 'Error');
    return 'thrown ' + typeName(e);
  } catch (_) { return 'Error'; }
}

function errMessage(e) {
  try { return e && typeof e === 'object' && 'message' in e ? $String(e.message) : safeCanon(e); } catch (_) { return ''; }
}

let ESM_MISSING = null;

function trackMissing() {
  // Node's CommonJS resolver, wrapped before any code under test loads: each error it throws for a module
  // it cannot find is noted (ESM_MISSING is the class of its ES module loader's, taken then too), so that
  // only those say the program cannot run here: code that throws an error with that code itself is
  // compared like any other.
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function () {
    try {
      return $apply(resolve, this, arguments);
    } catch (e) {
      try {
        if (e !== null && typeof e === 'object' && e.code === 'MODULE_NOT_FOUND') call($weakAdd, MISSING, e);
      } catch (_) { /* thrown as it was */ }
      throw e;
    }
  };
}

function missingModule(e) {
  try {
    if (call($weakHas, MISSING, e)) return true;
    return ESM_MISSING !== null && e !== null && typeof e === 'object' && $getProto(e) === ESM_MISSING;
  } catch (_) { return false; }
}

function line(res) {
  // The result as JSON, its fields in a fixed order, each an own text (no JSON.stringify of an object,
  // which would look toJSON up), at most MAX_LINE characters (the sandbox keeps 4,096 of a test's output):
  // a type longer than 200 cut with its digest after, and while the line is too long the longest shown
  // text (value, arguments, instance, message) cut by half (what is compared of them is their digests).
  // What Python reads as a line break is escaped.
  const own = $create(null);
  for (let i = 0; i < RESULT_FIELDS.length; i++) {
    const f = RESULT_FIELDS[i];
    if ($hasOwn(res, f) && typeof res[f] === 'string') own[f] = res[f];
  }
  if (typeof own.t === 'string' && own.t.length > 200) {
    own.t = call($slice, own.t, 0, 100) + '...#' + call($slice, digest(own.t), 0, 32);
  }
  for (;;) {
    let out = '';
    for (let i = 0; i < RESULT_FIELDS.length; i++) {
      const f = RESULT_FIELDS[i];
      if (typeof own[f] === 'string') out += (out ? ',' : '') + $stringify(f) + ':' + unbroken($stringify(own[f]));
    }
    let longest = null;
    for (let i = 0; i < SHOWN_FIELDS.length; i++) {
      const f = SHOWN_FIELDS[i];
      const n = typeof own[f] === 'string' ? own[f].length : 0;
      if (n > 0 && (longest === null || n > own[longest].length)) longest = f;
    }
    if (out.length + 2 <= MAX_LINE || longest === null) return '{' + out + '}';
    own[longest] = call($slice, own[longest], 0, (own[longest].length / 2) | 0);
  }
}

function unbroken(s) {
  // JSON text with U+0085, U+2028 and U+2029 escaped: Python splits lines at them.
  let out = '';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = call($charCodeAt, s, i);
    if (c === 0x85 || c === 0x2028 || c === 0x2029) {
      out += call($slice, s, from, i) + (c === 0x85 ? '\\u0085' : c === 0x2028 ? '\\u2028' : '\\u2029');
      from = i + 1;
    }
  }
  return from === 0 ? s : out + call($slice, s, from);
}

function finish(res) {
  writeSync(1, '\n' + MARK + NONCE + ' ' + line(res) + '\n');
}

function load(rel, name) {
  const full = path.join(ROOT, rel);
  let src = fs.readFileSync(full, 'utf8');
  if (src.startsWith('#!')) src = '//' + src;
  src = src.replace(/^([ \t]*)export\s+default\s+(?=(?:async\s+)?function|class)/gm, '$1')
    .replace(/^([ \t]*)export\s+(?=(?:async\s+)?function|const\s|let\s|var\s|class\s)/gm, '$1')
    .replace(/^[ \t]*export\s*(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(['"])[^'"\n]*\1[ \t]*;?/gm, '')
    .replace(/^[ \t]*export\s*\{[^}]*\}\s*;?[ \t]*$/gm, '')
    .replace(/^([ \t]*)export\s+default\s+/gm, '$1exports.default = ');
  const body = src + '\n;return typeof ' + name + " === 'undefined' ? undefined : " + name + ';';
  const make = new Function('exports', 'require', 'module', '__filename', '__dirname', body);
  const mod = { exports: {} };
  return make(mod.exports, Module.createRequire(full), mod, full, path.dirname(full));
}

function callee(req) {
  // How to call the target: ``run(args)``, and the instance an instance method is called on (null for
  // any other). ``X.m`` (or ``X.prototype.m``, an instance method named as a static one is too) is a
  // method of class X.
  const dot = req.n.indexOf('.');
  const owner = dot < 0 ? req.n : req.n.slice(0, dot);
  const method = req.n.slice(req.n.lastIndexOf('.') + 1);
  const value = load(req.f, owner);
  if (typeof value !== 'function') throw new $TypeError(owner + (dot < 0 ? ' is not a function' : ' is not a class'));
  if (dot < 0) return { run: (args) => $apply(value, undefined, args), self: null };
  if (req.c === 'constructor') return { run: (args) => $construct(value, args), self: null };
  let self = value;
  if (req.c !== 'staticmethod') {
    try { self = new value(); } catch (e) { throw { name: errType(e), message: 'new ' + owner + '() throws: ' + errMessage(e) }; }
  }
  const fn = self[method];
  if (typeof fn !== 'function') throw new $TypeError(req.n + ' is not a method');
  return { run: (args) => $apply(fn, self, args), self: req.c === 'staticmethod' ? null : self };
}

async function generated(gen) {
  // A generator's outcome: what it yields (read with the built-in next, at most MAX_ITEMS items), then
  // what it returns, or what it throws.
  const isAsync = call($isPrototypeOf, ASYNC_GENERATOR_PROTO, gen);
  const kind = isAsync ? 'AsyncGenerator' : 'Generator';
  const next = isAsync ? $asyncGeneratorNext : $generatorNext;
  const left = budget();
  let items = '';
  let n = 0;
  try {
    for (;;) {
      if (n >= MAX_ITEMS) return record('return', kind, text(kind + ' [' + items + ', ...] (its first ' + MAX_ITEMS + ' items)'));
      let step = call(next, gen);
      if (isAsync) step = await step;
      if (step.done) {
        const end = step.value === undefined ? '' : ' then returns ' + safeCanon(step.value, left);
        return record('return', kind, text(kind + ' [' + items + ']' + end));
      }
      items += (n ? ', ' : '') + safeCanon(step.value, left);
      n++;
    }
  } catch (e) {
    return record('raise', errType(e), text(errMessage(e) + (n ? ' (after yielding [' + items + '])' : '')));
  }
}

async function called() {
  const req = $parse(fs.readFileSync(0, 'utf8'));
  process.stdout.write = function () { return true; };
  let target;
  try {
    setup();
    target = callee(req);
  } catch (e) {
    return record('import', errType(e), text(errMessage(e)));
  }
  const args = $parse(req.a);
  const before = safeCanon(args);
  const self = target.self;
  const held = self === null ? null : ownState(self);
  let out;
  try {
    let value = target.run(args);
    if (value && typeof value.then === 'function') value = await value;
    out = isGeneratorObject(value) ? await generated(value) : record('return', typeName(value), text(safeCanon(value)));
  } catch (e) {
    out = record('raise', errType(e), text(errMessage(e)));
  }
  const after = safeCanon(args);
  if (after !== before) { const a = text(after); out.a = a.r; out.ah = a.h; }
  const now = self === null ? null : ownState(self);
  if (now !== held) { const s = text(now); out.s = s.r; out.sh = s.h; out.sb = text(held).r; }
  return out;
}

async function callMode() {
  // Its result is written here, not handed on through a promise: resolving one looks ``then`` up.
  let res;
  try { res = await called(); } catch (e) { res = record('import', errType(e), text(errMessage(e))); }
  finish(res);
  call($exit, process, 0);
}

function packageType(full) {
  let dir = path.dirname(full);
  while (dir.startsWith(ROOT)) {
    const p = path.join(dir, 'package.json');
    if (fs.existsSync(p)) {
      try { return JSON.parse(fs.readFileSync(p, 'utf8')).type || 'commonjs'; } catch (_) { return 'commonjs'; }
    }
    if (dir === ROOT) break;
    dir = path.dirname(dir);
  }
  return 'commonjs';
}

function programMode() {
  // The program runs in a process of its own (runProgram), whose descriptor 1 is a file read back here once
  // it ends: its output is all it writes there (console.log, process.stdout, fs.writeSync(1, ...), a child
  // process's), as it would be to a file. How it ended it reports on descriptor 3, a pipe, in a line after
  // the key it wrote there first, before any code under test loaded; without that line (the program
  // removed the driver's handlers), its exit status says. This process loads no code under test.
  let out;
  try {
    const where = path.join('/tmp', TREE + '-output');
    out = fs.openSync(where, 'w+', 0o600);
    fs.unlinkSync(where);
  } catch (e) {
    finish(crash('its output file cannot be made: ' + errMessage(e)));
    return;
  }
  const ran = spawnSync(process.execPath, [...process.execArgv, __filename, CHILD], { stdio: [0, out, 'ignore', 'pipe'] });
  const said = ran.output ? reported(ran.output[3]) : null;
  const printed = text(readAll(out));
  fs.closeSync(out);
  if (said === FORGED_REPORT) {
    const res = crash(FORGED);
    res.h = FORGED_DIGEST;
    finish(res);
  } else if (said !== null && said.k === 'import') {
    finish(record('import', said.t, text(said.m)));
  } else if (ran.status !== null || (said !== null && said.t !== '')) {
    const res = record('exit', said !== null && said.t !== '' ? said.t : 'exit status ' + ran.status, printed);
    res.m = said !== null ? call($slice, said.m, 0, MAX_TEXT) : '';
    finish(res);
  } else {
    finish(crash('its process ended (' + (ran.error ? $String(ran.error.code) : 'signal ' + ran.signal) + ')'));
  }
}

const FORGED_REPORT = $create(null);

function crash(reason) {
  const res = $create(null);
  res.k = 'crash';
  res.r = call($slice, reason, 0, MAX_TEXT);
  return res;
}

function readAll(fd) {
  // All a file holds, from its start, read as UTF-8.
  const size = fs.fstatSync(fd).size;
  const data = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const n = fs.readSync(fd, data, at, size - at, at);
    if (n <= 0) break;
    at += n;
  }
  return data.toString('utf8', 0, at);
}

function reported(data) {
  // The program's report of how it ended ({k, t, m}): the last line on its descriptor 3 that starts with
  // the key on that descriptor's first line; null without one; FORGED_REPORT when a later line starts
  // with another key-shaped value (32 hexadecimal digits and a space): a guess at the key, which a program
  // reading its process's memory could make for each candidate there. It gets one guess.
  const s = data ? data.toString('utf8') : '';
  const key = s.slice(0, 32);
  if (!/^[0-9a-f]{32}$/.test(key) || s[32] !== '\n') return null;
  const shaped = /^([0-9A-Fa-f]{32}) /gm;
  shaped.lastIndex = 33;
  for (let m = shaped.exec(s); m !== null; m = shaped.exec(s)) {
    if (m[1] !== key) return FORGED_REPORT;
  }
  const at = s.lastIndexOf('\n' + key + ' ');
  if (at < 32) return null;
  const rest = s.slice(at + 34);
  try {
    const said = JSON.parse(rest.slice(0, rest.indexOf('\n') < 0 ? rest.length : rest.indexOf('\n')));
    const ok = said && (said.k === 'exit' || said.k === 'import') && typeof said.t === 'string' && typeof said.m === 'string';
    return ok ? said : null;
  } catch (_) {
    return null;
  }
}

function writeAll(fd, s) {
  // s written whole to fd (a pipe may be full for a moment); given up on any other error.
  const data = $bufferFrom(s, 'utf8');
  for (let at = 0, tries = 0; at < call($typedLength, data) && tries < 100000;) {
    try { at += writeSync(fd, data, at); } catch (e) { if (e.code !== 'EAGAIN') return; tries++; }
  }
}

function runProgram() {
  // The program's own process (programMode's): its output is descriptor 1's, its report goes to 3.
  const key = crypto.randomBytes(16).toString('hex');
  writeAll(3, key + '\n');
  process.argv.length = 2;
  let error = null;
  let loading = true;
  process.on('exit', () => {
    const res = $create(null);
    res.k = error && error.load ? 'import' : 'exit';
    res.t = error ? error.type : '';
    res.m = error ? error.message : '';
    writeAll(3, '\n' + key + ' ' + line(res) + '\n');
  });
  const fail = (e) => {
    if (!error) error = { type: errType(e), message: errMessage(e), load: (loading && e && e.memdoorLoad === true) || missingModule(e) };
    call($exit, process, 1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  const load = () => {
    try {
      setup();
      const full = path.join(ROOT, TARGET);
      const esm = full.endsWith('.mjs') || (full.endsWith('.js') && packageType(full) === 'module');
      if (!esm) {
        let src = fs.readFileSync(full, 'utf8');
        if (src.startsWith('#!')) src = '//' + src;
        try { new vm.Script(Module.wrap(src), { filename: full }); } catch (e) { e.memdoorLoad = true; throw e; }
      }
      loading = false;
      if (esm) import(pathToFileURL(full).href).catch(fail);
      else require(full);
    } catch (e) {
      fail(e);
    }
  };
  trackMissing();
  // The class of the ES module loader's error for a missing module, from one it throws now; the program
  // then starts as a main module would (no promise job of its own before it).
  const noted = (e) => {
    if (e !== null && typeof e === 'object' && e.code === 'ERR_MODULE_NOT_FOUND') ESM_MISSING = $getProto(e);
    setImmediate(load);
  };
  import(pathToFileURL(path.join(ROOT, '.memdoor-no-such-module.mjs')).href).then(noted, noted);
}

if (IN_CHILD) {
  runProgram();
} else if (TARGET === null) {
  callMode();
} else {
  programMode();
}
"""


def module_syntax(text: str) -> str | None:
    """Why the function mode cannot evaluate a file (None: it can): ``import`` declarations or
    ``import.meta`` belong to ES modules only (``import(...)`` and a property named ``import`` are fine)."""
    toks = tokens(text)
    for i, t in enumerate(toks):
        if t.kind != "name" or t.text != "import":
            continue
        before = toks[i - 1].text if i else ""
        after = toks[i + 1].text if i + 1 < len(toks) else ""
        if before not in (".", "?.") and after not in ("(", ":"):
            return "ES module imports: functions not callable"
    return None


def js_program(files: dict[str, str], target: str | None = None) -> str:
    """The Node program of one version: its files, the program to run (None: called functions), the driver."""
    blob = json.dumps(files, ensure_ascii=True)
    tree = "memdoor-js-" + hashlib.sha256(blob.encode()).hexdigest()[:16]
    head = (
        f"'use strict';\nconst FILES = {blob};\nconst TREE = {json.dumps(tree)};\n"
        f"const TARGET = {json.dumps(target)};\nconst MARK = {json.dumps(MARK)};\nconst MAX_TEXT = {MAX_TEXT};\n"
        f"const MAX_ITEMS = {MAX_ITEMS};\nconst MAX_LINE = {MAX_LINE};\nconst MAX_NODES = {MAX_NODES};\n"
        f"const FORGED = {json.dumps(FORGED)};\nconst FORGED_DIGEST = {json.dumps(FORGED_DIGEST)};\n"
    )
    return head + DRIVER


def js_call_request(file: str, name: str, call: Call, kind: str = "function") -> TestCase:
    """The test of one call: ``name`` a top-level function, or ``X.m`` a method of class ``X`` called as
    ``kind`` says (on ``new X()``, on ``X``, or ``new X(...)`` for the constructor)."""
    request = {"f": file, "n": name, "a": call.text, "c": kind}
    return TestCase(kind="stdin", input=json.dumps(request), output=None)


def stdin_request(call: Call) -> TestCase:
    """A program's test: the input itself on standard input."""
    return TestCase(kind="stdin", input=stdin_of(call), output=None)


def read_js(result: TestResult, nonce: str) -> CallOutcome:
    """The outcome of one test of the Node program (its last result line), read as untrusted data."""
    return outcome(result, nonce, last=True)
