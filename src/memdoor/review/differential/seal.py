"""Which lines of a driver's output are its results: those that carry the batch's nonce.

The code under test runs beside the driver (Python: in a process the driver starts; JavaScript and Rust:
in the driver's own process) and may print anything, a line that starts with :data:`MARK` too. So each
test's standard input starts with a line holding a random nonce, fresh for each batch (:func:`new_nonce`)
and shared by both versions and their runs, so that a version's output is the same text in every run; the
driver reads that line, and takes it out of the input, before any code under test is loaded, and prints
its result after :func:`head`. A line with the bare marker is output like any other; a line shaped like a
result line (the marker, then 32 hexadecimal digits) whose value is not the nonce is a guess at it
(:func:`forged`): that call's or program's outcome is then a crash, :data:`FORGED`, never its output nor
its result, so code that can read candidates for the nonce out of its process's memory gets one guess, as
the grader's Rust harness gives (``sandbox/lang/rust_report.py``). The drivers' keyed answers (the Python
calls process's, a Node program's report) follow the same rule. The nonce is in no file, argument or
environment variable the code under test can read; code that reads or patches the driver's own process
could still find it or bend a result (docs/review.md).
"""

from __future__ import annotations

import hashlib
import re
import secrets

from memdoor.core.problem import TestCase

MARK = "@@memdoor-differential@@ "
"""Starts every result line, before its nonce."""
_NONCE = re.compile(r"[0-9a-f]{32}")
_SHAPED = re.compile(re.escape(MARK) + r"([0-9A-Fa-f]{32})(?![0-9A-Fa-f])")
"""A result line's start, with any nonce-shaped value (:func:`forged`)."""
FORGED = "forged result line"
"""The crash text of a call or program whose output held a line shaped like a result line with a value
that is not the run's nonce (:func:`forged`), or of a keyed answer with another key."""
FORGED_DIGEST = hashlib.sha256(FORGED.encode("ascii")).hexdigest()[:32]
"""What a forged outcome is compared by: the same on both versions and in every run, another crash's not."""


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


def forged(output: str, nonce: str) -> bool:
    """Whether ``output`` holds a line shaped like a result line (:data:`MARK` at its start, then 32
    hexadecimal digits, then no more) whose value is not ``nonce``: a guess at it, which makes the outcome
    :data:`FORGED` whatever the other lines say. Lines as :func:`results` reads them; ValueError as
    :func:`head`'s."""
    head(nonce)
    for line in output.splitlines():
        m = _SHAPED.match(line)
        if m is not None and m.group(1) != nonce:
            return True
    return False
