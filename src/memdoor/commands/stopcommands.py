"""What ``memdoor review`` writes, kept from being read as GitHub Actions workflow commands.

The Actions runner reads every line a step writes to standard output and standard error as a possible
workflow command: ``::warning file=…::text``, ``::set-output name=…::value`` (after leading blanks), and
the legacy ``##[warning]text`` anywhere in a line. A review quotes the pull request (file names, code,
test output), which could then forge an annotation, a step's output or the end of a log group. So when
``GITHUB_ACTIONS`` is ``true``:

- the Markdown report and the command's messages are each written between ``::stop-commands::TOKEN``
  and ``::TOKEN::`` (TOKEN: 32 random hexadecimal digits, new for each stream and run), which the runner
  takes as "no command until TOKEN". Each stream has its own pair, and a stop on standard error is
  ended before the report is written: the runner reads the two streams apart (a batch's standard error
  first), so one's resume line must not be read inside the other's text;
- a stream that is a regular file (``> review.md``, ``2> errors.txt``) does not reach the log: nothing
  is added to it. A pipe (``| tee review.md``) may, so it gets the two lines;
- JSON and SARIF are never wrapped, wherever they go (a program reads them: ``> memdoor.sarif`` for
  ``upload-sarif``, ``| jq``). No line of theirs can start with ``::`` (JSON's own punctuation or a
  quoted string starts each, and a string's line breaks are escapes), and the one thing that could make
  a command, ``##[`` inside a string, is written ``#\\u0023[``: the same JSON value.

Outside Actions nothing is added or changed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import sys
from collections.abc import Iterator
from typing import TextIO


def active() -> bool:
    """Whether this runs as a GitHub Actions step (``GITHUB_ACTIONS=true``, as the runner sets it)."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def to_log(stream: TextIO) -> bool:
    """Whether ``stream`` may reach the runner's log: anything but a regular file."""
    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's capture): as a pipe
        return True


def new_token() -> str:
    return secrets.token_hex(16)


def wrapped(text: str, token: str) -> str:
    """``text`` between the stop line and the resume line of ``token``."""
    end = "\n" if text and not text.endswith("\n") else ""
    return f"::stop-commands::{token}\n{text}{end}::{token}::\n"


def report(text: str, fmt: str, stream: TextIO) -> str:
    """The report ``text`` (in ``fmt``) as it is to be written to ``stream``."""
    if not active():
        return text
    if fmt in ("json", "sarif"):
        return text.replace("##[", "#\\u0023[")
    return wrapped(text, new_token()) if to_log(stream) else text


def print_report(text: str, fmt: str) -> None:
    """Write the report to ``sys.stdout`` as :func:`report` makes it, and flush it. A stop
    :func:`stopped_stderr` holds open is ended first: the runner reads the two streams apart, so one's
    resume line must never fall inside the other's report."""
    if isinstance(sys.stderr, _Stopped):
        sys.stderr.resume()
    sys.stdout.write(report(text, fmt, sys.stdout))
    sys.stdout.flush()


class _Stopped:
    """A text stream that writes the stop line before its first text, and the resume line on
    :meth:`resume` (only when it wrote the stop line)."""

    def __init__(self, stream: TextIO):
        self.stream, self.token, self.at_line_start = stream, None, True

    def write(self, text: str) -> int:
        if text and self.token is None:
            self.token = new_token()
            self.stream.write(f"::stop-commands::{self.token}\n")
        if text:
            self.at_line_start = text.endswith("\n")
        return self.stream.write(text)

    def resume(self) -> None:
        """End the stop (a later write starts a new one, with a new token)."""
        if self.token is not None:
            self.stream.write(f"{'' if self.at_line_start else chr(10)}::{self.token}::\n")
            self.stream.flush()
            self.token, self.at_line_start = None, True

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def stopped_stderr() -> Iterator[None]:
    """Under Actions, with standard error reaching the log: everything written to ``sys.stderr`` inside
    is between one stop line and its resume line."""
    if not active() or not to_log(sys.stderr):
        yield
        return
    guard = _Stopped(sys.stderr)
    sys.stderr = guard  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stderr = guard.stream
        guard.resume()
