"""Which lines of a driver's output are its results: those that carry the batch's nonce.

The code under test runs beside the driver (Python: in a process the driver starts; JavaScript and Rust:
in the driver's own process) and may print anything, a line that starts with :data:`MARK` too. So each
test's standard input starts with a line holding a random nonce, fresh for each batch (:func:`new_nonce`)
and shared by both versions and their runs, so that a version's output is the same text in every run; the
driver reads that line, and takes it out of the input, before any code under test is loaded, and prints
its result after :func:`head`. A line with the bare marker and another nonce, or none, is output like any
other. The nonce is in no file, argument or environment variable the code under test can read; code that
reads or patches the driver's own process could still find it or bend a result (docs/review.md).
"""

from __future__ import annotations

import re
import secrets

from memdoor.core.problem import TestCase

MARK = "@@memdoor-differential@@ "
"""Starts every result line, before its nonce."""
_NONCE = re.compile(r"[0-9a-f]{32}")


def new_nonce() -> str:
    """A fresh random nonce: 32 hexadecimal digits."""
    return secrets.token_hex(16)


def sealed(test: TestCase, nonce: str) -> TestCase:
    """The test with the nonce on the first line of its standard input (the driver takes it out)."""
    return test.model_copy(update={"input": nonce + "\n" + test.input})


def head(nonce: str) -> str:
    """How a result line of a run given ``nonce`` starts. ValueError when ``nonce`` is none of
    :func:`new_nonce` (an empty one would make any marked line a result)."""
    if _NONCE.fullmatch(nonce) is None:
        raise ValueError("not a nonce of new_nonce()")
    return MARK + nonce + " "


def results(output: str, nonce: str) -> list[str]:
    """The text after :func:`head` of each result line of ``output``, in order."""
    start = head(nonce)
    return [line[len(start) :] for line in output.splitlines() if line.startswith(start)]
