"""Untrusted text in a prompt: fenced with a delimiter the text cannot contain, so it stays data.

A Markdown fence closes only on a line of at least as many backticks as it opened with. The fence
here is one backtick longer than the longest run of backticks anywhere in the text (at least three),
so no line of the text can close it, whatever the text says: a pull request's diff, its files, its
test output. A name (a file's path) is an inline code span by the same rule (:func:`inline`).
"""

from __future__ import annotations

import re

_RUN = re.compile(r"`+")


def fence(text: str, info: str = "") -> str:
    """``text`` inside a backtick fence it cannot close (``info``: the language tag, e.g. ``diff``)."""
    longest = max((len(m) for m in _RUN.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def inline(text: str) -> str:
    """``text`` as an inline code span it cannot close (a path may hold backticks)."""
    longest = max((len(m) for m in _RUN.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"
