"""The differential stage as the review runs it: changed functions and programs (:mod:`.kinds`), inputs,
both versions run (:mod:`.plan`, :mod:`.execute`), differences judged; and what it records, so that a reader (or the review benchmark) can tell where a bug was lost:
no input showed a difference, a difference was shown but judged intended, or it did not reproduce.

Findings (:func:`findings_of`): an unintended difference is severity high, an unclear one medium, one
with no description to judge it by ("behaviour changed") low; each is verified and carries its
counterexample. Intended differences are no finding: they are the change's observed behaviour
(:func:`behaviour_of`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from memdoor.agents.calls import CallContext
from memdoor.agents.team import Agent
from memdoor.core.errors import BudgetExceeded, ModelError, ReviewInputError
from memdoor.core.protocols import CodeRunner
from memdoor.review.consensus import Group
from memdoor.review.context import Skipped
from memdoor.review.diff import FileDiff
from memdoor.review.differential.examples import base_inputs
from memdoor.review.differential.execute import Difference, Ran, run_all
from memdoor.review.differential.inputs import Call, Read
from memdoor.review.differential.intent import Rule, ask_verdict, decide, rule_for
from memdoor.review.differential.kinds import find_targets, input_messages, own_for, read_answer
from memdoor.review.differential.plan import plan
from memdoor.review.differential.targets import Target, kind_of, language_of
from memdoor.review.differential.trees import base_files
from memdoor.review.findings import Counterexample
from memdoor.review.threads import in_thread

MAX_FUNCTIONS = 20
"""Changed functions and programs compared per review by default (the others are listed as skipped)."""
MAX_INPUTS = 100
"""Inputs run per function or program at most (ours and the agents' together)."""

StageOutcome = Literal["not run", "no difference", "not reproduced", "intended", "reported"]
_RANK: dict[str, int] = {"none": 0, "not run": 1, "no difference": 2, "not reproduced": 3, "intended": 4,
                         "reported": 5}  # fmt: skip


class FunctionReport(BaseModel):
    """What the stage did with one changed function or standard-input program."""

    file: str
    name: str = Field(description="The function, or the program's path.")
    target: Literal["function", "program"] = "function"
    language: Literal["python", "javascript", "rust"] = "python"
    line: int
    why: str = Field(description="Why it was compared (its code changed, or it reads a changed name).")
    inputs_own: int = Field(default=0, description="Inputs of our own (signature, changed lines' literals).")
    inputs_agents: int = Field(default=0, description="Inputs the agents wrote (accepted, distinct).")
    rejected: int = Field(
        default=0, description="Agents' inputs refused (not literals, too large, too many)."
    )
    inputs: int = Field(default=0, description="Inputs run on both versions.")
    differing: int = Field(default=0, description="Inputs whose outcomes differed on the first run.")
    reproduced: int = Field(default=0, description="Of those, the ones that differed the same way again.")
    differences: int = Field(default=0, description="Distinct differences kept (smallest input each).")
    intended: int = 0
    unintended: int = 0
    unclear: int = 0
    unjudged: int = Field(default=0, description="Kept differences with no description to judge them by.")
    note: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> StageOutcome:
        """Where this function's differences ended: not run, no difference, not reproduced, intended, or
        reported (a finding)."""
        if self.note is not None or self.inputs == 0:
            return "not run"
        if self.differing == 0:
            return "no difference"
        if self.reproduced == 0:
            return "not reproduced"
        return "reported" if self.unintended + self.unclear + self.unjudged else "intended"


class DifferentialStage(BaseModel):
    """The stage's record in the review's report."""

    rule: Rule = Field(description="How differences were judged: refactoring, no description, or agents.")
    functions: list[FunctionReport] = Field(default_factory=list)
    skipped: list[Skipped] = Field(
        default_factory=list, description="Changed files, functions or programs not compared."
    )
    differences: list[Difference] = Field(default_factory=list, description="Reproduced, judged.")
    not_reproduced: list[Difference] = Field(default_factory=list, description="Differed once, not again.")
    unusable: list[str] = Field(default_factory=list, description="Agents' answers that could not be used.")
    calls: int = Field(default=0, description="Model calls the stage made.")
    seconds: float = 0.0
    stopped: str | None = Field(default=None, description="Why the stage stopped early, if it did.")
    budget_spent: bool = Field(default=False, description="A model call was refused: the budget was spent.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> str:
        """The furthest any function got: reported, intended, not reproduced, no difference, not run, or
        none (no changed function)."""
        return max((f.outcome for f in self.functions), key=lambda o: _RANK[o], default="none")


async def ask_inputs(
    agent: Agent, fn: Target, ctx: CallContext, count: int, logprobs: bool
) -> tuple[Read, str | None, bool]:
    """One agent's inputs for one function or program, why its answer could not be used (None when it
    could), and whether the budget refused the call."""
    try:
        resp = await agent.ask(input_messages(fn, count), ctx, role="differential-inputs", logprobs=logprobs)
    except BudgetExceeded as e:
        return Read(unreadable=True), f"{agent.id}: budget: {e}", True
    except ModelError as e:
        return Read(unreadable=True), f"{agent.id}: {type(e).__name__}: {e}", False
    text = resp.completions[0].text
    read = read_answer(fn, text, agent.id, count)
    await ctx.event("inputs", agent.id, function=fn.name, inputs=len(read.calls), rejected=len(read.rejected),
                    text=text[:4000])  # fmt: skip
    return read, (f"{agent.id}: no list of inputs for {fn.name}" if read.unreadable else None), False


def _merge(own: list[Call], reads: list[Read], limit: int = MAX_INPUTS) -> list[Call]:
    """Own inputs and the agents', distinct, the agents' interleaved first (they aim at the change)."""
    depth = max((len(r.calls) for r in reads), default=0)
    theirs = [r.calls[k] for k in range(depth) for r in reads if k < len(r.calls)]
    out: list[Call] = []
    seen: set[str] = set()
    for c in [*theirs, *own]:
        if c.text not in seen:
            seen.add(c.text)
            out.append(c)
    return out[:limit]


async def judge(
    diffs: list[tuple[Target, Difference]], rule: Rule, description: str, team: list[Agent],
    ctx: CallContext, logprobs: bool, unusable: list[str],
) -> bool:  # fmt: skip
    """Set each difference's verdict by ``rule`` (the agents asked only under the ``agents`` rule); True
    when the budget refused a call."""
    if rule != "agents":
        for _, d in diffs:
            d.verdict = "unintended" if rule == "refactoring" else "behaviour changed"
        return False
    asks = [ask_verdict(a, description, fn, d, ctx, logprobs) for fn, d in diffs for a in team]
    answers = await asyncio.gather(*asks)
    k = 0
    for _, d in diffs:
        votes = {}
        for agent, verdict, error, _ in answers[k : k + len(team)]:
            votes[agent] = verdict
            if error is not None:
                unusable.append(f"{agent}: {error}")
        k += len(team)
        d.votes = {a: v or "none" for a, v in votes.items()}
        d.verdict = decide(votes, len(team))
    return any(spent for *_, spent in answers)


async def run_stage(
    files: list[FileDiff], changed: Path, workdir: Path, team: list[Agent], ctx: CallContext,
    runner: CodeRunner, description: str | None, *, commit_messages: str | None = None,
    inputs_per_agent: int = 6, max_functions: int = MAX_FUNCTIONS, logprobs: bool = True,
    base: Callable[[Path], Path] | None = None,
) -> DifferentialStage:  # fmt: skip
    """The whole stage (see the module). ``commit_messages`` (a range's) reach the agents with the
    description, fenced, but never choose the rule. ``base``: how the review builds its base at a
    directory (a range's, from its base commit); None: the diff reversed (:func:`.trees.base_files`). A
    SandboxError is the caller's (no sandbox); a base that cannot be built is a stage that compared
    nothing, with the reason."""
    started, calls_before = time.monotonic(), len(ctx.ledger.calls)
    stage = DifferentialStage(rule=rule_for(description, commit_messages))
    try:
        base_dir = await in_thread(lambda _: base_files(changed, files, workdir / "differential-base", base))
        fns, others, stage.skipped = await in_thread(
            lambda _: find_targets(files, changed, base_dir, max_functions)
        )
    except ReviewInputError as e:
        stage.stopped = str(e)
        return stage
    if not fns and not others:
        stage.seconds = round(time.monotonic() - started, 3)
        return stage
    own = await in_thread(lambda _: base_inputs(fns, files, changed, base_dir))  # found in the base first
    own += await in_thread(lambda _: own_for(others, changed, base_dir, files))
    targets: list[Target] = [*fns, *others]
    asked: list[tuple[Read, str | None, bool]] = [(Read(), None, False)] * (len(targets) * len(team))
    if inputs_per_agent > 0:  # 0: our own inputs only, no model call
        asked = await asyncio.gather(
            *(ask_inputs(a, fn, ctx, inputs_per_agent, logprobs) for fn in targets for a in team)
        )
    work: list[tuple[int, Target, list[Call]]] = []
    for i, fn in enumerate(targets):
        reads = [r for r, _, _ in asked[i * len(team) : (i + 1) * len(team)]]
        stage.unusable += [e for _, e, _ in asked[i * len(team) : (i + 1) * len(team)] if e]
        work.append((i, fn, _merge(own[i], reads)))
        stage.functions.append(_report(fn, own[i], reads, len(work[-1][2])))
    batches, notes = await in_thread(lambda _: plan(work, changed, base_dir, files))
    ran = await run_all(runner, batches, notes, len(targets))
    found = [(fn, d) for (_, fn, _), r in zip(work, ran, strict=True) for d in r.differences]
    spec = "\n\n".join(t.strip() for t in (description, commit_messages) if t and t.strip())
    judged_spent = await judge(found, stage.rule, spec, team, ctx, logprobs, stage.unusable)
    stage.budget_spent = judged_spent or any(spent for *_, spent in asked)
    for report, r in zip(stage.functions, ran, strict=True):
        _tally(report, r)
        stage.differences += r.differences
        stage.not_reproduced += r.not_reproduced
    stage.calls = len(ctx.ledger.calls) - calls_before
    stage.seconds = round(time.monotonic() - started, 3)
    if stage.budget_spent:
        stage.stopped = "budget"
    return stage


def _report(fn: Target, own: list[Call], reads: list[Read], inputs: int) -> FunctionReport:
    return FunctionReport(
        file=fn.file, name=fn.name, target=kind_of(fn), language=language_of(fn), line=fn.line, why=fn.why,
        inputs_own=len(own), inputs_agents=len({c.text for r in reads for c in r.calls}),
        rejected=sum(len(r.rejected) for r in reads), inputs=inputs,
    )  # fmt: skip


def _tally(report: FunctionReport, r: Ran) -> None:
    report.differing, report.reproduced, report.differences = r.differing, r.reproduced, len(r.differences)
    report.note = r.note
    for d in r.differences:
        if d.verdict == "intended":
            report.intended += 1
        elif d.verdict == "unintended":
            report.unintended += 1
        elif d.verdict == "unclear":
            report.unclear += 1
        else:
            report.unjudged += 1


_SEVERITY = {"unintended": "high", "unclear": "medium", "behaviour changed": "low"}


def _message(d: Difference, rule: Rule) -> str:
    shown = f"{d.call_text()} {d.old.show()} before the change and {d.new.show()} after it"
    if d.verdict == "unintended":
        why = (
            "the description says the change keeps behaviour"
            if rule == "refactoring"
            else "the description does not ask for this"
        )
        return f"behaviour changed: {shown} ({why})"
    if d.verdict == "unclear":
        return f"behaviour changed: {shown} (whether the description asks for it is unclear)"
    return f"behaviour changed: {shown} (no description to judge it by)"


def findings_of(stage: DifferentialStage) -> list[Group]:
    """The stage's findings: every reproduced difference not judged intended, most severe first."""
    out = []
    for d in stage.differences:
        if d.verdict not in _SEVERITY:
            continue
        voted = sorted(a for a, v in d.votes.items() if v == d.verdict)
        confidence = round(len(voted) / len(d.votes), 4) if d.votes else 1.0
        example = Counterexample(
            function=d.function, input=d.input.arguments, old=d.old.show(), new=d.new.show()
        )
        out.append(Group(
            file=d.file, line=d.line, end_line=d.end_line, severity=_SEVERITY[d.verdict], kind="bug",
            message=_message(d, stage.rule), agents=voted, confidence=confidence, verified=True,
            counterexample=example, source="differential",
        ))  # fmt: skip
    rank = {"high": 0, "medium": 1, "low": 2}
    return sorted(out, key=lambda g: (rank[g.severity], g.file, g.line))


def behaviour_of(stage: DifferentialStage) -> list[Difference]:
    """The differences judged intended: what the change observably does, as the description asks."""
    return [d for d in stage.differences if d.verdict == "intended"]
