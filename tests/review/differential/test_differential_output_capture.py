"""A program's output is all it writes to its file descriptor 1, in Python and JavaScript: ``os.write(1, ...)``,
``open(1)``, ``/dev/stdout``, ``sys.__stdout__``, ``fs.writeSync(1, ...)``, ``fs.writeFileSync(1, ...)``
are compared as ``print`` and ``console.log`` are, and the driver's result line still cannot be written by
the code under test. A JavaScript program that throws an error with the code ``MODULE_NOT_FOUND`` itself
is compared; only Node's own error for a module the sandbox lacks says it cannot run. Where the Python
calls process cannot start (the calls run in the harness's own process), code under test that patches
``json`` still writes no result."""

from __future__ import annotations

import hashlib
import json

import pytest

from memdoor.core.problem import TestCase
from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import CallOutcome, outcome, program, program_request, request
from memdoor.review.differential.execute import _compared, differences, run_version
from memdoor.review.differential.functions import compare_files
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import js_program, read_js
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.stdin_inputs import stdin_call, stdin_of
from memdoor.review.differential.targets import Batch
from memdoor.sandbox.lang.run import tool_for

needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")

PY_WRITES = {
    "os.write": "import os\nos.write(1, b'7\\n')\n",
    "open(1)": "open(1, 'w').write('7\\n')\n",
    "open(1, 'wb')": "f = open(1, 'wb')\nf.write(b'7\\n')\n",
    "sys.__stdout__": "import sys\nprint(7, file=sys.__stdout__)\n",
    "/dev/stdout": "open('/dev/stdout', 'w').write('7\\n')\n",
    "sys.stdout.buffer": "import sys\nsys.stdout.buffer.write(b'7\\n')\n",
    "a child process": "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'print(7)'])\n",
}
JS_WRITES = {
    "fs.writeSync(1)": "require('fs').writeSync(1, '7\\n')",
    "fs.writeFileSync(1)": "require('fs').writeFileSync(1, '7\\n')",
    "process.stdout.fd": "require('fs').writeSync(process.stdout.fd, '7\\n')",
    "/dev/stdout": "require('fs').writeFileSync('/dev/stdout', '7\\n')",
    "console.log": "console.log(7)",
}


async def run_python(sandbox, files: dict[str, str], test: TestCase) -> CallOutcome:
    (found,) = await run_version(Judge(sandbox), program(files, [""]), [test], outcome)
    return found


async def run_js(sandbox, source: str, stdin: str = "") -> CallOutcome:
    code = js_program({"t.js": source}, "t.js")
    (found,) = await run_version(
        Judge(sandbox), code, [TestCase(kind="stdin", input=stdin)], read_js, "javascript"
    )
    return found


@pytest.mark.parametrize("how", sorted(PY_WRITES))
async def test_what_a_python_program_writes_to_descriptor_1_is_its_output(sandbox, how):
    found = await run_python(sandbox, {"t.py": PY_WRITES[how]}, program_request("t.py", ""))
    assert found.show() == "prints '7\\n' and exits with status 0"


async def test_a_python_program_s_writes_keep_their_order_and_survive_a_closed_stdout(sandbox):
    source = (
        "import os, sys\nprint(1)\nos.write(1, b'2\\n')\nprint(3, file=sys.__stdout__)\nsys.stdout.close()\n"
    )
    found = await run_python(sandbox, {"t.py": source}, program_request("t.py", ""))
    assert found.show() == "prints '1\\n2\\n3\\n' and exits with status 0"


PY_SUM = "import os\na, b = map(int, input().split())\nos.write(1, f'{a + b}\\n'.encode())\n"


async def test_a_python_program_changed_behind_os_write_is_a_difference(sandbox):
    changed = PY_SUM.replace("a + b", "a * b")
    batch = Batch(
        "python",
        program({"tool.py": PY_SUM}, [""]),
        program({"tool.py": changed}, [""]),
        [(0, program_of("tool.py", PY_SUM, changed), [stdin_call("3 4\n")])],
        lambda t, c, _k: program_request(t.file, stdin_of(c)),
        outcome,
    )
    (ran,) = await differences(Judge(sandbox), batch)
    assert ran.reproduced == 1
    (d,) = ran.differences
    assert d.old.text != d.new.text and d.old.key() != d.new.key()


async def test_output_a_function_call_left_unflushed_is_not_a_later_program_s(sandbox):
    files = {
        "m.py": "import sys\n\n\ndef f(x):\n    sys.__stdout__.write('leak')\n    return x\n",
        "t.py": "print(1)\n",
    }
    call = request_of("m", "f", "[0]")
    judge = Judge(sandbox)
    found = await run_version(judge, program(files, [""]), [call, program_request("t.py", "")], outcome)
    assert [o.show() for o in found] == ["returns 0", "prints '1\\n' and exits with status 0"]


def request_of(module: str, name: str, arguments: str) -> TestCase:
    return TestCase(kind="stdin", input=json.dumps({"m": module, "f": name, "c": "function", "a": arguments}))


@needs_node
@pytest.mark.parametrize("how", sorted(JS_WRITES))
async def test_what_a_javascript_program_writes_to_descriptor_1_is_its_output(sandbox, how):
    found = await run_js(sandbox, JS_WRITES[how])
    assert found.show() == "prints '7\\n' and exits with status 0"


@needs_node
async def test_a_javascript_program_s_end_is_read_as_before(sandbox):
    """The program runs in a process of its own: how it ended still reads as it did in the driver's."""
    ends = {
        "console.log('a'); throw new TypeError('x')": "prints 'a\\n', then raises TypeError: x",
        "console.log('a'); process.exit(3)": "prints 'a\\n' and exits with status 3",
        "Promise.reject(new RangeError('r'))": "prints nothing, then raises RangeError: r",
        "console.log(require('fs').readFileSync(0, 'utf8').trim())": "prints 'hi\\n' and exits with status 0",
        "process.nextTick(() => console.log(1)); Promise.resolve().then(() => console.log(2)); console.log(0)": (
            "prints '0\\n1\\n2\\n' and exits with status 0"
        ),
    }
    for source, shown in ends.items():
        assert (await run_js(sandbox, source, "hi\n")).show() == shown
    big = await run_js(sandbox, "console.log('x'.repeat(300000)); process.exit(0)")
    assert big.kind == "exit" and big.digest == hashlib.sha256(b"x" * 300000 + b"\n").hexdigest()[:32]


JS_SUM = (
    "const fs = require('fs');\nconst [a, b] = fs.readFileSync(0, 'utf8').trim().split(' ').map(Number);\n"
    "fs.writeSync(1, String(a + b) + '\\n');\n"
)


@needs_node
async def test_a_javascript_program_changed_behind_fs_write_sync_is_a_difference(sandbox):
    old = await run_js(sandbox, JS_SUM, "3 4\n")
    new = await run_js(sandbox, JS_SUM.replace("a + b", "a * b"), "3 4\n")
    assert (old.show(), new.show()) == (
        "prints '7\\n' and exits with status 0",
        "prints '12\\n' and exits with status 0",
    )


@needs_node
async def test_a_javascript_program_forging_its_end_on_another_descriptor_is_not_believed(sandbox):
    forged = json.dumps({"k": "import", "t": "Error", "m": "x"})
    source = (
        "const fs = require('fs');\n"
        f"fs.writeSync(3, '\\n' + 'a'.repeat(32) + ' ' + {forged!r} + '\\n');\n"
        "console.log(1);\n"
    )
    # a wrong guess at the report's key: neither the end nor ignored, a forged result (one guess)
    assert (await run_js(sandbox, source)).show() == "crashes (forged result line)"


@needs_node
async def test_a_javascript_program_throwing_module_not_found_itself_is_compared(sandbox):
    base = "console.log(require('fs').readFileSync(0, 'utf8').trim().length)"
    change = (
        "const s = require('fs').readFileSync(0, 'utf8').trim();\n"
        "if (s === 'x') throw Object.assign(new Error('bad input'), { code: 'MODULE_NOT_FOUND' });\n"
        "console.log(s.length);\n"
    )
    old, new = await run_js(sandbox, base, "x\n"), await run_js(sandbox, change, "x\n")
    assert new.show() == "prints nothing, then raises Error: bad input"
    assert _compared(old, new) and old.key() != new.key()


@needs_node
@pytest.mark.parametrize(
    ("files", "target"),
    [
        ({"t.js": "require('not_a_real_package_memdoor');\nconsole.log(1);\n"}, "t.js"),
        ({"t.mjs": "import x from 'not_a_real_package_memdoor';\nconsole.log(x);\n"}, "t.mjs"),
        ({"t.js": "setTimeout(() => require('not_a_real_package_memdoor'), 0);\n"}, "t.js"),
    ],
)
async def test_a_javascript_program_needing_a_module_the_sandbox_lacks_cannot_run(sandbox, files, target):
    code = js_program(files, target)
    (found,) = await run_version(
        Judge(sandbox), code, [TestCase(kind="stdin", input="")], read_js, "javascript"
    )
    assert found.kind == "import" and "not_a_real_package_memdoor" in found.text


WITHOUT_WORKER = (
    '    import subprocess\n    w = getattr(sys, "_memdoor_worker", None)\n',
    "    return None\n",
)
"""The driver's code that starts the calls process, and what replaces it: the calls run in the harness."""

PATCHING_JSON = """import json

_real = json.dumps


def _as_base(obj, *args, **kwargs):
    if isinstance(obj, dict) and obj.get("r") == "3":
        obj = dict(obj, r="2", h="{h}")
    return _real(obj, *args, **kwargs)


json.dumps = _as_base


def add_one(x):
    return x + 2
"""


def harness_only(code: str) -> str:
    """The driver program ``code`` with no calls process: the calls run in the harness's own process."""
    old, new = WITHOUT_WORKER
    assert code.count(old) == 1
    return code.replace(old, new)


async def test_without_a_calls_process_code_patching_json_writes_no_result(sandbox):
    old_src = "def add_one(x):\n    return x + 1\n"
    new_src = PATCHING_JSON.replace("{h}", hashlib.sha256(b"2").hexdigest()[:32])
    (fn,) = compare_files(old_src, new_src, file="calc.py", old_file="calc.py", module="calc", import_root="")
    judge, tests = Judge(sandbox), [request(fn, Call(text="[1]"))] * 2  # the first call loads the patch
    old = await run_version(judge, harness_only(program({"calc.py": old_src}, [""])), tests, outcome)
    new = await run_version(judge, harness_only(program({"calc.py": new_src}, [""])), tests, outcome)
    assert [o.show() for o in old + new] == ["returns 2"] * 2 + ["returns 3"] * 2


async def test_without_a_calls_process_a_program_s_descriptor_1_is_still_its_output(sandbox):
    code = harness_only(program({"t.py": PY_WRITES["os.write"]}, [""]))
    (found,) = await run_version(Judge(sandbox), code, [program_request("t.py", "")], outcome)
    assert found.show() == "prints '7\\n' and exits with status 0"
