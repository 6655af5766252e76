"""The reading review: every agent reads every part of the diff (its hunks, the code around them, how the
tests did) and answers with findings as JSON; the session decides by consensus
(:mod:`memdoor.review.consensus`). Its findings are unverified: no execution reproduced them.
"""

from __future__ import annotations

import json
from typing import Literal

from memdoor.agents.calls import CallContext
from memdoor.agents.team import Agent
from memdoor.core.errors import BudgetExceeded, ModelError
from memdoor.core.messages import Message
from memdoor.prompts import render
from memdoor.review.context import Part
from memdoor.review.fence import fence, inline
from memdoor.review.findings import AgentReview, parse_review
from memdoor.review.testrun import TestRun


def test_text(run: TestRun | None) -> str:
    """How the test command did, for the prompt."""
    if run is None:
        return "(no test command was given)"
    tail = run.output[-2000:].strip()
    return f"`{run.command}` {run.outcome}." + (f"\nIts output ends with:\n{fence(tail)}" if tail else "")


def reason(r: AgentReview) -> Literal["unreadable", "model", "budget"]:
    return "budget" if r.budget else ("unreadable" if r.unreadable else "model")


def file_names(part: Part) -> dict[str, str]:
    """The part's path for the prompts: a code span it cannot close, and a JSON string."""
    return {"file": inline(part.file), "file_json": json.dumps(part.file)}


def messages_for(part: Part, tests: str) -> list[Message]:
    """The prompt of one part: every block from the pull request fenced so that it cannot close its fence."""
    diff, code = fence(part.diff.rstrip("\n"), "diff"), fence(part.code)
    user = render("code_review", **file_names(part), diff=diff, code=code, tests=tests)
    return [{"role": "system", "content": render("code_review_system")}, {"role": "user", "content": user}]


async def ask_agent(
    agent: Agent, part: Part, ctx: CallContext, tests: str, logprobs: bool, format_retries: int = 1
) -> AgentReview:
    """One agent's review of one part. An answer without readable JSON gets up to ``format_retries``
    follow-ups asking for the JSON block alone (small models often describe a bug and never write the
    block). A model failure or budget stop is an unusable review, not a crash."""
    messages = messages_for(part, tests)
    role = "review"
    for attempt in range(1 + format_retries):
        try:
            resp = await agent.ask(messages, ctx, role=role, logprobs=logprobs)
        except BudgetExceeded as e:
            return AgentReview(agent=agent.id, part=part.file, error=str(e), budget=True)
        except ModelError as e:
            return AgentReview(agent=agent.id, part=part.file, error=f"{type(e).__name__}: {e}")
        completion = resp.completions[0]
        review = parse_review(completion.text, agent=agent.id, part=part.file, files={part.file})
        review.mean_logprob = completion.mean_logprob
        await ctx.event(
            "review",  # read like a strategy's review by `memdoor trace`: "reviewed calc.py's code: ISSUES"
            agent.id,
            round=attempt,
            about=part.file,
            ok=None if review.error else not review.findings,
            file=part.file,
            findings=len(review.findings),
            dropped=len(review.dropped),
            error=review.error,
            text=completion.text,  # `memdoor trace ID --code` shows it
        )
        if not review.unreadable:  # read (a model or budget failure returned above)
            return review
        messages = [
            *messages,
            {"role": "assistant", "content": completion.text},
            {"role": "user", "content": render("code_review_format", **file_names(part))},
        ]
        role = "review-format"
    return review
