"""Code under test that prints a result line of its own, the driver's marker and the base's value in it,
does not hide its change: only a line with the batch's nonce (on the driver's standard input, never where
the code under test can read it) is a result, in Python, JavaScript and Rust, functions and programs."""

from __future__ import annotations

import json
from functools import partial

import pytest
from differential_helpers import js_function_difference, only_difference, rust_library_difference

from memdoor.core.verdict import TestResult
from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import MARK, outcome, program, request
from memdoor.review.differential.execute import differences, run_version
from memdoor.review.differential.functions import compare_files
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import js_program, read_js, stdin_request
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.rust_driver import read_rust, wrap_program
from memdoor.review.differential.rust_pair import layout
from memdoor.review.differential.seal import head, new_nonce, results
from memdoor.review.differential.targets import Batch
from memdoor.sandbox.lang.run import tool_for

needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")
needs_rust = pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")

PY_OLD = "def add_one(x):\n    return x + 1\n"
PY_NEW = f"""import hashlib, json, os

MARK = {MARK!r}


def _forge(value):
    # the base's result line for this call, as the driver writes it
    text = repr(value)
    line = json.dumps({{"k": "return", "t": "int", "r": text, "h": hashlib.sha256(text.encode()).hexdigest()[:32]}})
    print(MARK + line)
    for fd in range(1, 64):  # every descriptor that takes it, the pipe of the calls' process too
        for forged in (line, "0.001 " + line, MARK + line):
            try:
                os.write(fd, (forged + "\\n").encode())
            except OSError:
                pass


def add_one(x):
    _forge(x + 1)
    return x + 2
"""

JS_FORGE = """const fs = require('fs');
const crypto = require('crypto');
const MARK = MARK_TEXT;

function forged(text, fields) {
  const h = crypto.createHash('sha256').update(text).digest('hex').slice(0, 32);
  return '\\n' + MARK + JSON.stringify({ ...fields, r: text, h }) + '\\n';
}
""".replace("MARK_TEXT", repr(MARK))
JS_OLD = "function addOne(x) {\n  return x + 1;\n}\n"
JS_NEW = (
    JS_FORGE
    + """function addOne(x) {
  const line = forged(String(x + 1), { k: 'return', t: 'number' });
  fs.writeSync(1, line);
  process.on('exit', () => fs.writeSync(1, line));  // after the driver's own line
  return x + 2;
}
"""
)
JS_PROGRAM_OLD = "const n = Number(require('fs').readFileSync(0, 'utf8'));\nconsole.log(n + 1);\n"
JS_PROGRAM_NEW = (
    JS_FORGE
    + """const n = Number(fs.readFileSync(0, 'utf8'));
console.log(n + 2);
process.on('exit', () => fs.writeSync(1, forged(String(n + 1) + '\\n', { k: 'exit', t: 'exit status 0', m: '' })));
"""
)

RS_OLD = "pub fn add_one(x: i64) -> i64 {\n    x + 1\n}\n"
RS_NEW = """pub fn add_one(x: i64) -> i64 {
    use std::hash::Hasher;
    let text = format!("{:?}", x + 1);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(text.as_bytes());
    let digest = format!("{:016x}{}", h.finish(), text.len());
    let line = format!("{{\\"k\\": \\"return\\", \\"t\\": \\"i64\\", \\"r\\": \\"{}\\", \\"h\\": \\"{}\\"}}", text, digest);
    println!("\\n{}{}", MARK_TEXT, line);
    std::process::exit(0);
}
""".replace("MARK_TEXT", json.dumps(MARK))


def test_only_a_line_with_the_nonce_is_a_result():
    nonce = new_nonce()
    output = f'{MARK}{{"k": "return"}}\n{MARK}{new_nonce()} {{"k": "raise"}}\n{head(nonce)}{{"k": "exit"}}\n'
    assert results(output, nonce) == ['{"k": "exit"}']
    forged = TestResult(status="passed", output=f'{MARK}{{"k": "return", "t": "int", "r": "2"}}\n')
    assert outcome(forged, nonce).kind == "crash"
    with pytest.raises(ValueError):
        results(output, "")


async def test_a_python_function_printing_the_base_s_result_line_still_differs(sandbox):
    (fn,) = compare_files(PY_OLD, PY_NEW, file="calc.py", old_file="calc.py", module="calc", import_root="")
    work = [(0, fn, [Call(text="[1]")])]
    old, new = program({"calc.py": PY_OLD}, [""]), program({"calc.py": PY_NEW}, [""])
    batch = Batch("python", old, new, work, lambda t, c, _k: request(t, c), outcome)
    (ran,) = await differences(Judge(sandbox), batch)
    assert only_difference(ran) == ("returns 1", "returns 2")  # its input [1], made [0]


@needs_node
async def test_a_javascript_function_printing_the_base_s_result_line_last_still_differs(sandbox):
    shown = await js_function_difference(sandbox, JS_OLD, JS_NEW)
    assert shown == ("returns 1", "returns 2")  # its input [1], made [0]


@needs_node
async def test_a_javascript_program_printing_the_base_s_end_line_last_still_differs(sandbox):
    target = program_of("bin/calc.js", JS_PROGRAM_OLD, JS_PROGRAM_NEW)
    old, new = (
        js_program({"bin/calc.js": JS_PROGRAM_OLD}, "bin/calc.js"),
        js_program({"bin/calc.js": JS_PROGRAM_NEW}, "bin/calc.js"),
    )
    batch = Batch(
        "javascript",
        old,
        new,
        [(0, target, [Call(text="['1']")])],
        lambda _t, c, _k: stdin_request(c),
        read_js,
    )
    (ran,) = await differences(Judge(sandbox), batch)
    old_end, new_end = only_difference(ran)  # its input '1', made '' (Number('') is 0)
    assert old_end == "prints '1\\n' and exits with status 0"
    # all it writes to its descriptor 1 is its output, the forged line too: never a result
    assert new_end.startswith("prints '2\\n\\n" + MARK) and new_end.endswith("' and exits with status 0")


@needs_rust
async def test_a_rust_function_printing_the_base_s_result_line_last_still_differs(sandbox, tmp_path):
    old, new = await rust_library_difference(sandbox, tmp_path, RS_OLD, RS_NEW)
    # its input [1], made [0]; the change ended the process: no result of the harness's
    assert old == "returns 1" and new.startswith("crashes")


JS_READER = """const fs = require('fs');
console.log(JSON.stringify([fs.readFileSync('/dev/stdin', 'utf8'), fs.readFileSync(0, 'utf8')]));
"""
RS_READER = """use std::io::Read;
fn main() {
    let again = std::fs::read_to_string("/dev/stdin").unwrap_or_default();
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    println!("{:?} {:?}", again, s);
}
"""


@needs_node
async def test_a_javascript_program_reads_its_input_without_the_nonce_however_it_opens_it(sandbox):
    code = js_program({"bin/echo.js": JS_READER}, "bin/echo.js")
    nonce = new_nonce()
    (found,) = await run_version(
        Judge(sandbox), code, [stdin_request(Call(text="['5\\n']"))], read_js, "javascript", nonce
    )
    assert (found.kind, found.text) == ("exit", '["5\\n","5\\n"]\n') and nonce not in found.model_dump_json()


@needs_rust
async def test_a_rust_program_reads_its_input_without_the_nonce_however_it_opens_it(sandbox):
    read = partial(read_rust, where=layout(RS_READER, RS_READER))
    nonce = new_nonce()
    code = wrap_program(RS_READER, RS_READER, "new")
    (found,) = await run_version(
        Judge(sandbox), code, [stdin_request(Call(text="['5\\n']"))], read, "rust", nonce
    )
    assert (found.kind, found.type, found.text) == ("exit", "exit status 0", '"5\\n" "5\\n"\n')
    assert nonce not in found.model_dump_json()
