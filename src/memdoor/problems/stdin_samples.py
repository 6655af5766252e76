"""Standard-input examples in a request: ``Input`` / ``Output`` (or ``Sample Input 1`` / ``Sample
Output 1``) blocks, as tests of a program that reads standard input."""

from __future__ import annotations

import re

from memdoor.core.problem import TestCase
from memdoor.problems.request_lines import ASSIGN, MARK, plain


def _block_after(lines: list[str], start: int) -> tuple[str | None, int]:
    """The example text starting at ``lines[start]``: a fenced block, or the lines up to a blank line
    or the next marker. Returns (text or None, index after it)."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None, i
    if lines[i].strip().startswith("```"):
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i])
            i += 1
        return "\n".join(body), i + 1
    body = []
    while i < len(lines) and lines[i].strip() and not MARK.match(plain(lines[i])):
        body.append(lines[i].strip())
        i += 1
    return ("\n".join(body) if body else None), i


def _prose(block: str) -> bool:
    """A sentence rather than program output: a sample with an empty output is followed by the
    statement's explanation ("In this example, the final S is empty."), which must not become a test."""
    first = block.strip().splitlines()[0] if block.strip() else ""
    words = first.split()
    wordy = sum(w.strip(".,;:!?'\"()").isalpha() for w in words)
    return len(words) >= 4 and first.rstrip().endswith((".", ":")) and wordy * 2 > len(words)


def _markers(lines: list[str]) -> list[tuple[int, re.Match[str]]]:
    """Input/Output marker lines. When some are samples (``Sample Input 1``, ``Example 2``,
    ``Input 1``), only those: a statement's bare ``Input`` / ``Output`` sections describe the format."""
    found = [(i, m) for i, line in enumerate(lines) if (m := MARK.match(plain(line)))]
    samples = [(i, m) for i, m in found if m["sample"] or m["num"]]
    return samples or found


def stdin_examples(text: str) -> list[TestCase]:
    """``Input``/``Output`` example pairs, in order, as stdin tests. Left out: inputs that look like
    LeetCode arguments (``nums = [1, 2]``), and outputs that read as prose (see :func:`_prose`)."""
    lines = text.splitlines()
    tests: list[TestCase] = []
    pending: str | None = None
    for i, m in _markers(lines):
        inline = m["inline"]
        content = inline.strip() if inline and inline.strip() else _block_after(lines, i + 1)[0]
        if content is None:
            continue
        if m["kind"].lower() == "input":
            pending = content
        elif pending is not None:
            if not ASSIGN.match(pending) and not _prose(content):
                tests.append(TestCase(kind="stdin", input=pending.rstrip("\n") + "\n", output=content))
            pending = None
    return tests
