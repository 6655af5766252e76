"""What ``memdoor review`` writes, kept from being read as GitHub Actions workflow commands.

The Actions runner reads every line a step writes to standard output and standard error as a possible
workflow command: ``::warning file=…::text``, ``::set-output name=…::value`` (after leading blanks), and
the legacy ``##[warning]text`` anywhere in a line; ``::stop-commands::TOKEN`` stops them for the whole
step until a line ``::TOKEN::``. A review quotes the pull request (file names, code, test output), which
could then forge an annotation, a step's output or the end of a log group. The runner reads the two
streams on separate tasks, so the order in which it takes their lines is not the order they were
written: a stop on one stream and a resume on the other can fall either way round. So when
``GITHUB_ACTIONS`` is ``true``:

- the Markdown report on standard output is written, in one piece, between ``::stop-commands::TOKEN``
  and ``::TOKEN::``. TOKEN (32 random hexadecimal digits) is made for that report, after it, and is
  written nowhere else, so no text of the pull request can end the stop early. The pair is on standard
  output only: a line of standard error the runner takes inside it is simply not run;
- standard error is never wrapped. Every line written to ``sys.stderr`` while the command runs (its
  messages, a traceback) is escaped on its own (:func:`escaped`): a line that starts, after blanks, with
  ``::`` gets a ``\\`` before the ``::``, and a ``##[`` is written ``##\\[``. No line of it is then a
  command, whatever it falls between, and it still reads as written;
- an exception memdoor does not expect is caught as well (:func:`unexpected`): its traceback, escaped
  like any other line, then ``memdoor: unexpected error: <type>: <first line>``, exit 1, as an uncaught
  exception exits;
- a stream that is a regular file (``> review.md``, ``2> errors.txt``) does not reach the log: nothing is
  added to it or changed in it. A pipe (``| tee review.md``) may, so it is treated as the log;
- JSON and SARIF are never wrapped, wherever they go (a program reads them: ``> memdoor.sarif`` for
  ``upload-sarif``, ``| jq``). No line of theirs can start with ``::`` (JSON's own punctuation or a
  quoted string starts each, and a string's line breaks are escapes), and the one thing that could make
  a command, ``##[`` inside a string, is written ``#\\u0023[``: the same JSON value.

Outside Actions nothing is added or changed, and an unexpected exception goes on as it did.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import sys
import threading
import traceback
from collections.abc import Iterator
from typing import TextIO

UNEXPECTED = 1  # what Python exits with on an uncaught exception

# Blanks the runner's TrimStart (.NET's char.IsWhiteSpace) skips are all str.isspace() too; these are
# not, but an older Unicode table counted them, so a "::" after them is escaped as well.
_MORE_BLANKS = "\u180e\u200b\u2060\ufeff"
_LINE_ENDS = ("\n", "\r")


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
    """Write the report to ``sys.stdout`` as :func:`report` makes it (one write: the stop line, the
    report and the resume line go out together), and flush it."""
    sys.stdout.write(report(text, fmt, sys.stdout))
    sys.stdout.flush()


def escaped(text: str) -> str:
    """``text`` with no line either of the runner's parsers reads as a command: ``\\`` before a ``::``
    that starts a line after blanks, ``##\\[`` for ``##[``. Lines are split wherever
    :meth:`str.splitlines` splits, more places than the runner's (``\\n``, ``\\r``, ``\\r\\n``), so a
    line start of the runner's is one of them."""
    out = []
    for line in text.splitlines(keepends=True):
        lead = 0
        while lead < len(line) and (line[lead].isspace() or line[lead] in _MORE_BLANKS):
            lead += 1
        if line.startswith("::", lead):
            line = f"{line[:lead]}\\{line[lead:]}"
        out.append(line.replace("##[", "##\\["))  # leaves no "##[": the "[" follows a "\"
    return "".join(out)


class _Escaping:
    """A text stream that writes whole lines, each through :func:`escaped`; the rest of a line waits for
    its end (or for :meth:`close_line`)."""

    def __init__(self, stream: TextIO):
        self.stream, self.pending, self.lock = stream, "", threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            self.pending += text
            cut = max(self.pending.rfind(end) for end in _LINE_ENDS) + 1
            if cut:
                self.stream.write(escaped(self.pending[:cut]))
                self.pending = self.pending[cut:]
        return len(text)

    def close_line(self) -> None:
        """Write what is left of a line, ended."""
        with self.lock:
            if self.pending:
                self.stream.write(escaped(self.pending) + "\n")
                self.pending = ""
            self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def escaped_stderr() -> Iterator[None]:
    """Under Actions, with standard error reaching the log: every line written to ``sys.stderr`` inside
    is escaped (:func:`escaped`); never wrapped in a stop, which the runner could take on either side of
    standard output's."""
    if not active() or not to_log(sys.stderr):
        yield
        return
    guard = _Escaping(sys.stderr)
    sys.stderr = guard  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stderr = guard.stream
        guard.close_line()


def unexpected(error: Exception) -> int:
    """Print an exception memdoor did not expect to ``sys.stderr`` (escaped there by
    :func:`escaped_stderr`): its traceback, then one line naming it. Exit code :data:`UNEXPECTED`."""
    traceback.print_exception(error, file=sys.stderr)
    lines = str(error).splitlines()
    message = f"{lines[0]} […]" if len(lines) > 1 else "".join(lines)
    print(f"memdoor: unexpected error: {type(error).__name__}: {message}", file=sys.stderr)
    return UNEXPECTED
