"""Helpers for strategy tests: small problems, scripted agents that answer by role, a context, a team.

Scripted models only drive the control flow; every candidate runs in the real sandbox.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from memdoor.agents.team import Agent, AgentConfig, Team
from memdoor.core.budget import Budget, BudgetTracker
from memdoor.core.messages import Completion, Message, ModelResponse, Usage
from memdoor.core.problem import Problem, TestCase
from memdoor.judging.judge import Judge
from memdoor.memory.inproc import InProcMemory
from memdoor.models.scripted import ScriptedModel
from memdoor.select.vote import VoteSelector
from memdoor.strategies.context import RunContext

STARTER = "class Solution:\n    def add(self, a: int, b: int) -> int:\n        "


def fenced(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\n"


GOOD = "class Solution:\n    def add(self, a, b):\n        return a + b"
GOOD2 = "class Solution:\n    def add(self, a, b):\n        return sum([a, b])"
BAD = "class Solution:\n    def add(self, a, b):\n        return a - b"
BAD2 = "class Solution:\n    def add(self, a, b):\n        return a * b"
OVERFIT = "class Solution:\n    def add(self, a, b):\n        return 3 if a == 1 else 4"
"""Passes the public tests of :func:`add_problem`, fails its hidden ones."""


def add_problem(*, hidden: bool = True) -> Problem:
    """``add(a, b)``: two public tests, (1,2)->3 and (2,2)->4, and hidden ones an overfit answer fails."""
    tc = lambda i, o: TestCase(kind="functional", input=i, output=o)  # noqa: E731
    return Problem(
        id="add-two",
        title="Add two",
        statement="Return the sum of a and b.",
        starter_code=STARTER,
        func_name="add",
        public_tests=[tc("1\n2", "3"), tc("2\n2", "4")],
        hidden_tests=[tc("0\n5", "5"), tc("-3\n1", "-2")] if hidden else [],
        prelude="livecodebench",
        platform="leetcode",
        difficulty="easy",
    )


def role_of(messages: Sequence[Message]) -> str:
    """Which step a prompt is for, from the text the strategies' templates put in it."""
    user = messages[-1]["content"]
    if "### Two programs give different answers" in user:
        return "referee"
    if "### Candidate solution" in user:
        return "review"
    if "```input" in user or "write only calls of" in user:
        return "inputs"
    if "### Reviewer's comments" in user:
        return "revise"
    if "### Your teammates' drafts" in user:
        return "refine"
    if "### Your previous solution" in user:
        return "repair"
    return "draft"


Script = dict[str, "Sequence[str | Exception]"]


class ByRole:
    """A respond function: for each role, the answers to give in order (the last one repeats)."""

    def __init__(self, script: Script):
        self.script = {k: list(v) for k, v in script.items()}
        self.seen: dict[str, int] = {}

    def __call__(self, messages: Sequence[Message]) -> str | Exception:
        role = role_of(messages)
        answers = self.script.get(role)
        if not answers:
            raise AssertionError(f"unexpected {role} call")
        i = self.seen.get(role, 0)
        self.seen[role] = i + 1
        return answers[min(i, len(answers) - 1)]


def scripted(
    script: Script | None = None, *, spec: str = "scripted:a", logprob: float = -0.1, **kw
) -> ScriptedModel:
    return ScriptedModel(respond=ByRole(script or {}), spec=spec, logprob=logprob, **kw)


def team_of(*models, temperatures: Sequence[float] = (0.2, 0.6, 0.8, 0.4, 1.0)) -> Team:
    return Team(
        [
            Agent(
                AgentConfig(
                    id=f"agent{i}",
                    model=m.spec,
                    temperature=temperatures[i % len(temperatures)],
                    seed=1000 * i,
                    prompt_variant=i,
                ),
                m,
            )
            for i, m in enumerate(models)
        ]
    )


def make_ctx(sandbox, *, budget: Budget | None = None, memory=None, events: list | None = None) -> RunContext:
    return RunContext(
        judge=Judge(sandbox),
        memory=memory or InProcMemory(),
        selector=VoteSelector(),
        budget=BudgetTracker(budget),
        on_event=events.append if events is not None else None,
    )


class Barrier:
    """A model whose calls all wait until ``parties`` calls are in flight: proves concurrency without
    timing (it times out generously, and then the test fails on the error)."""

    def __init__(self, parties: int, answer: Callable[[int], str], *, spec: str = "barrier"):
        self.spec = spec
        self.parties = parties
        self.answer = answer
        self.arrived = 0
        self.most_in_flight = 0
        self._in_flight = 0
        self._all_here = asyncio.Event()

    async def complete(
        self, messages, *, n=1, temperature=0.2, max_tokens=1024, logprobs=False, seed=None, stop=None
    ):
        k = self.arrived
        self.arrived += 1
        self._in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self._in_flight)
        if self.arrived >= self.parties:
            self._all_here.set()
        try:
            await asyncio.wait_for(self._all_here.wait(), timeout=60)
        finally:
            self._in_flight -= 1
        text = self.answer(k)
        return ModelResponse(
            model=self.spec,
            completions=[Completion(text=text, logprobs=[-0.1] if logprobs else None)],
            usage=Usage(prompt_tokens=10, completion_tokens=5),
        )

    async def aclose(self) -> None:
        return None
