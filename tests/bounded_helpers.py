"""Bounding the work of the request readers without timing them: the lines of Python a reader runs, counted
and cut off past a limit; and a call run in a new interpreter that must end (a regular expression holds the
interpreter's lock and cannot be interrupted, so a search reading a text again and again is run apart)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any

ENDS_WITHIN_S = 60.0
"""Generous: the readers read a few hundred KB in well under a second; a search whose work grows with the
square of that (or its cube) takes many minutes, or hours."""


class TooManyLines(BaseException):
    """Past the limit (not an Exception: no ``except`` of the code counted may catch it)."""


def lines_run(module: ModuleType, limit: int, call: Callable[[], Any]) -> tuple[Any, int]:
    """``(call(), lines of ``module`` it ran)``; TooManyLines as soon as they pass ``limit``."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any):
        nonlocal count
        if event == "line":
            count += 1
            if count > limit:
                raise TooManyLines(f"more than {limit:,} lines of {module.__name__} run")
        return local

    def calls(frame: FrameType, event: str, arg: Any):
        return local if frame.f_code.co_filename == module.__file__ else None

    before = sys.gettrace()
    sys.settrace(calls)
    try:
        return call(), count
    finally:
        sys.settrace(before)


def ends(code: str, seconds: float = ENDS_WITHIN_S) -> None:
    """Run ``code`` (Python statements) in a new interpreter: AssertionError when it is still running after
    ``seconds``, or fails."""
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running after {seconds:g} s: {code}") from None
    assert done.returncode == 0, done.stderr[-2000:]
