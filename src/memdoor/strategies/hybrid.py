"""``hybrid`` (the S* recipe): parallel attempts, each repaired for up to ``repair_rounds`` rounds on
its public-test failures, then selection helped by inputs an agent writes to tell candidates apart.

Each agent's chain (draft → repair → repair ...) runs concurrently with the others. A chain stops
when its code passes the public tests, repeats itself, or runs out of rounds. When the surviving
candidates (those passing the public tests) hold more than one distinct program, one agent is asked
for ``inputs`` test inputs in the problem's format; the selector runs every candidate on them and
groups candidates by what they output.

Options make the mixed-team variant "small models draft, a bigger one repairs": ``repairer="strong"``
has the agent of the biggest model repair every chain (each repair stays in its chain, so the vote still
counts one candidate per agent), ``repair_when="none_pass"`` repairs only when no draft passes the
public tests (the team is unsure, as ``cascade`` escalates), so the bigger model is called only where it
may help, and ``repair_prompt="explain"`` asks why the output differs before asking for different code.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from memdoor.agents.team import Agent
from memdoor.core.candidates import Candidate, DuelWhen, Selection
from memdoor.strategies import messages
from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun
from memdoor.strategies.referee import AgentReferee


class HybridConfig(StrategyConfig):
    """Options of ``hybrid``."""

    repair_rounds: int = Field(
        default=2, ge=0, description="k: repair rounds per attempt, guided by public tests."
    )
    inputs: int = Field(
        default=5, ge=0, description="Test inputs asked of an agent to split candidate groups (0: none)."
    )
    referee: bool = Field(
        default=False,
        description="When the vote has no majority, the first agent judges which of the two leading groups"
        " answers right on an input where they differ (S*'s judged comparison).",
    )
    duel: DuelWhen = Field(
        default="contested",
        description="When the referee judges: contested (a vote without a strict majority) or split (any "
        "vote where the survivors behave in two or more ways on the public and written inputs, as S* does).",
    )
    referee_orders: Literal["one", "both"] = Field(
        default="one",
        description="one: the referee is asked once; both: asked again with the two outputs swapped, and "
        "only an answer naming the same output both times counts (else it cannot tell).",
    )

    referee_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Completion token cap of a referee's answer (None: the run's cap). The referee works the "
        "input out by hand before its verdict line, and a 1.5B cut off at 512 tokens names no output.",
    )

    repairer: Literal["own", "strong"] = Field(
        default="own",
        description="own: each agent repairs its own chain; strong: the agent of the biggest model (the "
        "first when sizes are unknown) repairs every chain, sampling at the temperature of the chain's "
        "agent (so chains get different repairs, not one near-greedy answer handed back).",
    )
    repair_prompt: messages.RepairPrompt = Field(
        default="fix",
        description="fix: ask for the corrected solution; explain: ask first why the output differs from "
        "the expected one, then for a solution different from the previous one.",
    )
    repair_when: Literal["failing", "none_pass"] = Field(
        default="failing",
        description="failing: every chain whose code fails a public test is repaired; none_pass: chains "
        "are repaired only when no draft passes the public tests (otherwise the drafts go to selection).",
    )

    recorded_when_set: ClassVar[frozenset[str]] = frozenset(
        {"duel", "referee_orders", "referee_tokens", "repairer", "repair_when", "repair_prompt"}
    )


class Hybrid(BaseStrategy):
    """Parallel attempts with execution-guided repair, then selection with agent-written inputs."""

    name = "hybrid"
    Config = HybridConfig

    async def loop(self, run: TeamRun) -> None:
        agents = run.active()
        if self.config.repair_when == "failing":  # each chain goes on as soon as its draft is in
            await run.together(agents, lambda a: self.attempt_and_repair(run, a))
        else:
            drafts = await run.together(agents, run.draft)
            if not any(passes(c) for c in drafts):
                await run.together(range(len(agents)), lambda i: self.repair(run, agents[i], drafts[i]))
        survivors = {c.code.strip() for c in run.best_per_agent() if c.code.strip() and passes(c)}
        if self.config.inputs and len(survivors) > 1:
            await run.write_inputs(self.config.inputs, round=self.config.repair_rounds + 1)

    async def attempt_and_repair(self, run: TeamRun, agent: Agent) -> Candidate | None:
        return await self.repair(run, agent, await run.draft(agent))

    async def repair(self, run: TeamRun, agent: Agent, cand: Candidate | None) -> Candidate | None:
        """``agent``'s chain from ``cand``: up to ``repair_rounds`` repairs on the public-test failures, by
        the agent itself or by the strongest agent (``repairer``)."""
        fixer = run.team.strongest()[0] if self.config.repairer == "strong" else agent
        temperature = agent.config.temperature if fixer is not agent else None
        for r in range(1, self.config.repair_rounds + 1):
            if cand is None or cand.public is None or cand.public.passed or not run.problem.public_tests:
                break
            view = run.view_of(cand)
            msgs = messages.repair(view, cand.code, run.results(cand), self.config.repair_prompt)
            new = await run.attempt(
                fixer, msgs, role="repair", round=r, view=view, chain=agent, temperature=temperature
            )
            if new is None or new.code.strip() == cand.code.strip():
                break
            cand = new
        return cand

    async def choose(self, run: TeamRun) -> tuple[list[Candidate], Selection | None]:
        active = run.active()
        referee = None
        if self.config.referee and active:
            referee = AgentReferee(
                run,
                active[0],
                self.config.repair_rounds + 2,
                both_orders=self.config.referee_orders == "both",
                max_tokens=self.config.referee_tokens,
            )
        return await run.select(run.best_per_agent(), referee=referee, duel=self.config.duel)


def passes(c: Candidate | None) -> bool:
    """Whether ``c`` was run on the public tests and passed them."""
    return c is not None and c.public is not None and c.public.passed


class SStarConfig(HybridConfig):
    """Options of ``sstar``: those of ``hybrid``, with the referee on."""

    referee: bool = Field(default=True, description="See HybridConfig.referee (on for sstar).")


class SStar(Hybrid):
    """``hybrid`` with S*'s judged comparison: a vote without a majority is settled by the first agent
    working out which of the two leading groups' outputs is right on an input where they differ."""

    name = "sstar"
    Config = SStarConfig
