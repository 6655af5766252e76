"""Agent-written test inputs for a problem that comes with no tests (seed protocol, ``memdoor serve``).

The runner calls :func:`write_tests` before the strategy when ``SolveConfig.test_inputs`` asks for it:
the call is the team's first agent's, so it is budgeted and recorded like every other (ledger, trace,
memory kind ``tests``).
"""

from __future__ import annotations

from collections.abc import Sequence

from memdoor.agents.team import Agent
from memdoor.core.errors import ModelError
from memdoor.core.problem import Problem, TestCase
from memdoor.strategies import messages
from memdoor.strategies.context import RunContext

TEST_WRITING_TOKENS = 512
"""Completion cap of a test-writing call (lower when the run's per-call cap is lower)."""


async def record_inputs(ctx: RunContext, agent_id: str, tests: Sequence[TestCase]) -> None:
    """Inputs an agent wrote, in memory (kind ``tests``) and in the trace (an ``inputs`` event)."""
    written = [t.input for t in tests]
    await ctx.memory.append(ctx.task_id, "tests", {"agent": agent_id, "inputs": written})
    await ctx.event("inputs", agent_id, count=len(written), inputs=written)


async def write_tests(
    problem: Problem, agent: Agent, ctx: RunContext, count: int, *, max_tokens: int = TEST_WRITING_TOKENS
) -> tuple[Problem, str]:
    """Ask ``agent`` for up to ``count`` test inputs (no expected outputs) for ``problem``: the problem
    with them as public tests, so the selector groups candidates by behaviour on them, and ``""``; or
    the problem unchanged and why. Two tries. BudgetExceeded propagates (nothing was written)."""
    note = ""
    for attempt in range(2):
        try:
            resp = await agent.ask(
                messages.inputs(problem, count),
                ctx,
                role="tests",
                logprobs=False,
                temperature=0.2 + 0.4 * attempt,
                max_tokens=max_tokens,
                seed_offset=attempt,
            )
        except ModelError as e:
            note = f"{type(e).__name__}: {e}"
            continue
        text = resp.completions[0].text if resp.completions else ""
        tests = messages.parse_inputs(text, problem, limit=count)
        if tests:
            await record_inputs(ctx, agent.id, tests)
            return problem.model_copy(update={"public_tests": tests}), ""
        note = "the model wrote no usable test input"
    return problem, note
