"""The review's test stage: the test command on the base, then on the changed copy, compared test by test.

The base comes first. When its run shows that the tests did not run there — the command not found
(shell exit 126/127), pytest's exit 2–5 (interrupted, internal error, usage error, no test collected),
a runner whose output names no failing test although the command failed (a build error), a time or
memory limit — the stage stops and the review is **incomplete**: nothing is blamed on the change.

Otherwise each test that fails after the change and did not fail on the base is a finding (severity
high, kind bug) naming the test, with its failure text and the changed lines; tests that already fail
on the base are listed as pre-existing. A change that breaks the run itself — the changed code's run
shows what would have stopped the stage on the base (a time or memory limit, pytest's exit 2–5, a
runner that failed without naming a failing test), or no readable runner output where the base's was
readable — is a finding too, whatever failed on the base: never an empty result. Per-test results come
from :mod:`memdoor.review.testresults`; with a runner it cannot read on either side, the exit statuses
alone are compared (base passed, change fails: one finding for the command). No model is asked.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.core.errors import ReviewInputError
from memdoor.review.consensus import Group
from memdoor.review.diff import FileDiff
from memdoor.review.repo import git
from memdoor.review.testresults import TestFailure
from memdoor.review.testrun import COPY_FAILED, TestRun
from memdoor.review.testsight import first_word

PYTEST_EXITS = {
    2: "interrupted (a test file failed to import or collect)",
    3: "an internal error",
    4: "a usage error (bad options or paths)",
    5: "no test was collected",
}
TAIL_LINES = 12
_MISSING = re.compile(r"No module named [^\n]+|Cannot find module [^\n]+")
_SOME_PASSED = re.compile(r"\b[1-9]\d* passed\b|^# pass [1-9]|^ok \d+ - |\.\.\. ok$", re.MULTILINE)
_NOT_FOUND = re.compile(  # the shell's own words: dash's `sh: 1: X: not found`, bash's `X: command not found`
    r"^(?:\S*/)?(?:sh|dash|bash|ash|zsh|ksh)(?:: \d+: [^\s:]+: not found|(?:: line \d+)?: [^\s:]+: command not found)\s*$",
    re.MULTILINE,
)


class TestStage(BaseModel):
    """The test command on base and head, compared."""

    __test__ = False

    base: TestRun | None = Field(default=None, description="The command on the base (before the change).")
    head: TestRun | None = Field(default=None, description="The command on the changed code.")
    findings: list[Group] = Field(default_factory=list, description="Tests the change breaks.")
    pre_existing: list[TestFailure] = Field(default_factory=list, description="Tests failing on the base.")
    unusable: str | None = Field(default=None, description="Why the tests could not run on the base.")


def expected_runner(command: str) -> str | None:
    """The runner a command names: pytest, unittest, cargo or node (``node --test``); None otherwise."""
    word = (first_word(command) or "").rsplit("/", 1)[-1]
    padded = f" {command} "
    if "pytest" in word or " -m pytest " in padded:
        return "pytest"
    if " -m unittest " in padded:
        return "unittest"
    if word == "cargo" and " test " in padded:
        return "cargo"
    if word == "node" and " --test " in padded:
        return "node"
    return None


def tail(run: TestRun, lines: int = TAIL_LINES) -> str:
    return "\n".join(run.output.strip().splitlines()[-lines:])


def base_problem(run: TestRun) -> str | None:
    """Why the base run shows that the tests did not run (None: they ran, passing or not)."""
    code = run.exit_code
    if run.timed_out:
        return "it did not finish within the time limit"
    if run.memory_exceeded:
        return "it ran out of memory"
    if code == COPY_FAILED and "could not be copied" in run.output:
        return _last_line(run)  # the sandbox's line, naming the file the copy failed on
    if code in (126, 127) or (code and _NOT_FOUND.search(run.output)):
        return "the command was not found or could not be executed"
    runner = expected_runner(run.command)
    if code in PYTEST_EXITS and runner == "pytest":
        return f"pytest exit {code}: {PYTEST_EXITS[code]}"
    if code and runner is not None and run.results.runner != runner:
        return f"its output shows no {runner} run ({_last_line(run)})"
    missing = _MISSING.search(run.output)
    if code and missing and not _SOME_PASSED.search(run.output):  # an import error before any test passed
        return f"a module it needs is missing ({missing.group(0).strip()})"
    if code and run.results.runner is not None and not run.results.failed:
        return f"it failed (exit {code}) without a failing {run.results.runner} test: the tests did not build or run"
    return None


def _last_line(run: TestRun) -> str:
    lines = run.output.strip().splitlines()
    return lines[-1][:200] if lines else "no output"


def _why(run: TestRun, why: str) -> str:
    """The command, its exit code and why, with its output's last line."""
    code = "no exit code" if run.exit_code is None else f"exit {run.exit_code}"
    last = _last_line(run)
    ends = "" if last in why or last == "no output" else f"; its output ends: {last}"
    return f"`{run.command}` ({code}): {why}{ends}"


def unusable_reason(run: TestRun, why: str) -> str:
    """One line: the command, its exit code and why (the last lines of its output go with it)."""
    return f"the tests cannot run on the base: {_why(run, why)}"


def broken_run(base: TestRun, head: TestRun) -> str | None:
    """Why the changed code's run shows that the tests did not run (None: they ran, passing or not).

    ``base`` is a usable run (:func:`base_problem` found nothing): what would have stopped the stage
    there is the change's doing here, and so is output no runner can be read from where the base's
    could."""
    why = base_problem(head)
    if why is None and base.results.runner is not None and head.results.runner != base.results.runner:
        why = f"its output shows no {base.results.runner} results, as the base's did"
    return why


def changed_lines(files: list[FileDiff]) -> list[tuple[str, int, int]]:
    """(file, first, last) new-file lines of each hunk, for a finding's location and message."""
    out = []
    for f in files:
        if f.deleted:
            continue
        for h in f.hunks:
            added = h.added()
            first, last = (added[0], added[-1]) if added else (h.new_start, h.new_start)
            out.append((f.path, max(1, first), max(1, last)))
    return out


def _where(files: list[FileDiff]) -> tuple[str, int, int, str]:
    spots = changed_lines(files)
    if not spots:
        return (files[0].path if files else "-", 1, 1, "")
    text = ", ".join(f"{p}:{a}" + (f"-{b}" if b != a else "") for p, a, b in spots[:8])
    path, first, last = spots[0]
    return path, first, last, text


def regression(name: str, text: str, files: list[FileDiff], *, new_run: bool = False) -> Group:
    """The finding for a test the change breaks: severity high, located at the first changed lines."""
    path, first, last, spots = _where(files)
    what = f"the test command `{name}`" if new_run else f"test `{name}`"
    message = f"{what} passes on the base and fails after the change (changed lines: {spots or '-'})"
    if text.strip():
        message += f":\n{text.strip()}"
    return Group(file=path, line=first, end_line=last, severity="high", kind="bug", message=message,
                 agents=[], confidence=1.0, verified=True, source="tests", test=name)  # fmt: skip


def broken(head: TestRun, why: str, files: list[FileDiff]) -> Group:
    """The finding for a change that breaks the test run itself (severity high)."""
    path, first, last, spots = _where(files)
    message = f"the change breaks the test run: {_why(head, why)} (changed lines: {spots or '-'})"
    if tail(head):
        message += f":\n{tail(head)}"
    return Group(file=path, line=first, end_line=last, severity="high", kind="bug", message=message,
                 agents=[], confidence=1.0, verified=True, source="tests")  # fmt: skip


def compare(base: TestRun, head: TestRun, files: list[FileDiff]) -> TestStage:
    """Findings and pre-existing failures of two runs, the base's usable (:func:`base_problem` None)."""
    stage = TestStage(base=base, head=head, pre_existing=list(base.results.failed))
    if head.passed:
        return stage
    same_runner = head.results.runner is not None and head.results.runner == base.results.runner
    if same_runner and head.results.failed:
        before = base.results.names()
        stage.findings = [
            regression(f.name, f.text, files) for f in head.results.failed if f.name not in before
        ]
    why = broken_run(base, head)
    if why is not None:  # a pre-existing failure on the base never hides a run the change broke
        stage.findings.append(broken(head, why, files))
    elif not same_runner and base.passed:  # an unknown runner on both sides: compare exit statuses
        stage.findings = [regression(head.command, f"{head.outcome}\n{tail(head)}", files, new_run=True)]
    return stage


def base_copy(changed_copy_dir: Path, diff_text: str) -> None:
    """Turn a copy of the changed tree into the base: the diff applied in reverse (``git apply -R``)."""
    done = git(
        ["apply", "--reverse", "--whitespace=nowarn", "-"], changed_copy_dir, stdin=diff_text, alone=True
    )
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["git apply --reverse failed"])[0]
        raise ReviewInputError(f"the base cannot be rebuilt from the changed copy: {why}")
