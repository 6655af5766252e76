"""The texts of a model's answer that may hold its structured reply (a JSON value, a Python literal):
its fenced blocks (json ones first, the last first), the whole answer, then its outermost bracketed spans.
Callers try them in order and keep the first that parses as they need."""

from __future__ import annotations

import re

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
"""A fenced block: its language tag (possibly empty) and its body."""


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the answer's fenced blocks: the json ones first, then the others, each the last first."""
    blocks = [(lang.lower(), body) for lang, body in FENCE.findall(text)]
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
