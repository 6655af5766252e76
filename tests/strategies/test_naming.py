"""The team names a function the request did not name: what counts as a name, and what the answer is
told when none comes (a model error, no usable name, the budget spent)."""

from __future__ import annotations

import pytest
from strategy_helpers import make_ctx, team_of

from memdoor.core.budget import Budget
from memdoor.core.errors import ModelUnavailable
from memdoor.core.problem import Problem
from memdoor.models.scripted import ScriptedModel
from memdoor.strategies.naming import name_function, parse_name

PROBLEM = Problem(id="chat", statement="Write a function that reverses a string.", func_name="solution")


@pytest.mark.parametrize(
    ("answer", "name"),
    [
        ("`reverse_string`", "reverse_string"),
        ("I would call it `reverse_string`.", "reverse_string"),
        ("reverse_string", "reverse_string"),
        ("A good name is reverse_string, because it says what it does.", "reverse_string"),
        ("`reverse`", "reverse"),
        ("`print`", None),  # a builtin
        ("`class`", None),  # a keyword
        ("Sure! Here is how to do it.", None),
        ("", None),
    ],
)
def test_parse_name(answer, name):
    assert parse_name(answer) == name


async def test_the_first_agent_names_the_function_in_a_recorded_call(sandbox):
    first, second = (
        ScriptedModel(["`reverse_string`"], spec="scripted:a"),
        ScriptedModel(["`other_name`"], spec="scripted:b"),
    )
    events = []
    ctx = make_ctx(sandbox, events=events)
    problem, note = await name_function(PROBLEM, team_of(first, second)[0], ctx)
    assert problem.func_name == "reverse_string" and problem.statement == PROBLEM.statement
    assert note == "No function name in the request; the team named it `reverse_string`."
    assert len(first.calls) == 1 and second.calls == []
    assert "does not say what to call it" in first.calls[0][-1]["content"]
    assert ctx.ledger.totals().calls == 1
    assert [e.kind for e in events if e.kind == "name"] == ["name"]
    assert await ctx.memory.entries(ctx.task_id, "naming") == [{"agent": "agent0", "name": "reverse_string"}]


@pytest.mark.parametrize(
    ("model", "budget", "why"),
    [
        (ScriptedModel(["no idea"]), None, "the model gave no usable name"),
        (ScriptedModel([ModelUnavailable("down")]), None, "ModelUnavailable: down"),
        (ScriptedModel(["`x_y`"]), Budget(tokens=1), "budget"),
    ],
)
async def test_without_a_name_the_placeholder_stays_and_the_note_says_why(sandbox, model, budget, why):
    problem, note = await name_function(PROBLEM, team_of(model)[0], make_ctx(sandbox, budget=budget))
    assert problem == PROBLEM
    assert note.startswith("No function name in the request, and the team chose none (")
    assert why in note and note.endswith("it is named `solution`.")
