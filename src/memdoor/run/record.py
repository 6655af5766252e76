"""Recording a finished run: the final answer and the trace in memory, the trace on disk."""

from __future__ import annotations

from typing import Any

from memdoor.core.errors import MemdoorError
from memdoor.core.problem import Problem
from memdoor.core.solution import Solution
from memdoor.run.config import SolveConfig
from memdoor.run.env import RunEnv
from memdoor.run.tracestore import TraceRecord, save_trace
from memdoor.strategies.context import RunContext

FINAL_FIELDS = {
    "problem_id", "strategy", "code", "agent", "agents", "passed", "verdict", "confidence", "oracle",
    "stopped", "failures", "error", "error_type", "trace_id",
}  # fmt: skip
"""Fields of :meth:`Solution.record` in the final answer (with ``hidden_tests``, ``ledger``, ``config``)."""


def final_answer(problem: Problem, config: SolveConfig, solution: Solution) -> dict[str, Any]:
    """The team's final answer as stored in memory: result, cost and config, no test contents."""
    r = solution.record()
    return {
        **r.model_dump(mode="json", include=FINAL_FIELDS),
        "hidden_tests": len(problem.hidden_tests),
        "ledger": r.totals.model_dump(),
        "config": config.shown(),
    }


async def save_record(task_id: str, rec: TraceRecord, env: RunEnv) -> list[str]:
    """``rec`` to memory (its final answer, and the trace appended) and to ``env.trace_dir``, then handed to
    ``env.on_record`` with the file it went to; what could not be recorded, one line each (a failure to
    record never hides a result)."""
    problems: list[str] = []
    try:
        await env.memory.set_final(task_id, rec.final)
        await env.memory.append(task_id, "trace", rec.model_dump(mode="json"))
    except MemdoorError as e:
        problems.append(f"memory: {type(e).__name__}: {e}")
    path = None
    if env.trace_dir is not None:
        try:
            path = save_trace(env.trace_dir, rec)
        except OSError as e:
            problems.append(f"trace file: {type(e).__name__}: {e}")
    if env.on_record is not None:
        env.on_record(rec, path)
    return problems


async def record(
    problem: Problem, config: SolveConfig, solution: Solution, ctx: RunContext, env: RunEnv
) -> None:
    """Write the final answer and the whole trace to memory, and the trace to ``env.trace_dir``.

    Recording failures never hide the result: they are noted in ``solution.error`` instead.
    """
    answer = final_answer(problem, config, solution)
    problems = await save_record(ctx.task_id, TraceRecord(trace=ctx.trace, final=answer), env)
    if problems:
        note = "; ".join(problems)
        solution.error = f"{solution.error}; {note}" if solution.error else f"not recorded: {note}"
