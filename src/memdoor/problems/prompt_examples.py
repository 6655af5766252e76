"""What a coding request asks for, and the examples it shows, as tests a team can run.

Three questions about a request's text, each answered conservatively (a wrong test would steer the
whole team wrong, so anything ambiguous is left out):

- :func:`find_target` — which function to write: a ``def`` in a code block (a ``class Solution``
  method for LeetCode-style starters), a backticked signature such as ```is_prime(n: int) -> bool```,
  a ``def name(`` in the text, "a function named X", or the function the examples call;
- :func:`functional_examples` — calls with results: ``>>> f(1)`` / ``2``, ``f(1) == 2`` (also as
  ``assert`` lines), and LeetCode's ``Input: a = 1, b = 2`` / ``Output: 3`` (arguments by name, put
  in the signature's order);
- :func:`stdin_examples` — ``Input`` / ``Output`` (or ``Sample Input 1`` / ``Sample Output 1``)
  blocks for a program that reads standard input.

Values may be written as Python or JSON literals (``true``, ``null``); results must be JSON-able,
since functional tests compare ``json.loads(expected)``.

This module answers the first question and is the one door to all three; each reading has a module of
its own: the target's record and signatures (:mod:`~memdoor.problems.signatures`), mentions in the prose
(:mod:`~memdoor.problems.mentions`), the request's lines (:mod:`~memdoor.problems.request_lines`),
literal values (:mod:`~memdoor.problems.literals`), functional examples
(:mod:`~memdoor.problems.call_examples`), standard-input examples (:mod:`~memdoor.problems.stdin_samples`)
and calls written as code (:mod:`~memdoor.problems.code_calls`).

What these readers find in a benchmark's problems is part of the problems (HumanEval's public tests are
its prompt's examples), so of a run's problem digest and of every prompt showing them:
``tests/problems/test_prompt_examples_digest.py`` pins it.
"""

from __future__ import annotations

import re

from memdoor.problems.call_examples import functional_examples
from memdoor.problems.code_calls import calls_in_code
from memdoor.problems.literals import json_input, parse_value
from memdoor.problems.mentions import best_mention, prose_mentions
from memdoor.problems.request_lines import code_blocks, example_calls
from memdoor.problems.signatures import DEFAULT_FUNCTION, Target, target_in_code
from memdoor.problems.stdin_samples import stdin_examples

__all__ = [
    "DEFAULT_FUNCTION",
    "Target",
    "calls_in_code",
    "example_calls",
    "find_target",
    "functional_examples",
    "json_input",
    "parse_value",
    "stdin_examples",
    "wants_function",
]

_WANTS_FUNCTION = re.compile(r"\b(?:function|method)\b", re.IGNORECASE)


def find_target(text: str) -> Target:
    """The function ``text`` asks for, or ``Target(None)`` for a program reading standard input.

    A code block's unfinished function (a starter) wins; a finished one ("fix this", "make it faster")
    wins unless the prose asks for another function by name. Among the functions the prose names,
    the one asked for most strongly wins (see :func:`memdoor.problems.mentions.ask_score`); the first among equals."""
    mentions = prose_mentions(text)
    prose = best_mention(mentions)
    for block in reversed(code_blocks(text)):
        found = target_in_code(block)
        if found is None:
            continue
        target, starter, defined = found
        asked = [m for m in mentions if m.score >= 2 and m.target.func_name not in defined]
        if starter or not asked:
            return target
        return best_mention(asked) or target
    if prose is not None:
        return prose
    calls = example_calls(text)
    if calls:
        return Target(calls.most_common(1)[0][0], "", None, "examples")
    return Target(None)


def wants_function(text: str) -> bool:
    """Whether the request speaks of writing a function or method (used when it names none)."""
    return bool(_WANTS_FUNCTION.search(text))
