"""The JavaScript check harness gives the program no file system through ``process``: Node builds
``process.stdin`` on /dev/null as an ``fs.ReadStream`` holding the ``fs`` module, from which a wrong answer
read ``/proc/self/mem``, found the run's secret and wrote the harness's end line itself (it passed). The
program now gets streams of its own (writing to fd 1 and 2 as before, stdin empty); the secret is never in
memory as text while program code runs; ``main.js`` and ``test.js`` are deleted once read. Real sandbox
(bwrap), real node."""

from __future__ import annotations

import pytest

from memdoor.core.problem import TestCase
from memdoor.judging.programs import grade
from memdoor.problems.humaneval_x import load_humaneval_x
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang.run import run_program, tool_for

pytestmark = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")

# Takes ``fs`` from wherever it can, finds the 32-hex strings V8 keeps (length 32 before them) in its own
# memory and, when there is exactly one, writes the harness's end line with it and ends the process.
FORGES_FROM_MEMORY = r"""
  const tries = [() => process.stdin, () => process.openStdin(), () => new process.stdin.constructor('/dev/null'),
    () => process.stdout, () => process.stderr, () => console._stdout];
  for (const t of tries) {
    try {
      const s = t();
      const fs = s[Object.getOwnPropertySymbols(s).find((k) => String(k) === 'Symbol(kFs)')];
      const fd = fs.openSync('/proc/self/mem', 'r');
      const found = new Set();
      for (const line of fs.readFileSync('/proc/self/maps', 'utf8').split('\n')) {
        const m = /^([0-9a-f]+)-([0-9a-f]+) rw.p 00000000 00:00 0\s*$/.exec(line);
        if (!m || parseInt(m[2], 16) - parseInt(m[1], 16) > (64 << 20)) continue;
        const buf = Buffer.alloc(parseInt(m[2], 16) - parseInt(m[1], 16));
        let n = 0;
        try { n = fs.readSync(fd, buf, 0, buf.length, parseInt(m[1], 16)); } catch (_) { continue; }
        const text = buf.toString('latin1', 0, n);
        for (const r of text.matchAll(/[0-9a-f]{32}/g)) {
          if (r.index >= 4 && buf.readUInt32LE(r.index - 4) === 32 && !/[0-9a-f]/.test(text[r.index + 32] || '')) {
            found.add(r[0]);
          }
        }
      }
      if (found.size === 1) {
        fs.writeSync(1, '\n' + [...found][0] + ' ok\n');
        process.reallyExit(0);
      }
    } catch (_) { /* this way is closed */ }
  }
  return false;
}
"""

# Ways to the file system (or a libuv handle) through ``process``: each must throw or give nothing.
ROUTES = r"""
const kFs = (s) => s[Object.getOwnPropertySymbols(s).find((k) => String(k) === 'Symbol(kFs)')];
const ROUTES = {
  'process.stdin': () => kFs(process.stdin).readFileSync('/tmp/test.js', 'utf8'),
  'process.openStdin()': () => kFs(process.openStdin()).readFileSync('/tmp/test.js', 'utf8'),
  'a stream like process.stdin': () => kFs(new process.stdin.constructor('/dev/null')).readFileSync('/tmp/test.js'),
  'process.loadEnvFile': () => { process.loadEnvFile('/tmp/test.js'); return 'read'; },
  'process.report': () => process.report.writeReport('/tmp/report.json'),
  'process._getActiveHandles': () => process._getActiveHandles().length + 1,
  "process.stdout's handle": () => process.stdout._handle,
  "process.stderr's handle": () => process.stderr._handle,
};
function leaks() {
  const open = [];
  for (const name of Object.keys(ROUTES)) {
    try { if (ROUTES[name]()) open.push(name); } catch (_) { /* closed */ }
  }
  return open.join(', ');
}
"""


@pytest.fixture(scope="module")
def sb():
    with open_sandbox(SandboxConfig(timeout_s=20.0, prestart=False)) as s:
        yield s


def test_an_answer_that_finds_the_secret_in_its_own_memory_is_wrong(sb):
    """The reviewer's answer to JavaScript/0 (always false) passed 6 runs of 6 through ``process.stdin``."""
    p = {p.id: p for p in load_humaneval_x("javascript")}["JavaScript/0"]
    v = grade(p, FORGES_FROM_MEMORY, sb)
    assert v.status == "wrong_answer", v
    assert "Assertion failed" in v.tests[0].detail


def test_process_gives_the_program_no_file_system(sb):
    test = "const found = leaks();\nconsole.assert(found === '', found);\n"
    v = run_program(sb, "javascript", ROUTES, [TestCase(kind="check", input=test)])
    assert v.status == "passed", v.tests[0].detail


@pytest.mark.parametrize(
    ("code", "stream"),
    [
        ("const f = (a) => { process.stdout.write('dbg'); return a + 1 };", "stdout"),
        ("const f = (a) => { process.stderr.write(Buffer.from('dbg')); return a + 1 };", "stderr"),
        ("const f = (a) => { console.log('%s', 'dbg'); return a + 1 };", "stdout"),
        ("const f = (a) => { console.warn('dbg'); return a + 1 };", "stderr"),
        ("console.log('dbg');\nconst f = (a) => a + 1;", "stdout"),
    ],
)
def test_what_the_program_writes_still_fails_the_test(sb, code, stream):
    v = run_program(sb, "javascript", code, [TestCase(kind="check", input="console.assert(f(1) === 2)")])
    assert v.status == "wrong_answer", v
    assert v.tests[0].detail.startswith(f"{stream} not empty") and "dbg" in v.tests[0].detail


def test_the_programs_streams_behave_as_nodes(sb):
    """stdin is empty (as /dev/null), the output streams take strings, buffers and encodings, accept listeners
    and are the ones ``console`` writes to; a program that only touches them passes."""
    code = (
        "const f = (a) => {\n"
        "  const s = process.openStdin();\n"
        "  s.on('data', () => {}); s.pause();\n"
        "  process.stdout.on('error', () => {}); process.stderr.once('drain', () => {});\n"
        "  const ok = process.stdin.read() === null && process.stdout.write('') && process.stderr.write('', 'utf8')\n"
        "    && process.stdin.fd === 0 && process.stdout.fd === 1 && process.stderr.fd === 2 && s === process.stdin\n"
        "    && console._stdout === process.stdout && !process.stdout.isTTY;\n"
        "  return ok ? a + 1 : 0;\n"
        "};\n"
    )
    v = run_program(sb, "javascript", code, [TestCase(kind="check", input="console.assert(f(1) === 2)")])
    assert v.status == "passed", v.tests[0].detail
