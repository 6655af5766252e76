"""Base against head, test by test: which failures are the change's, which are pre-existing, and when
the base shows the tests did not run at all (runs as TestRun records; real runs are in
test_teststage_projects.py)."""

from __future__ import annotations

from review_helpers import BUGGY, diff_of

from memdoor.review.diff import parse_diff
from memdoor.review.testresults import parse_results
from memdoor.review.testrun import TestRun
from memdoor.review.teststage import base_problem, compare


def run(command: str, code: int | None, output: str) -> TestRun:
    return TestRun(command=command, passed=code == 0, exit_code=code, timed_out=code is None,
                   output=output, results=parse_results(output))  # fmt: skip


def summary(*failed: str, passed: int = 3) -> str:
    lines = [f"FAILED t.py::{name} - assert 1 == 2" for name in failed]
    return "\n".join([*lines, f"{len(failed)} failed, {passed} passed in 0.1s"]) + "\n"


def test_only_new_failures_are_findings_and_old_ones_are_pre_existing(repo):
    files = parse_diff(diff_of(repo, "calc.py", BUGGY))
    base = run("pytest -q", 1, summary("test_old"))
    head = run("pytest -q", 1, summary("test_old", "test_new"))
    stage = compare(base, head, files)
    assert [f.name for f in stage.pre_existing] == ["t.py::test_old"]
    (g,) = stage.findings
    assert "t.py::test_new" in g.message and "test_old" not in g.message
    assert (g.file, g.line, g.severity, g.agents) == ("calc.py", 6, "high", [])
    assert compare(base, run("pytest -q", 1, summary("test_old")), files).findings == []


def test_an_unknown_runner_compares_exit_statuses(repo):
    files = parse_diff(diff_of(repo, "calc.py", BUGGY))
    ok, bad = run("make test", 0, "all good\n"), run("make test", 2, "make: *** [test] Error 2\n")
    (g,) = compare(ok, bad, files).findings
    assert "make test" in g.message and "Error 2" in g.message
    assert compare(bad, bad, files).findings == []  # failing before and after: nothing blamed


def test_when_the_base_shows_the_tests_did_not_run():
    assert "not found" in base_problem(run("no-such-tool", 127, "sh: 1: no-such-tool: not found\n"))
    assert "no test was collected" in base_problem(run("python3 -m pytest -q", 5, "no tests ran in 0.01s\n"))
    assert "no pytest run" in base_problem(
        run("python3 -m pytest", 1, "/usr/bin/python3: No module named pytest\n")
    )
    build = base_problem(
        run("cargo test", 101, "error[E0425]: cannot find value\nerror: could not compile `x`\n")
    )
    assert "no cargo run" in build and "could not compile" in build
    assert "time limit" in base_problem(run("pytest", None, ""))
    assert "missing" in base_problem(run("./run.sh", 1, "ModuleNotFoundError: No module named 'yaml'\n"))
    node = "# Error: Cannot find module 'tinylib'\nnot ok 1 - /tmp/repo/test/calc.test.js\n1..1\n# pass 0\n# fail 1\n"
    assert "Cannot find module 'tinylib'" in base_problem(run("node --test", 1, node))  # no test ran
    assert base_problem(run("python3 -m pytest -q", 1, summary("test_old"))) is None  # ran: a failing test
    some = "# Error: Cannot find module 'x'\nnot ok 1 - a\nok 2 - b\n1..2\n# pass 1\n# fail 1\n"
    assert base_problem(run("node --test", 1, some)) is None  # one test failed on it, others ran
    assert base_problem(run("make test", 2, "make: *** [test] Error 2\n")) is None  # unknown: it ran
