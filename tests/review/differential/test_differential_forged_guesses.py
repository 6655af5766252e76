"""Code under test that can read (or guess) the seal of a result line gets one guess at it: a line shaped like a
sealed line whose value is not the run's (the batch's nonce after the marker, the Python calls process's key,
a Node program's report key) makes that call's or program's outcome a crash, ``forged result line``, compared
by its digest: never output to ignore, never the real result. And the Rust harness makes its process
non-dumpable before it takes the nonce, so safe Rust cannot open ``/proc/self/mem`` to find it. Real
sandbox, node and rustc for the programs."""

from __future__ import annotations

import json
from functools import partial

import pytest
from differential_helpers import js_function_difference, only_difference, rust_library_difference

from memdoor.core.verdict import TestResult
from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import MARK, CallOutcome, outcome, program, request
from memdoor.review.differential.execute import differences, run_version
from memdoor.review.differential.functions import compare_files
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import js_program, read_js, stdin_request
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.rust_driver import read_rust, wrap_program
from memdoor.review.differential.rust_pair import layout
from memdoor.review.differential.seal import FORGED, FORGED_DIGEST, head, new_nonce
from memdoor.review.differential.targets import Batch
from memdoor.sandbox.lang.run import tool_for

needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")
needs_rust = pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")

SHOWN = f"crashes ({FORGED})"
RETURN = '{"k": "return", "t": "int", "r": "1"}'


def _passed(output: str) -> TestResult:
    return TestResult(status="passed", output=output)


def _is_forged(o: CallOutcome) -> bool:
    return (o.kind, o.text, o.digest) == ("crash", FORGED, FORGED_DIGEST)


def test_a_result_line_with_another_nonce_beside_the_real_one_is_a_forged_result():
    nonce = new_nonce()
    real, wrong = head(nonce) + RETURN, f"{MARK}{new_nonce()} {RETURN}"
    upper = f"{MARK}{nonce.upper()} {RETURN}"  # never read as a result: a wrong guess too
    bare = f"{MARK}{new_nonce()}"  # the nonce-shaped value alone
    for output in (f"{wrong}\n{real}\n", f"{real}\n{wrong}\n", f"{upper}\n{real}\n", f"{real}\n{bare}\n"):
        for last in (False, True):  # the Python driver's first line, Node's and Rust's last
            assert _is_forged(outcome(_passed(output), nonce, last)), (output, last)
    assert outcome(_passed(f"{wrong}\n"), nonce).key() == outcome(_passed(f"{upper}\n"), nonce).key()
    assert outcome(_passed(f"{wrong}\n"), nonce).key() != CallOutcome(kind="crash", text="no result").key()
    # no guess at the nonce: the bare marker, 31 or 33 digits, not hexadecimal, the marker inside a line
    for near in (
        f"{MARK}{RETURN}",
        f"{MARK}{'a' * 31} {RETURN}",
        f"{MARK}{'a' * 33} {RETURN}",
        f"{MARK}{'g' * 32} {RETURN}",
        f"x{wrong}",
    ):
        found = outcome(_passed(f"{near}\n{real}\n"), nonce)
        assert (found.kind, found.text) == ("return", "1"), near


def test_a_rust_program_s_wrong_guess_at_the_nonce_is_a_forged_result():
    nonce = new_nonce()
    where = layout("fn main() {}\n", "fn main() {}\n")
    end = '{"k": "exit", "t": "exit status 0", "m": ""}'
    ok = read_rust(_passed(f"1\n\n{head(nonce)}{end}\n"), nonce, where)
    assert (ok.kind, ok.type, ok.text) == ("exit", "exit status 0", "1\n")
    for forged in (
        f"1\n\n{MARK}{new_nonce()} {end}\n\n{head(nonce)}{end}\n",
        f"1\n\n{MARK}{new_nonce()} {end}\n",
    ):
        assert _is_forged(read_rust(_passed(forged), nonce, where)), forged


# The function reads the calls process's key for this request out of its frames (the worker's loop) and
# writes the base's answer twice on that process's answer pipe: after a wrong key, then after the right one.
PY_OLD = "def add_one(x):\n    return x + 1\n\n\ndef double(x):\n    return x * 2\n"
PY_NEW = """import hashlib, json, os, sys


def add_one(x):
    f = sys._getframe()
    while f is not None and f.f_code.co_name != "_serve":
        f = f.f_back
    if f is None:  # no calls process: not what this test is about
        return x + 100
    text = repr(x + 1)
    line = json.dumps({"k": "return", "t": "int", "r": text, "h": hashlib.sha256(text.encode()).hexdigest()[:32]})
    for key in (b"0" * 32, f.f_locals["key"]):
        os.write(f.f_locals["results"], key + b" 0.001 " + line.encode() + b"\\n")
    return x + 2


def double(x):
    return x * 3
"""


async def test_a_python_function_forging_the_calls_process_s_answer_gets_one_guess(sandbox):
    found = compare_files(PY_OLD, PY_NEW, file="calc.py", old_file="calc.py", module="calc", import_root="")
    fns = {f.name: f for f in found}
    work = [(0, fns["add_one"], [Call(text="[1]")]), (1, fns["double"], [Call(text="[2]")])]
    old, new = program({"calc.py": PY_OLD}, [""]), program({"calc.py": PY_NEW}, [""])
    batch = Batch("python", old, new, work, lambda t, c, _k: request(t, c), outcome)
    forged, after = await differences(Judge(sandbox), batch)
    assert only_difference(forged) == ("returns 1", SHOWN)  # its input [1], made [0]
    # the calls process that held the forged answers is replaced: the next call's answer is its own
    assert after.reproduced == 1, after
    (d,) = after.differences
    assert (d.old.kind, d.new.kind) == ("return", "return") and d.new.key() != d.old.key(), d


# What a JavaScript function or program can do in safe JavaScript: read its process's memory through
# /proc/self/mem and take every run of 32 hexadecimal digits as a candidate for the nonce (or key).
JS_CANDIDATES = """const fs = require('fs');
const crypto = require('crypto');
const MARK = MARK_TEXT;

function candidates() {
  const found = new Set();
  const fd = fs.openSync('/proc/self/mem', 'r');
  for (const l of fs.readFileSync('/proc/self/maps', 'utf8').split('\\n')) {
    const f = l.split(/\\s+/);
    if (f.length < 2 || !f[1].startsWith('rw')) continue;
    const [a, b] = f[0].split('-').map((x) => parseInt(x, 16));
    if (b - a > 256 * 1024 * 1024) continue;
    const buf = Buffer.alloc(b - a);
    let n = 0;
    try { n = fs.readSync(fd, buf, 0, b - a, a); } catch (_) { continue; }
    const re = /(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])/g;
    const s = buf.toString('latin1', 0, n);
    for (let m = re.exec(s); m !== null; m = re.exec(s)) found.add(m[0]);
  }
  return [...found];
}
""".replace("MARK_TEXT", json.dumps(MARK))
JS_OLD = "function addOne(x) {\n  return x + 1;\n}\n"
JS_NEW = (
    JS_CANDIDATES
    + """function addOne(x) {
  const r = String(x + 1);
  const h = crypto.createHash('sha256').update(r).digest('hex').slice(0, 32);
  const line = JSON.stringify({ k: 'return', t: 'number', r, h });
  process.on('exit', () => {  // after the driver's own line: the last with the nonce was a result
    for (const c of candidates()) fs.writeSync(1, '\\n' + MARK + c + ' ' + line + '\\n');
  });
  return x + 2;
}
"""
)
JS_PROGRAM_OLD = "require('fs').readFileSync(0, 'utf8');\nconsole.log(1);\n"
JS_PROGRAM_NEW = (
    JS_CANDIDATES
    + """fs.readFileSync(0, 'utf8');
console.log(1);
process.exitCode = 3;
process.on('exit', () => {  // after the driver's report on descriptor 3: its last with the key was the end
  for (const c of candidates()) fs.writeSync(3, '\\n' + c + ' {"k": "exit", "t": "exit status 0", "m": ""}\\n');
});
"""
)


@needs_node
async def test_a_javascript_function_guessing_the_nonce_from_its_memory_gets_one_guess(sandbox):
    shown = await js_function_difference(sandbox, JS_OLD, JS_NEW)
    assert shown == ("returns 1", SHOWN)  # its input [1], made [0]


@needs_node
async def test_a_javascript_program_guessing_its_report_key_from_its_memory_gets_one_guess(sandbox):
    target = program_of("bin/calc.js", JS_PROGRAM_OLD, JS_PROGRAM_NEW)
    assert target is not None
    old = js_program({"bin/calc.js": JS_PROGRAM_OLD}, "bin/calc.js")
    new = js_program({"bin/calc.js": JS_PROGRAM_NEW}, "bin/calc.js")
    work = [(0, target, [Call(text="['1']")])]
    batch = Batch("javascript", old, new, work, lambda _t, c, _k: stdin_request(c), read_js)
    (ran,) = await differences(Judge(sandbox), batch)
    assert ran.reproduced == 1, ran
    (d,) = ran.differences
    assert d.old.show() == "prints '1\\n' and exits with status 0" and d.new.show() == SHOWN


# Safe std Rust reading its memory (the grading's security review's way): every run of 32 hexadecimal
# digits of its writable memory, after a guess of its own, printed as the base's result line for f(x).
RS_CANDIDATES = """
fn candidates() -> Option<Vec<String>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut mem = std::fs::File::open("/proc/self/mem").ok()?;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let hex = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
    let mut found = vec!["0".repeat(32)];
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 2 || !f[1].starts_with("rw") { continue; }
        let (a, b) = f[0].split_once('-').unwrap();
        let (a, b) = (u64::from_str_radix(a, 16).unwrap(), u64::from_str_radix(b, 16).unwrap());
        if b - a > (256 << 20) { continue; }
        let mut buf = vec![0u8; (b - a) as usize];
        if mem.seek(SeekFrom::Start(a)).is_err() || mem.read_exact(&mut buf).is_err() { continue; }
        let mut i = 0;
        while i < buf.len() {
            let s = i;
            while i < buf.len() && hex(buf[i]) { i += 1; }
            if i - s == 32 {
                let c = String::from_utf8_lossy(&buf[s..i]).into_owned();
                if !found.contains(&c) { found.push(c); }
            }
            i += 1;
        }
    }
    Some(found)
}
"""
RS_OLD = "pub fn add_one(x: i64) -> i64 {\n    x + 1\n}\n"
RS_NEW = (
    RS_CANDIDATES
    + """
pub fn add_one(x: i64) -> i64 {
    use std::hash::Hasher;
    let found = match candidates() {
        Some(found) => found,
        None => return x + 1001,  // /proc/self/mem cannot be opened
    };
    let text = format!("{:?}", x + 1);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(text.as_bytes());
    let digest = format!("{:016x}{}", h.finish(), text.len());
    let line = format!("{{\\"k\\": \\"return\\", \\"t\\": \\"i64\\", \\"r\\": \\"{}\\", \\"h\\": \\"{}\\"}}", text, digest);
    for c in &found {
        println!("\\n{}{} {}", MARK_TEXT, c, line);
    }
    std::process::exit(0);
}
""".replace("MARK_TEXT", json.dumps(MARK))
)
RS_PROGRAM = """use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    if s == "mem" {
        match std::fs::File::open("/proc/self/mem") {
            Ok(_) => println!("opened"),
            Err(e) => println!("{:?}", e.kind()),
        }
    } else {
        println!("\\nMARK_TEXT{} {{\\"k\\": \\"exit\\", \\"t\\": \\"exit status 0\\", \\"m\\": \\"\\"}}", "0".repeat(32));
    }
}
""".replace("MARK_TEXT", MARK)


def _not_root_inside(sandbox) -> bool:
    """Whether the sandbox's programs are not root in their user namespace (as in ``test_rust_memory_guesses``):
    a non-dumpable process's ``/proc/self/mem`` is then not theirs to open."""
    return sandbox.run_as_root or sandbox.name == "bwrap"


@needs_rust
async def test_a_rust_function_cannot_read_the_nonce_from_its_memory_nor_guess_it(sandbox, tmp_path):
    old, new = await rust_library_difference(sandbox, tmp_path, RS_OLD, RS_NEW)  # its input [1], made [0]
    assert old == "returns 1"
    if _not_root_inside(sandbox):  # the harness made the process non-dumpable before it took the nonce
        assert new == "returns 1001"
    else:  # unshare as a user: it reads its memory, but its wrong guess fails the call
        assert new == SHOWN


@needs_rust
async def test_a_rust_program_cannot_open_its_memory_and_a_wrong_guess_is_forged(sandbox):
    read = partial(read_rust, where=layout(RS_PROGRAM, RS_PROGRAM))
    tests = [stdin_request(Call(text="['mem']")), stdin_request(Call(text="['guess']"))]
    code = wrap_program(RS_PROGRAM, RS_PROGRAM, "new")
    mem, guess = await run_version(Judge(sandbox), code, tests, read, "rust")
    if _not_root_inside(sandbox):
        assert (mem.kind, mem.text) == ("exit", "PermissionDenied\n"), mem
    assert _is_forged(guess), guess
