"""``single``: agent 0, one attempt, LiveCodeBench's prompt. The baseline every team is measured against.

By default the attempt is exactly a team's first draft (the agent's own temperature, LiveCodeBench's
prompt), so in a paired bench it replays agent 0's draft of every team. Two options measure the baseline
the way a model's published figures were made instead (docs/baselines.md):

- ``prompt=published``: the plain "complete this function" prompt of the Qwen2.5-Coder instruct
  evaluations (:func:`published_messages`), for problems given as a function to complete (HumanEval,
  HumanEval-X);
- ``temperature=T``: this row samples at ``T`` instead of the run's temperature (0: greedy decoding).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from memdoor.core.candidates import Candidate, Selection
from memdoor.core.errors import UsageError
from memdoor.core.messages import Message
from memdoor.core.problem import Problem
from memdoor.strategies import messages
from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun

PUBLISHED_PYTHON_SYSTEM = (
    "You are an intelligent programming assistant to produce Python algorithmic solutions"
)
"""The system message of the HumanEval (EvalPlus) evaluation of Qwen2.5-Coder's instruct models
(QwenLM/Qwen2.5-Coder, ``qwencoder-eval/instruct/eval_plus/model.py``, the ``ChatML`` decoder)."""
PUBLISHED_PYTHON_USER = "Can you complete the following Python function?\n```python\n{prompt}\n```\n"
"""Its user message; ``{prompt}`` is HumanEval's prompt, stripped. (That evaluation also starts the
answer with a fence and stops at the closing one; a chat call here cannot, and the code is taken from
the answer's fenced block instead: docs/baselines.md.)"""
PUBLISHED_MULTIPL_E_USER = (
    "Please continue to complete the function and return all completed code in a codeblock. "
    "Here is the given code to do completion:\n```{fence}\n{prompt}\n```"
)
"""The one message of the MultiPL-E evaluation of the instruct models (QwenLM/Qwen2.5-Coder,
``qwencoder-eval/instruct/multipl_e/chat/evaluate.py``), without a system message (the model's chat
template adds its default one); ``{prompt}`` is the function's prompt, stripped."""
PUBLISHED_FENCES = {"javascript": "js", "rust": "rust"}
"""The fence's language tag: that evaluation writes its own language name (``js``); Rust has no
published figure from it, and takes the Markdown tag."""


def completes_a_function(problem: Problem) -> bool:
    """Whether the problem is given as a function to complete (HumanEval, HumanEval-X): the problems the
    published prompt was written for. By suite as well as by test kind: a HumanEval-X problem without an
    example test has no public test, so the view a strategy gets (hidden tests removed) has no ``check``."""
    return problem.kind == "check" or problem.platform in ("humaneval", "humaneval-x")


def published_messages(problem: Problem) -> list[Message]:
    """The messages the published evaluations sent for ``problem`` (in its language): its function
    prompt, stripped, in the evaluation's own words. UsageError for a problem that is not a function to
    complete (a contest problem read from standard input, a LeetCode statement)."""
    if not completes_a_function(problem):
        raise UsageError(
            f"problem {problem.id}: single[prompt=published] asks for a function to complete "
            "(HumanEval, HumanEval-X suites); use prompt=livecodebench for other problems"
        )
    prompt = (problem.starter_code or problem.statement).strip()
    if problem.language == "python":
        return [
            {"role": "system", "content": PUBLISHED_PYTHON_SYSTEM},
            {"role": "user", "content": PUBLISHED_PYTHON_USER.format(prompt=prompt)},
        ]
    user = PUBLISHED_MULTIPL_E_USER.format(fence=PUBLISHED_FENCES[problem.language], prompt=prompt)
    return [{"role": "user", "content": user}]


class SingleConfig(StrategyConfig):
    """Options of ``single``: both left at their default, the attempt is a team's first draft."""

    prompt: Literal["livecodebench", "published"] = Field(
        default="livecodebench",
        description="livecodebench: LiveCodeBench's prompt (a team's first draft); published: the plain "
        "'complete this function' prompt of the Qwen2.5-Coder instruct evaluations (HumanEval, "
        "HumanEval-X problems only; docs/baselines.md).",
    )
    temperature: float | None = Field(
        default=None,
        ge=0,
        le=2,
        strict=True,
        description="Sampling temperature of this row's attempt (0: greedy decoding); None: the run's "
        "temperature of agent 0.",
    )

    recorded_when_set: ClassVar[frozenset[str]] = frozenset({"prompt", "temperature"})


class Single(BaseStrategy):
    """One attempt by the team's first agent; no selection, no repair."""

    name = "single"
    Config = SingleConfig
    config: SingleConfig

    async def loop(self, run: TeamRun) -> None:
        agent = run.team[0]
        if self.config.prompt == "livecodebench" and self.config.temperature is None:
            await run.draft(agent)
            return
        view = run.view(agent)
        if self.config.prompt == "published":
            msgs = published_messages(view)
        else:
            msgs = messages.draft(view, agent.config.prompt_variant)
        await run.attempt(agent, msgs, role="draft", round=0, temperature=self.config.temperature)

    async def choose(self, run: TeamRun) -> tuple[list[Candidate], Selection | None]:
        return run.candidates, None
