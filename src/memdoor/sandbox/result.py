"""One test's result from the harness's report of it: the status, the time, the output compared.

The expected output never enters the sandbox: the harness streams the candidate's raw result (stdout text,
or the exact encoding of a returned value) and it is compared here (``memdoor.sandbox.compare``). The
report comes from the sandbox, where the candidate could have forged it: :func:`judge_safely` never raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdoor.core.verdict import Status, TestResult
from memdoor.sandbox import compare
from memdoor.sandbox.config import SandboxConfig

if TYPE_CHECKING:
    from memdoor.core.problem import TestCase


def judge_safely(
    config: SandboxConfig, test: TestCase, head: dict, payload: bytes, elapsed: float
) -> TestResult:
    """:func:`judge`, with an unreadable report the candidate's ``runtime_error``."""
    # The stream comes from the sandbox, where the candidate could have forged it: never trust it.
    try:
        return judge(config, test, head, payload, elapsed)
    except Exception as e:
        return TestResult(status="runtime_error", detail=f"unreadable result ({type(e).__name__})")


def judge(config: SandboxConfig, test: TestCase, head: dict, payload: bytes, elapsed: float) -> TestResult:
    """The result of one test from the harness's report; ``elapsed`` is the supervisor's own measure."""
    c = config
    reported = head.get("t")
    seconds = float(reported) if isinstance(reported, int | float) and 0 <= reported <= elapsed else elapsed
    status = head.get("status")
    detail = str(head.get("detail", ""))[:500]
    if status != "ok":
        bad: Status = status if status in ("memory_limit", "time_limit") else "runtime_error"
        return TestResult(status=bad, seconds=seconds, detail=detail)
    if head.get("overflow"):
        return TestResult(
            status="wrong_answer", seconds=seconds, detail=f"output exceeds {c.max_output_bytes} bytes"
        )
    if test.kind == "check":
        return TestResult(status="passed", seconds=seconds)
    if test.kind == "stdin":
        text = payload.decode("utf-8", "surrogatepass")
        shown = compare.keep(text, c.keep_output_chars)
        if test.output is None:
            return TestResult(status="passed", seconds=seconds, output=shown)
        ok, why = compare.stdin_matches(text, test.output)
        return TestResult(
            status="passed" if ok else "wrong_answer", seconds=seconds, output=shown, detail=why
        )
    try:
        value = compare.decode_value(payload)
    except ValueError as e:
        return TestResult(status="runtime_error", seconds=seconds, detail=str(e))
    shown = compare.keep(compare.value_text(value, payload), c.keep_output_chars)
    if test.output is None:
        return TestResult(status="passed", seconds=seconds, output=shown)
    ok, why = compare.functional_matches(value, test.output)
    return TestResult(status="passed" if ok else "wrong_answer", seconds=seconds, output=shown, detail=why)
