"""``sequential``: every stop rule, roles, a failing author and the budget, with the real sandbox."""

from __future__ import annotations

from strategy_helpers import BAD, BAD2, GOOD, GOOD2, add_problem, fenced, make_ctx, scripted, team_of

from memdoor.core.budget import Budget
from memdoor.core.errors import ModelTimeout
from memdoor.strategies.sequential import Sequential

PROBLEM = add_problem().public_view()
OK = "The code is correct.\nVERDICT: OK"
ISSUES = "- it subtracts instead of adding\nVERDICT: ISSUES"
SLOW = (
    "class Solution:\n    def add(self, a, b):\n        return len([None] * a) + b"  # passes the public tests
)


async def test_done_when_reviewer_is_satisfied_and_public_tests_pass(sandbox):
    author = scripted({"draft": [fenced(GOOD)]})
    reviewer = scripted({"review": [OK]}, spec="scripted:r")
    ctx = make_ctx(sandbox)
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), ctx)
    assert sol.stopped == "done" and sol.code == GOOD
    assert [c.role for c in sol.ledger.calls] == ["draft", "review"]
    assert [c.agent for c in sol.ledger.calls] == ["agent0", "agent1"]
    reviews = await ctx.memory.entries(ctx.task_id, "reviews")
    assert [(r["agent"], r["ok"]) for r in reviews] == [("agent1", True)]
    # the reviewer saw the code and its results on the public tests
    shown = reviewer.calls[0][-1]["content"]
    assert GOOD in shown and "2 of 2 public tests pass." in shown


async def test_an_ok_review_does_not_end_the_loop_while_public_tests_fail(sandbox):
    author = scripted({"draft": [fenced(BAD)], "revise": [fenced(GOOD)]})
    reviewer = scripted({"review": [OK]}, spec="scripted:r")
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), make_ctx(sandbox))
    assert [c.role for c in sol.ledger.calls] == ["draft", "review", "revise", "review"]
    assert sol.stopped == "done" and sol.code == GOOD
    revise_prompt = author.calls[1][-1]["content"]
    assert "0 of 2 public tests pass." in revise_prompt and "VERDICT: OK" in revise_prompt


async def test_issues_on_passing_code_lead_to_a_revision(sandbox):
    author = scripted({"draft": [fenced(SLOW)], "revise": [fenced(GOOD)]})
    reviewer = scripted({"review": ["- too slow for large a\nVERDICT: ISSUES", OK]}, spec="scripted:r")
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), make_ctx(sandbox))
    assert sol.stopped == "done" and sol.code == GOOD and len(sol.candidates) == 2
    assert "too slow for large a" in author.calls[1][-1]["content"]


async def test_stalled_when_the_same_code_comes_back(sandbox):
    author = scripted({"draft": [fenced(BAD)], "revise": [fenced(BAD)]})
    reviewer = scripted({"review": [ISSUES]}, spec="scripted:r")
    ctx = make_ctx(sandbox)
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), ctx)
    assert sol.stopped == "stalled" and len(sol.ledger.calls) == 3
    assert any(e.kind == "stalled" for e in ctx.trace.events)


async def test_stalled_when_the_same_public_tests_fail_again(sandbox):
    other_bad = "class Solution:\n    def add(self, a, b):\n        return a - b - 0"
    author = scripted({"draft": [fenced(BAD)], "revise": [fenced(other_bad)]})
    reviewer = scripted({"review": [ISSUES]}, spec="scripted:r")
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), make_ctx(sandbox))
    assert sol.stopped == "stalled" and len(sol.candidates) == 2


async def test_progress_on_failing_tests_is_not_a_stall(sandbox):
    # BAD fails both public tests; BAD2 fails only the first: different failures, so the loop goes on
    author = scripted({"draft": [fenced(BAD)], "revise": [fenced(BAD2), fenced(GOOD)]})
    reviewer = scripted({"review": [ISSUES, ISSUES, OK]}, spec="scripted:r")
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), make_ctx(sandbox))
    assert sol.stopped == "done" and sol.code == GOOD and len(sol.candidates) == 3


async def test_rounds_run_out_when_the_reviewer_is_never_satisfied(sandbox):
    variants = [fenced(GOOD), fenced(GOOD2), fenced(SLOW), fenced(GOOD + "  # v4")]
    author = scripted({"draft": [variants[0]], "revise": variants[1:]})
    reviewer = scripted({"review": ["Not sure about it."]}, spec="scripted:r")  # no verdict line: issues
    sol = await Sequential(rounds=3).solve(PROBLEM, team_of(author, reviewer), make_ctx(sandbox))
    assert sol.stopped == "rounds" and len(sol.candidates) == 4
    assert [c.role for c in sol.ledger.calls].count("review") == 3
    assert sol.code == GOOD + "  # v4"  # the latest revision among those passing the most public tests


async def test_the_answer_is_never_a_regression_on_public_tests(sandbox):
    author = scripted({"draft": [fenced(GOOD)], "revise": [fenced(BAD2)]})
    reviewer = scripted({"review": [ISSUES]}, spec="scripted:r")
    sol = await Sequential(rounds=1).solve(PROBLEM, team_of(author, reviewer), make_ctx(sandbox))
    assert sol.stopped == "rounds" and sol.code == GOOD


async def test_team_of_one_reviews_itself_in_a_reviewer_role(sandbox):
    solo = scripted({"draft": [fenced(BAD)], "review": [ISSUES, OK], "revise": [fenced(GOOD)]})
    sol = await Sequential().solve(PROBLEM, team_of(solo), make_ctx(sandbox))
    assert sol.stopped == "done" and sol.code == GOOD
    systems = [call[0]["content"] for call in solo.calls]
    assert "reviewing" in systems[1] and "reviewing" not in systems[0]
    assert {c.agent for c in sol.ledger.calls} == {"agent0"}


async def test_a_failing_author_hands_over_to_the_next_agent(sandbox):
    author = scripted({"draft": [fenced(BAD)], "revise": [ModelTimeout("no answer")]})
    second = scripted({"review": [ISSUES, OK], "revise": [fenced(GOOD)]}, spec="scripted:b")
    sol = await Sequential().solve(PROBLEM, team_of(author, second), make_ctx(sandbox))
    assert [f.agent for f in sol.failures] == ["agent0"]
    assert sol.code == GOOD and sol.agent == "agent1" and sol.stopped == "done"


async def test_budget_spent_mid_loop_keeps_the_candidates_made(sandbox):
    author = scripted({"draft": [fenced(BAD)], "revise": [fenced(BAD2), fenced(GOOD)]})
    reviewer = scripted({"review": [ISSUES]}, spec="scripted:r")
    ctx = make_ctx(sandbox, budget=Budget(calls=3))
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), ctx)
    assert sol.stopped == "budget" and len(sol.ledger.calls) == 3
    assert [c.code for c in sol.candidates] == [BAD, BAD2] and sol.code == BAD2
    assert any(e.kind == "budget" for e in ctx.trace.events)


async def test_token_budget_stops_the_loop(sandbox):
    author = scripted({"draft": [fenced(BAD)], "revise": [fenced(BAD2)]})
    reviewer = scripted({"review": [ISSUES]}, spec="scripted:r")
    ctx = make_ctx(sandbox, budget=Budget(tokens=400))  # room for the draft, not for a review after it
    sol = await Sequential().solve(PROBLEM, team_of(author, reviewer), ctx)
    assert sol.stopped == "budget" and len(sol.ledger.calls) == 1 and sol.code == BAD
    assert 0 < ctx.budget.tokens <= 400  # a call that would not fit is not made: no overshoot


async def test_a_budget_smaller_than_the_first_prompt_makes_no_call(sandbox):
    author = scripted({"draft": [fenced(BAD)]})
    ctx = make_ctx(sandbox, budget=Budget(tokens=60))  # the draft prompt alone is longer
    sol = await Sequential().solve(PROBLEM, team_of(author, author), ctx)
    assert sol.stopped == "budget" and sol.ledger.calls == [] and ctx.budget.tokens == 0


async def test_reviewers_take_turns_in_a_larger_team(sandbox):
    author = scripted({"draft": [fenced(BAD)], "revise": [fenced(BAD2), fenced(GOOD2), fenced(GOOD)]})
    reviewers = [scripted({"review": [ISSUES]}, spec=f"scripted:r{i}") for i in range(3)]
    sol = await Sequential(rounds=4).solve(PROBLEM, team_of(author, *reviewers), make_ctx(sandbox))
    who = [c.agent for c in sol.ledger.calls if c.role == "review"]
    assert who == ["agent1", "agent2", "agent3", "agent1"]
    assert sol.stopped == "stalled"  # the fourth revision repeats GOOD
