"""``hybrid``: execution-guided repair chains, agent-written inputs that split groups, ties, budget."""

from __future__ import annotations

import pytest
from strategy_helpers import (
    BAD,
    BAD2,
    GOOD,
    GOOD2,
    OVERFIT,
    ByRole,
    add_problem,
    fenced,
    make_ctx,
    scripted,
    team_of,
)

from memdoor.core.budget import Budget
from memdoor.core.problem import Problem, TestCase
from memdoor.models.scripted import ScriptedModel
from memdoor.strategies.hybrid import Hybrid

PROBLEM = add_problem().public_view()


class Recording(ScriptedModel):
    """A scripted model that also records the temperature of each call."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.temperatures: list[float] = []

    async def complete(self, messages, **kw):
        self.temperatures.append(kw["temperature"])
        return await super().complete(messages, **kw)


INPUTS = "Tricky cases:\n```input\n0\n5\n```\n```input\n7\n7\n```\n"


async def test_repair_is_guided_by_the_failing_public_tests(sandbox):
    agent = scripted({"draft": [fenced(BAD)], "repair": [fenced(GOOD)]})
    ctx = make_ctx(sandbox)
    sol = await Hybrid(repair_rounds=3).solve(PROBLEM, team_of(agent), ctx)
    assert [c.role for c in sol.ledger.calls] == ["draft", "repair"]  # stops once the public tests pass
    repair_prompt = agent.calls[1][-1]["content"]
    assert BAD in repair_prompt and "0 of 2 public tests pass." in repair_prompt
    assert "Input:\n1\n2\nExpected output:\n3\nOutput of the solution:\n-1" in repair_prompt
    assert sol.code == GOOD and sol.candidates[0].round == 1


async def test_repair_stops_after_k_rounds_or_when_code_repeats(sandbox):
    a = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD2), fenced(BAD + "  # x"), fenced(BAD)]})
    b = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD)]}, spec="scripted:b")
    sol = await Hybrid(repair_rounds=2).solve(PROBLEM, team_of(a, b), make_ctx(sandbox))
    roles = [(c.agent, c.role) for c in sol.ledger.calls]
    assert roles.count(("agent0", "repair")) == 2 and roles.count(("agent1", "repair")) == 1
    assert sol.code == BAD2  # the best of each agent's chain goes to the vote: BAD2 passes one test


async def test_agent_written_inputs_split_groups_that_agree_on_public_tests(sandbox):
    good = scripted({"draft": [fenced(GOOD)], "inputs": [INPUTS]}, logprob=-0.5)
    overfit = [scripted({"draft": [fenced(OVERFIT)]}, spec=f"scripted:o{i}", logprob=-0.5) for i in range(2)]
    good2 = scripted({"draft": [fenced(GOOD2)]}, spec="scripted:g2", logprob=-0.5)
    ctx = make_ctx(sandbox)
    sol = await Hybrid().solve(PROBLEM, team_of(good, overfit[0], good2, overfit[1]), ctx)
    tests = await ctx.memory.entries(ctx.task_id, "tests")
    assert tests == [{"agent": "agent0", "inputs": ["0\n5", "7\n7"]}]
    # without the inputs all four agree; with them GOOD/GOOD2 and the two OVERFITs split 2-2
    assert sol.selection.groups == [[0, 2], [1, 3]]
    assert sol.code == GOOD and sol.agent == "agent0"  # tie on size and weight: lowest index wins


async def test_tie_between_groups_breaks_by_confidence_then_index(sandbox):
    def team(good_logprob: float):
        return team_of(
            scripted({"draft": [fenced(OVERFIT)], "inputs": [INPUTS]}, logprob=-0.5),
            scripted({"draft": [fenced(GOOD)]}, spec="scripted:g", logprob=good_logprob),
            scripted({"draft": [fenced(OVERFIT)]}, spec="scripted:o", logprob=-0.5),
            scripted({"draft": [fenced(GOOD)]}, spec="scripted:g2", logprob=good_logprob),
        )

    tied = {(await Hybrid().solve(PROBLEM, team(-0.5), make_ctx(sandbox))).code for _ in range(2)}
    assert tied == {OVERFIT}  # equal size and weight: the group holding the lowest index
    confident = await Hybrid().solve(PROBLEM, team(-0.05), make_ctx(sandbox))
    assert confident.code == GOOD and confident.selection.groups == [[0, 2], [1, 3]]


async def test_no_inputs_are_asked_when_survivors_are_one_program(sandbox):
    agents = [scripted({"draft": [fenced(GOOD)], "inputs": [INPUTS]}, spec=f"scripted:{i}") for i in range(3)]
    sol = await Hybrid().solve(PROBLEM, team_of(*agents), make_ctx(sandbox))
    assert [c.role for c in sol.ledger.calls] == ["draft"] * 3 and sol.code == GOOD


async def test_stdin_problem_gets_stdin_inputs(sandbox):
    problem = Problem(
        id="sum-stdin",
        statement="Read two integers a and b and print a + b.",
        public_tests=[TestCase(kind="stdin", input="1 2\n", output="3\n")],
        prelude="livecodebench",
    )
    good = "a, b = map(int, input().split())\nprint(a + b)"
    overfit = "input()\nprint(3)"
    a = scripted({"draft": [fenced(overfit)], "inputs": ["```input\n5 6\n```"]})
    b = scripted({"draft": [fenced(good)]}, spec="scripted:b", logprob=-0.01)
    ctx = make_ctx(sandbox)
    sol = await Hybrid().solve(problem, team_of(a, b), ctx)
    assert "reads on standard input" in a.calls[-1][-1]["content"]
    assert sol.selection.groups == [[0], [1]] and sol.code == good


async def test_budget_spent_during_repairs_keeps_every_chain_so_far(sandbox):
    a = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD2), fenced(GOOD)]})
    b = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD2), fenced(GOOD)]}, spec="scripted:b")
    ctx = make_ctx(sandbox, budget=Budget(calls=3))
    sol = await Hybrid(repair_rounds=3).solve(PROBLEM, team_of(a, b), ctx)
    assert sol.stopped == "budget" and len(sol.ledger.calls) == 3
    assert len(sol.candidates) == 2 and sol.code == BAD2  # each agent's best so far


async def test_sstar_settles_a_split_vote_with_the_first_agent_as_referee(sandbox):
    from memdoor.strategies.hybrid import SStar

    # OVERFIT is the more confident group; on the input (0, 5) GOOD says 5 and OVERFIT 4.
    referee_says = "By hand: 0 + 5 = 5. Answer B gives 5.\nANSWER: B"
    first = scripted(
        {"draft": [fenced(OVERFIT)], "inputs": [INPUTS], "referee": [referee_says]}, logprob=-0.1
    )
    good = scripted({"draft": [fenced(GOOD)]}, spec="scripted:g", logprob=-0.9)
    bad = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD)]}, spec="scripted:b", logprob=-0.1)
    ctx = make_ctx(sandbox)
    sol = await SStar().solve(PROBLEM, team_of(first, good, bad), ctx)
    assert sol.strategy == "sstar:3"
    assert [c.role for c in sol.ledger.calls].count("referee") == 1
    referee_prompt = first.calls[-1][-1]["content"]
    assert "add(0, 5)" in referee_prompt and "Answer A:\n```\n4\n```" in referee_prompt
    assert OVERFIT not in referee_prompt and GOOD not in referee_prompt, "the referee sees outputs, not code"
    assert sol.selection.rule == "referee" and sol.code == GOOD
    duels = await ctx.memory.entries(ctx.task_id, "duels")
    assert duels == [{"agent": "agent0", "input": "0\n5", "outputs": ["4", "5"], "winner": 1}]
    # Plain hybrid on the same drafts keeps the more confident, overfit group.
    again = [
        scripted({"draft": [fenced(OVERFIT)], "inputs": [INPUTS]}, logprob=-0.1),
        scripted({"draft": [fenced(GOOD)]}, spec="scripted:g", logprob=-0.9),
        scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD)]}, spec="scripted:b", logprob=-0.1),
    ]
    plain = await Hybrid().solve(PROBLEM, team_of(*again), make_ctx(sandbox))
    assert plain.code == OVERFIT and plain.selection.rule == "confidence"


async def test_a_referee_out_of_budget_cannot_tell_and_the_vote_stands(sandbox):
    from memdoor.strategies.hybrid import SStar

    first = scripted({"draft": [fenced(OVERFIT)], "inputs": [INPUTS], "referee": ["ANSWER: B"]}, logprob=-0.1)
    good = scripted({"draft": [fenced(GOOD)]}, spec="scripted:g", logprob=-0.9)
    bad = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD)]}, spec="scripted:b", logprob=-0.1)
    sol = await SStar().solve(PROBLEM, team_of(first, good, bad), make_ctx(sandbox, budget=Budget(calls=5)))
    assert "referee" not in [c.role for c in sol.ledger.calls]
    assert sol.code == OVERFIT and sol.stopped in ("done", "budget")


async def test_sstar_with_duel_split_judges_a_majority_the_inputs_split(sandbox):
    from memdoor.strategies.hybrid import SStar

    # Two agents write OVERFIT (a majority of 3), one writes GOOD: the written input (0, 5) splits them.
    def team():
        first = scripted(
            {"draft": [fenced(OVERFIT)], "inputs": [INPUTS], "referee": ["0 + 5 = 5.\nANSWER: B"]},
            logprob=-0.1,
        )
        second = scripted({"draft": [fenced(OVERFIT)]}, spec="scripted:o", logprob=-0.1)
        good = scripted({"draft": [fenced(GOOD)]}, spec="scripted:g", logprob=-0.9)
        return team_of(first, second, good)

    agents = team()
    split = await SStar(duel="split").solve(PROBLEM, agents, make_ctx(sandbox))
    assert [c.role for c in split.ledger.calls].count("referee") == 1
    assert split.selection.rule == "referee" and split.code == GOOD
    agents = team()
    contested = await SStar().solve(PROBLEM, agents, make_ctx(sandbox))  # the default keeps the majority
    assert "referee" not in [c.role for c in contested.ledger.calls]
    assert contested.selection.rule == "majority" and contested.code == OVERFIT


async def test_a_referee_may_have_its_own_token_cap(sandbox):
    """``referee_tokens`` caps only the referee's answer (it works the input out before its verdict)."""
    from memdoor.models.scripted import ScriptedModel
    from memdoor.strategies.hybrid import SStar

    class Capped(ScriptedModel):
        async def complete(self, messages, *, max_tokens=1024, **kw):
            self.caps.append(max_tokens)
            return await super().complete(messages, max_tokens=max_tokens, **kw)

    script = {"draft": [fenced(OVERFIT)], "inputs": [INPUTS], "referee": ["0 + 5 = 5.\nANSWER: B"]}
    for option, cap in ((None, 1024), (900, 900)):
        first = Capped(respond=ByRole(script), spec="scripted:a", logprob=-0.1)
        first.caps = []
        second = scripted({"draft": [fenced(OVERFIT)]}, spec="scripted:o", logprob=-0.1)
        good = scripted({"draft": [fenced(GOOD)]}, spec="scripted:g", logprob=-0.9)
        options = {} if option is None else {"referee_tokens": option}
        sol = await SStar(duel="split", **options).solve(
            PROBLEM, team_of(first, second, good), make_ctx(sandbox)
        )
        assert sol.selection.rule == "referee" and sol.code == GOOD
        assert first.caps == [1024, 1024, cap]  # draft, inputs, then the one question


def test_duel_is_recorded_in_settings_only_when_set():
    from memdoor.run.config import SolveConfig, StrategySpec

    plain = SolveConfig(strategy=StrategySpec.parse("sstar:3")).settings()["options"]
    assert (
        "duel" not in plain
        and "referee_orders" not in plain
        and "referee_tokens" not in plain
        and plain["referee"] is True
    )  # old runs resume
    split = SolveConfig(strategy=StrategySpec.parse("sstar:3"), options={"duel": "split"}).settings()
    assert split["options"]["duel"] == "split"


@pytest.mark.parametrize(
    "answers, code, rule",
    [
        (["ANSWER: A", "ANSWER: A"], OVERFIT, "confidence"),  # always "A": inconsistent, cannot tell
        (["0 + 5 = 5.\nANSWER: B", "0 + 5 = 5.\nANSWER: A"], GOOD, "referee"),  # the same output both times
    ],
)
async def test_a_referee_asked_in_both_orders_counts_only_a_consistent_answer(sandbox, answers, code, rule):
    from memdoor.strategies.hybrid import SStar

    first = scripted({"draft": [fenced(OVERFIT)], "inputs": [INPUTS], "referee": answers}, logprob=-0.1)
    good = scripted({"draft": [fenced(GOOD)]}, spec="scripted:g", logprob=-0.9)
    bad = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD)]}, spec="scripted:b", logprob=-0.1)
    ctx = make_ctx(sandbox)
    sol = await SStar(referee_orders="both").solve(PROBLEM, team_of(first, good, bad), ctx)
    assert [c.role for c in sol.ledger.calls].count("referee") == 2
    duels = await ctx.memory.entries(ctx.task_id, "duels")
    assert [d["outputs"] for d in duels] == [["4", "5"], ["5", "4"]], "the second question swaps the outputs"
    assert sol.code == code and sol.selection.rule == rule


JS_RIGHT = """const hasCloseElements = (numbers, threshold) => {
  const s = [...numbers].sort((a, b) => a - b);
  for (let i = 0; i + 1 < s.length; i++) if (s[i + 1] - s[i] < threshold) return true;
  return false;
};"""
JS_NEIGHBOURS = """function hasCloseElements(numbers, threshold) {
  for (let i = 0; i + 1 < numbers.length; i++)
    if (Math.abs(numbers[i] - numbers[i + 1]) < threshold) return true;
  return false;
}"""
JS_INPUTS = (
    "```javascript\n// Test case 1: close but not neighbours\n"
    "console.log(hasCloseElements([1.0, 5.0, 1.1], 0.5)); // true\n"
    "const far = [1.0, 9.0];\nconsole.log(hasCloseElements(far, 0.5));\n```"
)


async def test_javascript_inputs_written_as_console_calls_split_groups(sandbox):
    """HumanEval-X JavaScript/0: the public example cannot tell a function that compares only
    neighbours from a right one; the 0.5B's inputs, console.log calls, can (before they were read as
    JavaScript, none of its inputs parsed and the most confident program of the one group won)."""
    from memdoor.problems.humaneval_x import load_humaneval_x

    problem = load_humaneval_x("javascript")[0].public_view()
    team = team_of(
        scripted({"draft": [fenced(JS_NEIGHBOURS)], "inputs": [JS_INPUTS]}, logprob=-0.05),
        scripted({"draft": [fenced(JS_RIGHT)]}, spec="scripted:r1", logprob=-0.5),
        scripted(
            {"draft": [fenced(JS_RIGHT.replace("s[i + 1] - s[i]", "Math.abs(s[i] - s[i + 1])"))]},
            spec="scripted:r2",
            logprob=-0.5,
        ),
    )
    ctx = make_ctx(sandbox)
    sol = await Hybrid(repair_rounds=0).solve(problem, team, ctx)
    tests = await ctx.memory.entries(ctx.task_id, "tests")
    assert tests == [{"agent": "agent0", "inputs": ["[1.0, 5.0, 1.1]\n0.5", "[1.0, 9.0]\n0.5"]}]
    assert sol.selection.groups == [[0], [1, 2]]
    assert sol.code == JS_RIGHT and sol.agent == "agent1"


def test_the_repair_options_are_recorded_in_settings_only_when_set():
    from memdoor.run.config import SolveConfig, StrategySpec

    plain = SolveConfig(strategy=StrategySpec.parse("hybrid:3")).settings()["options"]
    assert not {"repairer", "repair_when", "repair_prompt"} & set(plain)  # old runs resume
    options = {"repairer": "strong", "repair_when": "none_pass", "repair_prompt": "explain"}
    set_ = SolveConfig(strategy=StrategySpec.parse("hybrid:3"), options=options).settings()["options"]
    assert (
        set_["repairer"] == "strong"
        and set_["repair_when"] == "none_pass"
        and set_["repair_prompt"] == "explain"
    )


async def test_the_strongest_agent_repairs_every_chain_and_each_repair_stays_in_its_chain(sandbox):
    """``repairer="strong"``: the agent of the biggest model (here the second) repairs both chains; a
    repaired candidate is still its chain's, so the vote counts one candidate per agent."""
    small = scripted({"draft": [fenced(BAD)], "repair": [fenced(BAD)]})
    big = Recording(respond=ByRole({"draft": [fenced(BAD2)], "repair": [fenced(GOOD)]}), spec="scripted:big")
    team = team_of(small, big)  # temperatures 0.2 and 0.6
    team.agents[0].config.parameters, team.agents[1].config.parameters = 5e8, 1.5e9
    ctx = make_ctx(sandbox)
    sol = await Hybrid(repairer="strong", inputs=0).solve(PROBLEM, team, ctx)
    repairs = [c.agent for c in sol.ledger.calls if c.role == "repair"]
    assert repairs == ["agent1", "agent1"] and len(small.calls) == 1  # the small agent only drafted
    # its draft and its own chain's repair at its 0.6; agent0's chain repaired at agent0's 0.2
    assert sorted(big.temperatures) == [0.2, 0.6, 0.6]
    assert [(c.agent, c.code, c.round) for c in sol.candidates] == [("agent0", GOOD, 1), ("agent1", GOOD, 1)]
    assert BAD in big.calls[1][-1]["content"] or BAD in big.calls[2][-1]["content"]  # it saw the small draft
    drafts = await ctx.memory.entries(ctx.task_id, "drafts")
    assert {(d["agent"], d.get("by")) for d in drafts if d["role"] == "repair"} == {
        ("agent0", "agent1"),
        ("agent1", None),
    }
    assert sol.code == GOOD and sol.selection.groups == [[0, 1]]  # both chains' best, one behaviour


async def test_repair_when_none_pass_repairs_only_a_team_whose_drafts_all_fail(sandbox):
    def team(bad: str):
        return team_of(
            scripted({"draft": [fenced(BAD)], "repair": [fenced(GOOD)]}),
            scripted({"draft": [fenced(bad)], "repair": [fenced(GOOD)]}, spec="scripted:b"),
        )

    for bad, repaired in ((OVERFIT, False), (BAD2, True)):  # OVERFIT passes the public tests
        sol = await Hybrid(repair_when="none_pass", inputs=0).solve(PROBLEM, team(bad), make_ctx(sandbox))
        roles = [c.role for c in sol.ledger.calls]
        assert roles == ["draft", "draft"] + ["repair", "repair"] * repaired
        assert sol.code == (GOOD if repaired else OVERFIT)


async def test_an_explain_repair_asks_why_the_output_differs_and_for_different_code(sandbox):
    agent = scripted({"draft": [fenced(BAD)], "repair": [f"It subtracts instead of adding.\n{fenced(GOOD)}"]})
    sol = await Hybrid(repair_prompt="explain").solve(PROBLEM, team_of(agent), make_ctx(sandbox))
    prompt = agent.calls[1][-1]["content"]
    assert "why its output differs" in prompt and "different from the previous one" in prompt
    assert BAD in prompt and "0 of 2 public tests pass." in prompt and sol.code == GOOD
    plain = scripted({"draft": [fenced(BAD)], "repair": [fenced(GOOD)]})
    await Hybrid().solve(PROBLEM, team_of(plain), make_ctx(sandbox))
    assert "why its output differs" not in plain.calls[1][-1]["content"]
