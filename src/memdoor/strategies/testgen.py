"""Agent-written test inputs for a problem that comes with no tests (seed protocol, ``memdoor serve``)."""

from __future__ import annotations

from typing import Any

from memdoor.errors import ModelError
from memdoor.problems.model import Problem
from memdoor.strategies import messages


async def write_tests(
    problem: Problem, model: Any, count: int, *, seed: int = 0, max_tokens: int = 512
) -> tuple[Problem, str]:
    """Ask ``model`` for up to ``count`` test inputs (no expected outputs) for ``problem``; the problem
    with them as public tests, so the selector groups candidates by behaviour on them. Two tries."""
    note = ""
    for attempt in range(2):
        try:
            resp = await model.complete(
                messages.inputs(problem, count),
                n=1,
                temperature=0.2 + 0.4 * attempt,
                max_tokens=max_tokens,
                seed=seed + attempt,
            )
        except ModelError as e:
            note = f"{type(e).__name__}: {e}"
            continue
        tests = messages.parse_inputs(resp.completions[0].text, problem, limit=count)
        if tests:
            return problem.model_copy(update={"public_tests": tests}), ""
        note = "the model wrote no usable test input"
    return problem, note
