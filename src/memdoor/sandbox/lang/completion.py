"""Did the test code run to its end? (issue 41, class 6.) HumanEval-X's official harnesses look only at the
exit status and the output, so a program that ends its process early (``process.exit(0)``,
``std::process::exit(0)``), swallows the test's failure (an exception handler or a panic hook that exits 0)
or disarms its assertions passes there. Here a test passes only when the harness has seen it complete: for
JavaScript the harness's end line carrying the run's secret (``js_harness``), for Rust libtest's own result
line for each expected test and its summary, and each test's completion line with the run's secret
(``rust_report``). A run that would pass the official rule but lacks that proof is a ``runtime_error`` whose
detail says so (:data:`OFFICIAL_PASSES`)."""

from __future__ import annotations

from memdoor.core.verdict import TestResult
from memdoor.sandbox.lang.process import CommandResult

OFFICIAL_PASSES = (
    "differs from the official harness, which would pass it (it looks only at the exit status and output)"
)


def strip_end_line(outcome: CommandResult, *accepted: str) -> str | None:
    """The harness's end line (one of ``accepted``, a prefix each), removed from ``outcome.stdout`` with the
    newline the harness writes before it; None (stdout unchanged) when stdout does not end with one."""
    text = outcome.stdout
    if not text.endswith(b"\n"):
        return None
    start = text.rfind(b"\n", 0, len(text) - 1)
    if start < 0:
        return None
    line = text[start + 1 : -1].decode(errors="replace")
    if not any(line.startswith(a) for a in accepted):
        return None
    outcome.stdout = text[:start]
    return line


def never_completed(seconds: float, why: str) -> TestResult:
    """The result of a run that ended with status 0 and nothing on its outputs, without the proof that its
    tests completed."""
    return TestResult(
        status="runtime_error",
        seconds=seconds,
        detail=f"{why}: the program ended the process or stopped the test before it completed; {OFFICIAL_PASSES}",
    )
