"""``cascade`` (cheap team first, the strong agent only when unsure) and ``adaptive`` (waves until agreement),
with scripted agents and the real sandbox."""

from __future__ import annotations

from strategy_helpers import BAD, BAD2, GOOD, GOOD2, OVERFIT, add_problem, fenced, make_ctx, scripted, team_of

from memdoor.strategies import messages
from memdoor.strategies.adaptive import Adaptive
from memdoor.strategies.cascade import Cascade

PROBLEM = add_problem().public_view()


def agents(*answers: str, strong: str | None = None):
    """A team: agent 0 answers ``strong`` (a separate model) when given, the others ``answers`` in order."""
    models = [scripted({"draft": [fenced(a)]}, spec=f"scripted:{i}") for i, a in enumerate(answers, start=1)]
    first = [scripted({"draft": [fenced(strong)]}, spec="scripted:strong")] if strong is not None else []
    return first + models


async def test_a_confident_cheap_majority_answers_without_the_strong_agent(sandbox):
    models = agents(GOOD, GOOD2, GOOD, BAD, strong=BAD2)
    events: list = []
    sol = await Cascade().solve(PROBLEM, team_of(*models), make_ctx(sandbox, events=events))
    assert models[0].calls == [], "the strong agent was never asked"
    assert all(len(m.calls) == 1 for m in models[1:])
    assert sol.code in (GOOD, GOOD2) and sol.agent != "agent0"
    [cascade] = [e for e in events if e.kind == "cascade"]
    assert cascade.data == {"escalated": False, "agree": 3, "need": 3}  # a strict majority of 4 cheap agents
    # Agent i is asked what it is asked in every strategy (paired draws in a bench).
    assert models[1].calls[0] == messages.draft(PROBLEM, 1)


async def test_a_split_cheap_team_escalates_and_the_strong_agent_passing_is_trusted(sandbox):
    # Two cheap agents agree on an overfit answer that passes the public tests, two are wrong:
    # 2 of 4 is no strict majority of the cheap agents, so the strong agent is asked.
    models = agents(OVERFIT, OVERFIT, BAD, BAD2, strong=GOOD)
    events: list = []
    sol = await Cascade().solve(PROBLEM, team_of(*models), make_ctx(sandbox, events=events))
    assert len(models[0].calls) == 1 and models[0].calls[0] == messages.draft(PROBLEM, 0)
    assert sol.code == GOOD and sol.agent == "agent0"
    assert [e.data["escalated"] for e in events if e.kind == "cascade"] == [True]


async def test_when_nobody_passes_the_cheap_team_escalates_and_the_selector_decides(sandbox):
    models = agents(BAD, BAD2, strong=BAD)
    sol = await Cascade().solve(PROBLEM, team_of(*models), make_ctx(sandbox))
    assert len(models[0].calls) == 1 and len(sol.candidates) == 3
    assert sol.code in (BAD, BAD2)


async def test_a_team_of_strong_agents_only_drafts_once_each(sandbox):
    model = scripted({"draft": [fenced(GOOD)]})
    sol = await Cascade(strong=2).solve(PROBLEM, team_of(model, model), make_ctx(sandbox))
    assert len(model.calls) == 2 and sol.code == GOOD


async def test_adaptive_stops_after_the_first_wave_when_two_drafts_agree_and_pass(sandbox):
    models = agents(GOOD, GOOD2, BAD, BAD2, BAD)
    events: list = []
    sol = await Adaptive().solve(PROBLEM, team_of(*models), make_ctx(sandbox, events=events))
    assert [len(m.calls) for m in models] == [1, 1, 0, 0, 0]
    assert sol.code in (GOOD, GOOD2) and sol.strategy == "adaptive:5"
    [settled] = [e for e in events if e.kind == "settled"]
    assert settled.data == {"drafts": 2, "agree": 2}


async def test_adaptive_adds_agents_until_two_agree_or_the_team_is_spent(sandbox):
    models = agents(BAD, GOOD, BAD2, GOOD2, BAD)
    sol = await Adaptive().solve(PROBLEM, team_of(*models), make_ctx(sandbox))
    assert [len(m.calls) for m in models] == [1, 1, 1, 1, 0], "stops once GOOD and GOOD2 agree"
    assert sol.code in (GOOD, GOOD2)
    split = agents(BAD, GOOD, BAD2, OVERFIT + "\n# differs only in text", BAD)
    sol = await Adaptive().solve(PROBLEM, team_of(*split), make_ctx(sandbox))
    # GOOD and OVERFIT behave alike on the public tests (both pass), so it stops at the fourth.
    assert [len(m.calls) for m in split] == [1, 1, 1, 1, 0]


async def test_adaptive_without_public_tests_never_stops_early(sandbox):
    models = agents(GOOD, GOOD, GOOD)
    problem = add_problem(hidden=False).public_view().model_copy(update={"public_tests": []})
    await Adaptive().solve(problem, team_of(*models), make_ctx(sandbox))
    assert [len(m.calls) for m in models] == [1, 1, 1]


async def test_without_public_tests_agreement_means_nothing_and_the_cascade_escalates(sandbox):
    untested = PROBLEM.model_copy(update={"public_tests": []})
    models = agents(GOOD, GOOD, GOOD, strong=GOOD2)
    events: list = []
    await Cascade().solve(untested, team_of(*models), make_ctx(sandbox, events=events))
    assert len(models[0].calls) == 1
    assert [e.data["escalated"] for e in events if e.kind == "cascade"] == [True]


def sized(team, *parameters):
    """The team with its agents' model sizes set (as the runner sets them from the catalog)."""
    for agent, p in zip(team.agents, parameters, strict=True):
        agent.config.parameters = p
    return team


async def test_the_biggest_model_is_the_escalation_wherever_it_sits_in_the_team(sandbox):
    # cascade:2@SMALL*1+BIG*1: the cheap agent 0 drafts what `single` of SMALL drafts; the big agent 1
    # is asked only when that draft fails the public tests.
    cheap, big = (
        scripted({"draft": [fenced(GOOD)]}, spec="scripted:small"),
        scripted({"draft": [fenced(GOOD2)]}),
    )
    sol = await Cascade().solve(PROBLEM, sized(team_of(cheap, big), 0.5e9, 1.5e9), make_ctx(sandbox))
    assert cheap.calls == [messages.draft(PROBLEM, 0)] and big.calls == []
    assert sol.code == GOOD and sol.agent == "agent0"

    cheap, big = (
        scripted({"draft": [fenced(BAD)]}, spec="scripted:small"),
        scripted({"draft": [fenced(GOOD2)]}),
    )
    events: list = []
    sol = await Cascade().solve(
        PROBLEM, sized(team_of(cheap, big), 0.5e9, 1.5e9), make_ctx(sandbox, events=events)
    )
    assert len(cheap.calls) == 1 and big.calls == [messages.draft(PROBLEM, 1)]
    assert sol.code == GOOD2 and sol.agent == "agent1"
    assert [e.data["escalated"] for e in events if e.kind == "cascade"] == [True]


async def test_with_a_size_unknown_the_first_agents_are_the_escalation(sandbox):
    first, second = (
        scripted({"draft": [fenced(GOOD2)]}),
        scripted({"draft": [fenced(GOOD)]}, spec="scripted:b"),
    )
    sol = await Cascade().solve(PROBLEM, sized(team_of(first, second), None, 1.5e9), make_ctx(sandbox))
    assert first.calls == [] and sol.code == GOOD and sol.agent == "agent1"
