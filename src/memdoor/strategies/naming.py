"""A name for the function a request asks for when it names none ("Write a function that ...").

The runner calls :func:`name_function` before the strategy when ``SolveConfig.name_function`` says
the problem's function name is only a placeholder (``memdoor serve`` sets it for such a request): the
team's first agent chooses a descriptive name, in a call budgeted and recorded like every other
(ledger, trace event ``name``, memory kind ``naming``). Either way the answer says so — a function is
never silently called by the placeholder: :func:`name_function` returns the note the answer carries.
"""

from __future__ import annotations

import builtins
import keyword
import re

from memdoor.agents.team import Agent
from memdoor.core.errors import BudgetExceeded, ModelError
from memdoor.core.messages import Message
from memdoor.core.problem import Problem
from memdoor.prompts import render
from memdoor.strategies.context import RunContext

NAMING_TOKENS = 32
"""Completion cap of the naming call (a name, in backticks)."""

_TICKED = re.compile(r"`([A-Za-z_]\w*)")
_SNAKE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")


def usable_name(name: str) -> bool:
    """A Python identifier that is not a keyword or a builtin, and not absurdly long."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not hasattr(builtins, name)
        and len(name) <= 60
    )


def parse_name(text: str) -> str | None:
    """The name a model answered: the first backticked identifier, else the first snake_case word, else
    the whole answer when it is one identifier; None when there is no usable one."""
    words = text.strip().strip("`'\".").strip()
    for name in [*_TICKED.findall(text), *_SNAKE.findall(text), words]:
        if usable_name(name):
            return name
    return None


def messages(problem: Problem) -> list[Message]:
    return [
        {"role": "system", "content": render("system")},
        {"role": "user", "content": render("name_function", statement=problem.statement.rstrip())},
    ]


async def name_function(
    problem: Problem, agent: Agent, ctx: RunContext, *, max_tokens: int = NAMING_TOKENS
) -> tuple[Problem, str]:
    """``problem`` with the function name ``agent`` chose, and the note the answer carries; when no
    name comes (a model error, no usable name, the budget spent), ``problem`` unchanged and a note
    saying the placeholder stays, and why."""
    placeholder = problem.func_name
    why = "the model gave no usable name"
    try:
        resp = await agent.ask(
            messages(problem), ctx, role="naming", logprobs=False, temperature=0.0, max_tokens=max_tokens
        )
        name = parse_name(resp.completions[0].text if resp.completions else "")
    except ModelError as e:
        name, why = None, f"{type(e).__name__}: {e}"
    except BudgetExceeded as e:  # the strategy stops at once too, with stopped="budget"
        await ctx.event("budget", None, what=e.what, spent=e.spent, limit=e.limit)
        name, why = None, str(e)
    if name is None:
        return (
            problem,
            f"No function name in the request, and the team chose none ({why}): it is named `{placeholder}`.",
        )
    await ctx.memory.append(ctx.task_id, "naming", {"agent": agent.id, "name": name})
    await ctx.event("name", agent.id, name=name)
    note = f"No function name in the request; the team named it `{name}`."
    return problem.model_copy(update={"func_name": name}), note
