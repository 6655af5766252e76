"""An agent's inputs as a JSON list, read strictly: the list a fenced block holds (json blocks first, the
last first), else the whole answer, else its outermost ``[...]``; ``{"inputs": [...]}`` is read too. Each
item becomes an input or is refused with its reason, within the count cap."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memdoor.review.differential.inputs import MAX_ANSWER_CHARS, Call, Read
from memdoor.text.answer_blocks import candidates


def json_list(text: str, fits: Callable[[list[Any]], bool]) -> list[Any] | None:
    """The first list of the answer that ``fits`` (see the module), or None."""
    for block in candidates(text[:MAX_ANSWER_CHARS], spans=("[]",)):
        try:
            data = json.loads(block)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            data = data.get("inputs")
        if isinstance(data, list) and fits(data):
            return data
    return None


def read_list(
    text: str, fits: Callable[[list[Any]], bool], make: Callable[[Any], Call | str], limit: int
) -> Read:
    """The inputs of an answer: ``make`` turns an item into an input, or says why it is refused."""
    read = Read()
    data = json_list(text, fits)
    if data is None:
        read.unreadable = True
        return read
    for item in data:
        if len(read.calls) >= limit:
            read.rejected.append(f"inputs over the limit of {limit}")
            break
        made = make(item)
        if isinstance(made, str):
            read.rejected.append(made)
        elif made.text not in (c.text for c in read.calls):
            read.calls.append(made)
    return read
