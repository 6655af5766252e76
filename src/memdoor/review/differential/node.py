"""The Node program that runs one version's JavaScript in the sandbox, and what it reports.

It carries the version's JavaScript files (and ``package.json`` files), writes them into the sandbox's
private ``/tmp`` and then, in one of two modes:

- **a function**: reads one request on standard input (file, function name, the JSON argument list),
  evaluates the file as CommonJS does (``export`` keywords and re-exports dropped, ``export default x`` an
  assignment, ``require`` relative to it) with a ``return`` of the function added at its end, so top-level
  functions are reached whether exported or not (a file with ``import`` declarations cannot be evaluated
  so: :func:`module_syntax` says so, and the stage lists it as skipped). A method ``X.m`` is reached
  through its class: a static one on ``X``, an instance one on ``new X()`` built afresh for each call (a
  constructor that throws is ``import``: the method cannot be called, which is no behaviour), the
  constructor as ``new X(...)``. It calls it (awaiting a promise) with its own output discarded, and
  prints one line: :data:`MARK` then the JSON of the outcome (as the Python driver's: ``k``, ``t``,
  ``r``, ``h``, ``a``, ``ah``; and, only for an instance method whose call changed its instance's own
  enumerable fields, ``s``/``sh`` those after the call, sorted by name, and ``sb`` before it). Values are
  written as canonical text: ``undefined``, ``NaN``, ``Infinity``, ``-0``, ``12n``, Maps and Sets, class
  names, ``[Circular]``, so that what JSON cannot say is still compared.
- **a program** (``TARGET``): the program's standard input is the test's; it runs as ``node file`` would
  (``require``, or ``import()`` for an ES module), its output is captured, and at exit the line holds the
  output's text and digest, and how it ended: ``exit status N`` or the uncaught exception's type. A file
  that does not parse, or that needs a module the sandbox does not have, is ``import`` (it cannot run),
  not behaviour.

The test's first line is the nonce (:mod:`.seal`): the driver reads standard input before any code
under test is loaded, takes that line out (the input file keeps only the rest, and standard input reads it
again from its start) and prints it in its result line, after :data:`MARK`. Everything printed comes from
untrusted code and is read as data (:func:`read_js`): only the last line with the nonce is a result.
"""

from __future__ import annotations

import hashlib
import json

from memdoor.core.problem import TestCase
from memdoor.core.verdict import TestResult
from memdoor.review.differential.driver import MARK, MAX_TEXT, CallOutcome, outcome
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.jsscan import tokens
from memdoor.review.differential.stdin_inputs import stdin_of

DRIVER = r"""
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const vm = require('vm');
const Module = require('module');
const { pathToFileURL } = require('url');
const ROOT = path.join('/tmp', TREE);
const writeSync = fs.writeSync;
const NONCE = takeNonce();

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

function canon(v, depth, seen) {
  if (depth > 40) return '...';
  const t = typeof v;
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (t === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (t === 'bigint') return String(v) + 'n';
  if (t === 'string') return JSON.stringify(v);
  if (t === 'boolean') return String(v);
  if (t === 'symbol') return v.toString();
  if (t === 'function') return '[Function ' + (v.name || 'anonymous') + ']';
  if (seen.includes(v)) return '[Circular]';
  seen = seen.concat([v]);
  const inner = (x) => canon(x, depth + 1, seen);
  if (Array.isArray(v)) return '[' + Array.from(v, inner).join(', ') + ']';
  if (v instanceof Map) return 'Map {' + Array.from(v, ([k, x]) => inner(k) + ' => ' + inner(x)).join(', ') + '}';
  if (v instanceof Set) return 'Set {' + Array.from(v, inner).join(', ') + '}';
  if (v instanceof Date) return 'Date ' + (isNaN(v) ? 'Invalid' : v.toISOString());
  if (v instanceof RegExp) return String(v);
  if (v instanceof Error) return String(v.name) + ': ' + String(v.message);
  if (ArrayBuffer.isView(v)) return v.constructor.name + ' [' + Array.from(v, String).join(', ') + ']';
  if (typeof v.then === 'function') return '[Promise]';
  const proto = Object.getPrototypeOf(v);
  let name = '';
  if (proto === null) name = '[Object: null prototype] ';
  else if (proto !== Object.prototype) name = ((proto.constructor && proto.constructor.name) || '?') + ' ';
  return name + '{' + Object.keys(v).map((k) => JSON.stringify(k) + ': ' + inner(v[k])).join(', ') + '}';
}

function safeCanon(v) {
  try { return canon(v, 0, []); } catch (e) { return '[unprintable]'; }
}

function ownState(self) {
  // An instance's own enumerable fields, sorted by name, each value as canon writes it (itself inside
  // them [Circular]): what an instance method leaves behind.
  try {
    const inner = (k) => JSON.stringify(k) + ': ' + canon(self[k], 1, [self]);
    return '{' + Object.keys(self).sort().map(inner).join(', ') + '}';
  } catch (e) { return '[unprintable]'; }
}

function text(s) {
  return { r: s.slice(0, MAX_TEXT), h: crypto.createHash('sha256').update(s).digest('hex').slice(0, 32) };
}

function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'Array';
  if (typeof v === 'object') { const p = Object.getPrototypeOf(v); return p && p.constructor ? String(p.constructor.name) : 'Object'; }
  return typeof v;
}

function errType(e) {
  try {
    if (e instanceof Error || (e && typeof e === 'object' && typeof e.name === 'string')) return String(e.name || 'Error');
    return 'thrown ' + typeName(e);
  } catch (_) { return 'Error'; }
}

function errMessage(e) {
  try { return e && typeof e === 'object' && 'message' in e ? String(e.message) : safeCanon(e); } catch (_) { return ''; }
}

function missingModule(e) {
  try { return !!e && (e.code === 'MODULE_NOT_FOUND' || e.code === 'ERR_MODULE_NOT_FOUND'); } catch (_) { return false; }
}

function finish(res) {
  writeSync(1, '\n' + MARK + NONCE + ' ' + JSON.stringify(res) + '\n');
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
  // The function to call, and the instance an instance method is called on (null for any other).
  const dot = req.n.indexOf('.');
  const owner = dot < 0 ? req.n : req.n.slice(0, dot);
  const value = load(req.f, owner);
  if (typeof value !== 'function') throw new TypeError(owner + (dot < 0 ? ' is not a function' : ' is not a class'));
  if (dot < 0) return [value, null];
  if (req.c === 'constructor') return [(...args) => new value(...args), null];
  let self = value;
  if (req.c !== 'staticmethod') {
    try { self = new value(); } catch (e) { throw { name: errType(e), message: 'new ' + owner + '() throws: ' + errMessage(e) }; }
  }
  const fn = self[req.n.slice(dot + 1)];
  if (typeof fn !== 'function') throw new TypeError(req.n + ' is not a method');
  return [fn.bind(self), req.c === 'staticmethod' ? null : self];
}

async function callMode() {
  const req = JSON.parse(fs.readFileSync(0, 'utf8'));
  process.stdout.write = function () { return true; };
  let fn, self;
  try {
    setup();
    [fn, self] = callee(req);
  } catch (e) {
    return { k: 'import', t: errType(e), ...text(errMessage(e)) };
  }
  const args = JSON.parse(req.a);
  const before = safeCanon(args);
  const held = self === null ? null : ownState(self);
  let out;
  try {
    let value = fn(...args);
    if (value && typeof value.then === 'function') value = await value;
    out = { k: 'return', t: typeName(value), ...text(safeCanon(value)) };
  } catch (e) {
    out = { k: 'raise', t: errType(e), ...text(errMessage(e)) };
  }
  const after = safeCanon(args);
  if (after !== before) { const a = text(after); out.a = a.r; out.ah = a.h; }
  const now = self === null ? null : ownState(self);
  if (now !== held) { const s = text(now); out.s = s.r; out.sh = s.h; out.sb = text(held).r; }
  return out;
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
  const chunks = [];
  let error = null;
  let loading = true;
  process.on('exit', (code) => {
    const o = text(Buffer.concat(chunks).toString('utf8'));
    if (error && error.load) finish({ k: 'import', t: error.type, ...text(error.message) });
    else finish({ k: 'exit', t: error ? error.type : 'exit status ' + code, r: o.r, h: o.h, m: error ? error.message.slice(0, MAX_TEXT) : '' });
    process.exitCode = 0;
  });
  const fail = (e) => {
    if (!error) error = { type: errType(e), message: errMessage(e), load: (loading && e && e.memdoorLoad === true) || missingModule(e) };
    process.exit(1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  let full;
  try {
    setup();
    full = path.join(ROOT, TARGET);
    const esm = full.endsWith('.mjs') || (full.endsWith('.js') && packageType(full) === 'module');
    if (!esm) {
      let src = fs.readFileSync(full, 'utf8');
      if (src.startsWith('#!')) src = '//' + src;
      try { new vm.Script(Module.wrap(src), { filename: full }); } catch (e) { e.memdoorLoad = true; throw e; }
    }
    process.stdout.write = function (chunk, enc, cb) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof enc === 'string' ? enc : 'utf8') : Buffer.from(chunk));
      const done = typeof enc === 'function' ? enc : cb;
      if (typeof done === 'function') process.nextTick(done);
      return true;
    };
    loading = false;
    if (esm) import(pathToFileURL(full).href).catch(fail);
    else require(full);
  } catch (e) {
    fail(e);
  }
}

if (TARGET === null) {
  callMode().then((res) => { finish(res); process.exit(0); }, (e) => { finish({ k: 'import', t: errType(e), ...text(errMessage(e)) }); process.exit(0); });
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
