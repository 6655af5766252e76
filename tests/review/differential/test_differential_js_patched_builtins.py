"""Code under test that replaces a built-in the Node driver uses (``JSON.stringify``, ``Object.keys``, an
array's or a string's method, the hash, ``Promise.prototype.then``, a global, a setter on
``Object.prototype``) does not change the driver's result line: the driver took every built-in it uses
before loading that code. Each case's outcome is the one of the same code without the replacement, but
for a program replacing ``Buffer.from``: its output is what its own Node then wrote to its descriptor 1."""

from __future__ import annotations

import hashlib

import pytest

from memdoor.judging.judge import Judge
from memdoor.review.differential.execute import run_version
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import js_call_request, js_program, read_js, stdin_request
from memdoor.sandbox.lang.run import tool_for

needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")

AFTER_THE_CALL = {  # run by the method once its value is made: only the driver still reads them
    "stringify": "const o = JSON.stringify; JSON.stringify = (v, ...r) => (v && v.k) ? o({ ...v, r: 'x' }, ...r) : o(v, ...r);",
    "keys": "Object.keys = () => [];",
    "join": "Array.prototype.join = function () { return 'x'; };",
    "map": "Array.prototype.map = function () { return ['x']; };",
    "from": "Array.from = () => ['x'];",
    "includes": "Array.prototype.includes = () => true;",
    "concat": "Array.prototype.concat = () => { throw new Error('x'); };",
    "sort": "Array.prototype.sort = function () { return this.reverse(); };",
    "slice": "String.prototype.slice = function () { return 'x'; };",
    "hash": "require('crypto').createHash = () => ({ update() { return this; }, digest() { return 'f'.repeat(64); } });",
    "toJSON": "Object.prototype.toJSON = function () { return { k: 'return', r: 'x' }; };",
    "then": "const t = Promise.prototype.then; Promise.prototype.then = function (ok, no) { return t.call(this, (r) => ok(r && r.k ? { ...r, r: 'x' } : r), no); };",
    "String": "globalThis.String = () => 'x';",
    "mapIterator": "Map.prototype[Symbol.iterator] = function* () {}; Map.prototype.entries = function* () {};",
    "regexp": "Object.defineProperty(RegExp.prototype, 'source', { get() { return 'x'; } }); RegExp.prototype.toString = () => 'x';",
    "date": "Date.prototype.toISOString = () => 'x';",
    "setter": "Object.defineProperty(Object.prototype, 'a', { set(v) {}, configurable: true });",
}  # fmt: skip
AT_LOAD = {  # run when the file loads, before the driver calls anything
    "bind": "Function.prototype.bind = function () { return () => 'x'; };",
    "iterator": "Array.prototype[Symbol.iterator] = function* () { yield 'x'; };",
}
VALUE = "[1, 'a', { b: 2, c: [3] }, new Map([[1, 2]]), new Set([4]), /x/g, new Date(0), new Uint8Array([5])]"


def _method(name: str, patch: str) -> str:
    return f"  {name}(a) {{\n    const v = {VALUE};\n    a.push(1); this.z = 2; this.b = 3;\n    {patch}\n    return v;\n  }}\n"


def _raising(name: str, patch: str) -> str:
    return f"  {name}(a) {{\n    const e = new RangeError('too big');\n    {patch}\n    throw e;\n  }}\n"


METHODS = (
    "class Box {\n  constructor() { this.p = 1; }\n"
    + _method("plain", "")
    + "".join(_method(k, p) for k, p in AFTER_THE_CALL.items())
    + _raising("raises", "")
    + _raising("renamed", "RangeError.prototype.name = 'TypeError'; Error.prototype.name = 'TypeError';")
    + "}\nmodule.exports = { Box };\n"
)
LOADED = {
    f"lib/{k}.js": f"{p}\nclass Box {{\n  add(a) {{ return a + 1; }}\n}}\n"
    for k, p in {"plain": "", **AT_LOAD}.items()
}


async def _outcomes(sandbox, files: dict[str, str], requests) -> list[dict]:
    found = await run_version(Judge(sandbox), js_program(files), requests, read_js, "javascript")
    return [o.model_dump() for o in found]


@needs_node
async def test_builtins_replaced_by_a_method_do_not_change_its_result_line(sandbox):
    names = ["plain", *AFTER_THE_CALL]
    calls = [js_call_request("lib/box.js", f"Box.{n}", Call(text="[[0]]"), "method") for n in names]
    calls += [
        js_call_request("lib/box.js", f"Box.{n}", Call(text="[[0]]"), "method") for n in ("raises", "renamed")
    ]
    found = await _outcomes(sandbox, {"lib/box.js": METHODS}, calls)
    plain, rest, raised, renamed = found[0], found[1 : len(names)], found[-2], found[-1]
    assert plain["kind"] == "return" and plain["text"].startswith('[1, "a", {"b": 2, "c": [3]}, Map {1 => 2}')
    assert plain["mutated"] == "[[0, 1]]" and plain["state"] == '{"b": 3, "p": 1, "z": 2}'
    assert [n for n, o in zip(names[1:], rest, strict=True) if o != plain] == []
    assert (raised["kind"], raised["type"], raised["text"]) == ("raise", "RangeError", "too big")
    assert renamed == raised


@needs_node
async def test_builtins_replaced_when_a_file_loads_do_not_change_its_result_line(sandbox):
    names = ["plain", *AT_LOAD]
    calls = [js_call_request(f"lib/{n}.js", "Box.add", Call(text="[1]"), "method") for n in names]
    plain, *rest = await _outcomes(sandbox, LOADED, calls)
    assert (plain["kind"], plain["text"]) == ("return", "2")
    assert [n for n, o in zip(names[1:], rest, strict=True) if o != plain] == []


PROGRAM_PATCHES = {
    "push": "Array.prototype.push = function () { return this.length; };",
    "concat": "Buffer.concat = () => Buffer.from('2\\n');",
    "toString": "Buffer.prototype.toString = function () { return '2\\n'; }; Buffer.prototype.utf8Slice = function () { return '2\\n'; };",
    "hash": "require('crypto').hash = () => 'f'.repeat(64); require('crypto').createHash = () => ({ update() { return this; }, digest() { return 'f'.repeat(64); } });",
    "stringify": "JSON.stringify = () => '{\"k\":\"exit\",\"t\":\"exit status 0\",\"r\":\"2\\\\n\"}';",
}  # fmt: skip


@needs_node
@pytest.mark.parametrize("patch", ["", *PROGRAM_PATCHES.values()], ids=["plain", *PROGRAM_PATCHES])
async def test_a_program_replacing_what_the_driver_uses_still_shows_what_it_printed(sandbox, patch):
    source = f"{patch}\nconsole.log('3');\nprocess.stdout.write('\u00e9');\n"
    code = js_program({"bin/p.js": source}, "bin/p.js")
    (found,) = await run_version(
        Judge(sandbox), code, [stdin_request(Call(text="['']"))], read_js, "javascript"
    )
    assert (found.kind, found.type, found.text) == ("exit", "exit status 0", "3\n\u00e9")
    # the text's sha256, as the driver writes it when nothing is replaced
    assert found.digest == "f9bb86aa178ca8e4355ecea4c3a56000"


@needs_node
async def test_a_program_replacing_buffer_from_shows_what_its_node_then_wrote(sandbox):
    """Node's own stream encodes what the program prints with Buffer.from (its output is a file): the
    program's output is what reached its descriptor 1, read by a driver the patch does not reach."""
    source = "const bf = Buffer.from; Buffer.from = (...a) => bf('2\\n');\nconsole.log('3');\n"
    code = js_program({"bin/p.js": source}, "bin/p.js")
    (found,) = await run_version(
        Judge(sandbox), code, [stdin_request(Call(text="['']"))], read_js, "javascript"
    )
    assert (found.kind, found.type, found.text) == ("exit", "exit status 0", "2\n")
    assert found.digest == hashlib.sha256(b"2\n").hexdigest()[:32]
