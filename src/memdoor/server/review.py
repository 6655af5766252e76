"""Review models of a server: ``memdoor/review-N`` reviews the diff an editor sends (issue 15 item 4).

Offered when the server has a repository to apply diffs to (``ServeConfig.review_repo``): the last
user message holds a unified diff (the last ```` ```diff ```` / ```` ```patch ```` block, else the whole
text); N agents review it as ``memdoor review`` does (:mod:`memdoor.review.session`), with the
server's models and the server's ``review_test`` as the test command, within the limits a team
request gets (:func:`memdoor.server.service.request_limits`: the server's token cap, budget and
deadline, lowered by the request's; a review stopped by its budget is a 504 ``budget_exceeded``).
The answer's content is the Markdown review; its ``memdoor`` field is the JSON review (findings,
minority, patch with its test result, ledger, trace id). A diff that cannot be reviewed
is a 400 with the one-line reason (every refusal of :func:`memdoor.review.session.prepare`: not a
diff, binary, too large, too many files or parts, a path too deep or long, git and the review reading
it differently, not applying); the server's paths in it are said as "the server's checkout" and "the
review's workspace" (:func:`without_paths`). Without a token budget from the server or the request, a review has
the command's default budget (calls and tokens). A stream gets the review as one content chunk when it is done.

A review that is cancelled (its client left) or passes its deadline stops its work before it lets
go of anything: the blocking steps (git, copies, the test command) run in threads that a cancelled
review stops — a test command is killed — and waits for (:func:`memdoor.review.threads.in_thread`);
its admission ticket is released, and its directory removed (off the event loop), only after them.
The test command's own time limit is the request's, when that is shorter.

A request may carry the review's own fields in a ``review`` object (the openai client's
``extra_body={"review": {...}}``): ``description``, what the change should do (the review's
specification, untrusted, at most :data:`~memdoor.review.description.MAX_DESCRIPTION_CHARS`
characters), and ``stages``, which of ``tests``, ``differential``, ``reading`` run (default all; checked
as ``--stages`` is, with the same error text: :func:`memdoor.review.stages.stage_order`). An unknown
field or a bad value is a 400 naming it. The answer marks each finding ``verified`` (an execution
reproduced it) or not, with its ``counterexample``, as ``memdoor review --format json`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memdoor.core.budget import Budget
from memdoor.core.errors import ReviewInputError, first_problem
from memdoor.review.description import MAX_DESCRIPTION_CHARS, check_description
from memdoor.review.formats import to_json, to_markdown
from memdoor.review.session import (
    BUDGET_CALLS,
    BUDGET_TOKENS,
    ReviewConfig,
    ReviewReport,
    prepare,
    run_review,
)
from memdoor.review.stages import Stages
from memdoor.review.threads import in_thread
from memdoor.review.workspace import workspace
from memdoor.run.env import RunEnv
from memdoor.server.admission import Admission
from memdoor.server.config import ServeConfig
from memdoor.server.errors import BudgetSpent, DeadlineExceeded, InvalidRequest
from memdoor.server.schema import ChatRequest, ChatUsage, chunk_body, completion_body
from memdoor.server.service import RequestLimits, request_limits
from memdoor.server.stream import sse

PREFIX = "memdoor/review-"
_FENCE = re.compile(r"```[ \t]*(?:diff|patch)")
"""The start of a diff fence: its block starts on the next line and ends at the next three backticks."""


class ReviewOptions(BaseModel):
    """A review request's own fields (``"review": {...}``)."""

    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(
        default=None, max_length=MAX_DESCRIPTION_CHARS, description="What the change should do."
    )
    stages: Stages | None = Field(
        default=None, description="Stages to run, as ``memdoor review --stages`` takes them (default all)."
    )


def review_options(request: ChatRequest) -> ReviewOptions:
    """The request's ``review`` object, checked (InvalidRequest, a 400 naming the field)."""
    raw = (request.model_extra or {}).get("review")
    if raw is None:
        return ReviewOptions()
    try:
        return ReviewOptions.model_validate(raw)
    except ValidationError as e:
        where, why = first_problem(e)
        param = f"review.{where}" if where else "review"
        raise InvalidRequest(f"{param}: {why}", param=param) from None


def review_ids(config: ServeConfig) -> list[str]:
    """The review models a server offers (none without a repository)."""
    if config.review_repo is None:
        return []
    return [f"{PREFIX}{n}" for n in config.review_agents]


def diff_blocks(text: str) -> list[str]:
    """The contents of the diff/patch fences of ``text``, in order. A fence opens at three backticks and
    ``diff`` or ``patch`` (its block starts on the next line) and closes at the next three backticks.

    One pass: each search starts where the last block ended (a regular expression reading a fence's line,
    then its block, from every opening found would read a text of openings without an end again and again:
    448 KB of them once held the server 19 s)."""
    blocks: list[str] = []
    at = 0
    while (opening := _FENCE.search(text, at)) is not None:
        start = text.find("\n", opening.end()) + 1
        end = text.find("```", start) if start else -1
        if end < 0:  # no block starts or ends after this opening, nor after any later one
            break
        blocks.append(text[start:end])
        at = end + 3
    return blocks


def diff_of(request: ChatRequest) -> str:
    """The diff in the last user message: its last diff/patch fence, else the whole message."""
    users = [m.text for m in request.messages if m.role == "user" and m.text.strip()]
    if not users:
        raise InvalidRequest("the conversation has no user message with a diff", param="messages")
    blocks = diff_blocks(users[-1])
    return blocks[-1] if blocks else users[-1]


CHECKOUT_NAME = "the server's checkout"
WORKSPACE_NAME = "the review's workspace"


def checkout_paths(repo: Path) -> set[str]:
    """How messages may spell the server's checkout: as configured, resolved, and its top (git's
    ``--show-toplevel``, the first directory from it up holding ``.git``), absolute ones only."""
    spellings = {str(repo)}
    with contextlib.suppress(OSError, RuntimeError):
        resolved = repo.resolve()
        spellings.add(str(resolved))
        spellings |= {str(d) for d in (resolved, *resolved.parents) if (d / ".git").exists()}
    return {p for p in spellings if Path(p).is_absolute() and p != "/"}


def without_paths(message: str, names: dict[str, str]) -> str:
    """``message`` with each path of ``names`` (path → name) said as its name, where the path stands whole
    or begins a longer one: a refusal tells the client what is wrong with its diff, not where the server
    keeps its files (``the diff does not apply to the server's checkout: ...``)."""
    for path in sorted(names, key=len, reverse=True):  # a path inside another is said first
        name = names[path]
        message = re.sub(rf"(?<![\w./-]){re.escape(path)}(?![\w.-])", lambda _, name=name: name, message)
    return message


@contextlib.asynccontextmanager
async def review_workspace() -> AsyncIterator[Path]:
    """:func:`~memdoor.review.workspace.workspace`, removed in a thread (a large tree must not hold the
    event loop), the removal finished even when the review is cancelled meanwhile."""
    made = workspace()
    path = made.__enter__()  # one mkdir
    try:
        yield path
    finally:
        await in_thread(lambda _: made.__exit__(None, None, None))


class ReviewService:
    """Runs review models for chat requests, within the server's admission, deadline and budget."""

    def __init__(self, config: ServeConfig, env: RunEnv, admission: Admission):
        self.config = config
        self.env = env
        self.admission = admission
        self.ids = review_ids(config)
        self.checkout = checkout_paths(config.review_repo) if config.review_repo is not None else set()

    def review_config(self, model: str, request: ChatRequest, limits: RequestLimits) -> ReviewConfig:
        """The review's settings: the server's, within ``limits`` (a test command's time limit too)."""
        test_timeout_s = ReviewConfig.model_fields["test_timeout_s"].default
        if limits.timeout_s is not None:
            test_timeout_s = min(test_timeout_s, limits.timeout_s)
        options = review_options(request)
        stages = {} if options.stages is None else {"stages": options.stages}  # checked, in order
        return ReviewConfig(
            description=check_description(options.description),
            **stages,
            agents=int(model.removeprefix(PREFIX)),
            models=self.config.models,
            test=self.config.review_test,
            fail_on="never",
            budget=Budget(tokens=limits.budget_tokens or BUDGET_TOKENS, calls=BUDGET_CALLS),
            seed=self.config.seed if request.seed is None else request.seed,
            max_tokens=limits.max_tokens,
            test_timeout_s=test_timeout_s,
        )

    async def review(self, request: ChatRequest) -> ReviewReport:
        """Review the request's diff (400 for a bad diff or settings, 504 past the deadline or budget)."""
        limits = request_limits(self.config, request, "review")
        config = self.review_config(request.model, request, limits)
        timeout_s = limits.timeout_s
        text = await asyncio.to_thread(diff_of, request)  # a pass over a large text: not on the event loop
        ticket = self.admission.admit()
        started: list[str] = []  # the review's trace id once it starts
        env = dataclasses.replace(self.env, on_start=started.append)
        try:
            # the workspace is removed however deep a tree is left in it, after every thread returned
            async with asyncio.timeout(timeout_s), ticket.slot(), review_workspace() as tmp:
                repo = Path(self.config.review_repo or ".")  # only review ids (a repo is set) come here
                try:
                    prepared = await in_thread(lambda _: prepare(text, repo, config, tmp))
                except ReviewInputError as e:
                    names = dict.fromkeys(self.checkout, CHECKOUT_NAME)
                    names |= dict.fromkeys({str(tmp), str(tmp.resolve())}, WORKSPACE_NAME)
                    raise InvalidRequest(without_paths(str(e), names), param="messages") from None
                report = await run_review(prepared, config, env)
        except TimeoutError:
            raise DeadlineExceeded(f"the review took longer than its {timeout_s:g} s time limit") from None
        finally:  # after every thread of the review has returned (in_thread waits for them)
            ticket.release()
            if started:
                await self.env.memory.release(started[0])  # the trace is on disk; memory must not grow
        budget, used = config.budget.tokens, report.ledger.tokens
        if budget is not None and (report.stopped == "budget" or used > budget):
            raise BudgetSpent(
                f"the review spent {used} tokens, over the request's budget of {budget}"
                + (" (not every agent finished)" if report.stopped == "budget" else ""),
                trace_id=report.trace_id,
            )
        return report

    def body(self, model: str, report: ReviewReport, created: int) -> dict[str, Any]:
        return completion_body(
            id=f"chatcmpl-{report.trace_id}",
            created=created,
            model=model,
            content=to_markdown(report),
            usage=ChatUsage.of(report.ledger),
            extra=to_json(report),
        )

    def stream(self, model: str, report: ReviewReport, created: int, include_usage: bool) -> list[bytes]:
        """The review as server-sent events: the content in one chunk, the end, the usage if asked."""
        ident = f"chatcmpl-{report.trace_id}"
        events = [
            sse(chunk_body(id=ident, created=created, model=model,
                           delta={"role": "assistant", "content": to_markdown(report)})),
            sse(chunk_body(id=ident, created=created, model=model, delta={}, finish_reason="stop",
                           extra=to_json(report))),
        ]  # fmt: skip
        if include_usage:
            usage = ChatUsage.of(report.ledger)
            events.append(sse(chunk_body(id=ident, created=created, model=model, delta=None, usage=usage)))
        events.append(sse("[DONE]"))
        return events
