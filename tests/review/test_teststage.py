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


def test_a_change_that_breaks_the_run_is_a_finding_even_when_a_test_already_failed(repo):
    """Issue 45 (security review): with a test already failing on the base, a change that makes the run
    hang, run out of memory, crash the runner or break collection (no summary) was no finding at all."""
    files = parse_diff(diff_of(repo, "calc.py", BUGGY))
    base = run("python3 -m pytest -q", 1, summary("test_old"))
    oom = run("python3 -m pytest -q", 137, "Killed\n").model_copy(update={"memory_exceeded": True})
    heads = {
        "time limit": run("python3 -m pytest -q", None, "t.py ..."),
        "out of memory": oom,
        "no pytest run": run("python3 -m pytest -q", 139, "Fatal Python error: Segmentation fault\n"),
        "pytest exit 4": run("python3 -m pytest -q", 4, "ImportError while loading conftest '/tmp/repo/conftest.py'.\n"),
    }  # fmt: skip
    for says, head in heads.items():
        stage = compare(base, head, files)
        (g,) = stage.findings
        assert g.message.startswith("the change breaks the test run: `python3 -m pytest -q`"), g.message
        assert says in g.message and g.severity == "high" and (g.file, g.line) == ("calc.py", 6)
        assert [f.name for f in stage.pre_existing] == ["t.py::test_old"]
    script = run("./run-tests.sh", 1, summary("test_old"))  # a runner the command does not name
    (g,) = compare(script, run("./run-tests.sh", 1, "Traceback (most recent call last):\n"), files).findings
    assert "shows no pytest results" in g.message
    ok = run("python3 -m pytest -q", 0, "3 passed in 0.1s\n")
    (g,) = compare(ok, heads["time limit"], files).findings  # a passing base: the same finding
    assert "breaks the test run" in g.message and "time limit" in g.message


def test_not_found_is_the_shells_message_not_any_line_ending_so():
    """An HTTP 404 line in a failing run is not "command not found" (issue 45, security review)."""
    http = "FAILED t.py::test_get - requests.HTTPError\nGET /api/users/7: not found\n1 failed in 0.2s\n"
    assert base_problem(run("make test", 1, http)) is None
    assert base_problem(run("make test", 2, "/bin/sh: 1: pytest: not found\nmake: *** [test] Error 127\n"))
    assert base_problem(run("make test", 2, "bash: line 1: pytest: command not found\n"))
    assert "not found" in base_problem(run("tox", 127, ""))
