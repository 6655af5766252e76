"""The texts of a model's answer that may hold its structured reply (a JSON value, a Python literal):
its fenced blocks (json ones first, the last first), the whole answer, then its outermost bracketed spans.
Callers try them in order and keep the first that parses as they need."""

from __future__ import annotations

import re

FENCE = "```"
"""What opens and closes a fenced block."""
_TAG = re.compile(r"[ \t]*([A-Za-z0-9_+-]*)")
"""The language tag at the start of a fence's line (possibly empty)."""


def fences(text: str) -> list[tuple[str, str]]:
    """Each fenced block's language tag and body, in order: from a fence to the end of its line (the tag
    first on it), the body up to the next fence. One pass over the text: a long run of backticks or an
    unclosed fence costs no more than the text's length."""
    out, at = [], 0
    while (start := text.find(FENCE, at)) >= 0:
        line_end = text.find("\n", start + len(FENCE))
        close = text.find(FENCE, line_end + 1) if line_end >= 0 else -1
        if close < 0:
            break  # no block starts at a later fence either: none has a line end and a fence after it
        tag = _TAG.match(text, start + len(FENCE), line_end).group(1)  # type: ignore[union-attr]
        out.append((tag, text[line_end + 1 : close]))
        at = close + len(FENCE)
    return out


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the answer's fenced blocks: the json ones first, then the others, each the last first."""
    blocks = [(lang.lower(), body) for lang, body in fences(text)]
    ordered = [body for lang, body in reversed(blocks) if lang == "json"]
    return ordered + [body for lang, body in reversed(blocks) if lang != "json"]


def outer_span(text: str, brackets: str = "[]") -> str | None:
    """From the first opening bracket to the last closing one (a value written inside prose), or None."""
    i, j = text.find(brackets[0]), text.rfind(brackets[1])
    return text[i : j + 1] if 0 <= i < j else None


def candidates(text: str, spans: tuple[str, ...] = ("{}", "[]")) -> list[str]:
    """The texts to try, in order: :func:`fenced_blocks`, the whole answer, then its :func:`outer_span`
    for each pair of ``spans`` that has one."""
    found = (outer_span(text, pair) for pair in spans)
    return [*fenced_blocks(text), text, *(span for span in found if span is not None)]
