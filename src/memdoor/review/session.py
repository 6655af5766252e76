"""One review run: prepare (refuse bad input before any model loads), then the stages ``config.stages``
names, in order — the test command on base and head (``tests``), the changed functions run on both
versions and their differences judged against the description (``differential``), and the agents'
reading of every part decided by consensus, with its patch built and tested (``reading``) — and record
config, ledger and trace like a solve run. A reading finding an execution finding shows is merged into
it (:mod:`memdoor.review.corroborate`).

    prepared = prepare(diff_text, Path("."), config, workdir)   # ReviewInputError: exit 2
    async with open_env(trace_dir=...) as env:
        report = await run_review(prepared, config, env)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field

from memdoor.agents.calls import CallContext
from memdoor.agents.team import Agent, team_configs
from memdoor.core.budget import Budget, BudgetTracker
from memdoor.core.errors import MemdoorError, NothingToReview, ReviewInputError, SandboxError
from memdoor.core.ledger import Ledger
from memdoor.core.net import redact_spec, shown_specs
from memdoor.core.trace import Trace
from memdoor.judging.judge import Judge
from memdoor.models.catalog import parameters_of
from memdoor.review.consensus import Consensus, Group, decide, quorum
from memdoor.review.context import Part, Skipped, build_parts, skipped_unread
from memdoor.review.corroborate import merge
from memdoor.review.counting import at_or_above, counted_severities
from memdoor.review.diff import MAX_DIFF_BYTES, FileDiff, parse_diff
from memdoor.review.differential.execute import Difference
from memdoor.review.differential.stage import (
    MAX_FUNCTIONS,
    DifferentialStage,
    behaviour_of,
    findings_of,
    run_stage,
)
from memdoor.review.differential.trees import touched_paths
from memdoor.review.findings import AgentReview
from memdoor.review.gitrange import Range, export_tree, restore_base
from memdoor.review.patch import Patch, assemble
from memdoor.review.reading import ask_agent, reason, test_text
from memdoor.review.repo import (
    apply_patch,
    changed_copy,
    check_agreement,
    checkout_copy,
    copy_tree,
    git_changes,
    os_reason,
    repo_root,
    shown_name,
    tracked_files,
)
from memdoor.review.stages import STAGES, Stages
from memdoor.review.testresults import TestFailure
from memdoor.review.testrun import TestRun, TestRunConfig, check_reachable, run_tests
from memdoor.review.testsight import sight_for
from memdoor.review.teststage import TestStage, base_copy, base_problem, compare, unusable_reason
from memdoor.review.threads import in_thread
from memdoor.run.config import DEFAULT_MODEL
from memdoor.run.env import RunEnv
from memdoor.run.record import save_record
from memdoor.run.tracestore import TraceRecord

FailOn = Literal["info", "low", "medium", "high", "critical", "never"]

MAX_FILES = 200
"""Files a diff may change for one review (``--max-files``); more is refused before any copy or call."""
MAX_PARTS = 60
"""Parts (files sent to the agents) per review (``--max-parts``); more is refused before any call."""
BUDGET_CALLS = 400
"""Model calls of a review by default (``--budget-calls``): 60 parts × 3 agents, each with a follow-up."""
BUDGET_TOKENS = 2_000_000
"""Prompt and completion tokens of a review by default (``--budget-tokens``)."""


def default_budget() -> Budget:
    return Budget(calls=BUDGET_CALLS, tokens=BUDGET_TOKENS)


class ReviewConfig(BaseModel):
    """Everything that decides a review (recorded with it)."""

    model_config = ConfigDict(extra="forbid")

    agents: int = Field(default=3, ge=1, le=64, description="Reviewers N; ⌈N/2⌉ of them make a consensus.")
    models: list[str] = Field(
        default_factory=lambda: [DEFAULT_MODEL], min_length=1, description="Round-robin."
    )
    test: str | None = Field(default=None, description="Shell command running the repository's tests.")
    fail_on: FailOn = Field(
        default="high",
        description="Exit 1 on a verified finding this severe or more (see fail_on_unverified).",
    )
    fail_on_unverified: bool = Field(
        default=False, description="--fail-on counts the reading review's unverified findings too."
    )
    description: str | None = Field(
        default=None, description="The change's description (untrusted; fenced where it enters a prompt)."
    )
    commit_messages: str | None = Field(
        default=None,
        description="The range's commit messages under their heading (--base; untrusted, fenced). Shown to "
        "the agents judging a difference, never read for the refactoring rule.",
    )
    stages: Stages = Field(
        default_factory=lambda: list(STAGES), description="The stages that run, in the pipeline's order."
    )
    budget: Budget = Field(
        default_factory=default_budget,
        description=f"Tokens, calls and seconds for the whole review (default {BUDGET_CALLS} calls, "
        f"{BUDGET_TOKENS:,} tokens).",
    )
    seed: int = Field(
        default=0, description="Base sampling seed; the k-th agent of a model samples with seed + 1000 * k."
    )
    max_tokens: int = Field(default=1024, ge=16, description="Completion token cap per call.")
    params: dict[str, float] = Field(
        default_factory=dict,
        description="Parameter counts of models the catalog does not know (spec or name → count), for compute.",
    )
    temperatures: list[float] = Field(default_factory=lambda: [0.2, 0.6, 0.8, 0.4, 1.0], min_length=1)
    logprobs: bool = Field(
        default=True, description="Ask for token log-probabilities (the confidence signal)."
    )
    format_retries: int = Field(
        default=1,
        ge=0,
        le=3,
        description="Follow-ups asking an agent whose answer had no readable JSON for the JSON block alone.",
    )
    max_part_chars: int = Field(
        default=9000,
        ge=1000,
        description="Largest part (one file's diff and code) sent to an agent, in characters: about 2,300 "
        "tokens, so the prompt and 1024 new tokens fit the embedded models' 4096-token context.",
    )
    max_diff_bytes: int = Field(default=MAX_DIFF_BYTES, ge=1, description="Largest diff accepted.")
    max_files: int = Field(
        default=MAX_FILES, ge=1, description="Most files a diff may change (more is refused: --max-files)."
    )
    max_parts: int = Field(
        default=MAX_PARTS, ge=1, description="Most parts sent to the agents (more is refused: --max-parts)."
    )
    test_timeout_s: float = Field(default=600.0, gt=0, description="Wall-clock seconds per test command run.")
    test_paths: list[str] = Field(
        default_factory=list, description="More directories the test command sees, read-only (--test-path)."
    )
    test_env: list[str] = Field(
        default_factory=list, description="Names of the variables passed to the test command (--test-env)."
    )
    differential_inputs: int = Field(
        default=6, ge=0, le=20, description="Inputs each agent writes per changed function."
    )
    max_functions: int = Field(
        default=MAX_FUNCTIONS, ge=1, le=200, description="Changed functions the differential stage compares."
    )

    def shown(self) -> dict[str, Any]:
        """This config as reports, traces and memory record it: its JSON dump with each model spec shown
        by :func:`memdoor.core.net.redact_spec` (no password or key of a spec's URL)."""
        return shown_specs(self.model_dump(mode="json"))


class Unusable(BaseModel):
    """An answer that was recorded and ignored."""

    agent: str
    file: str
    error: str
    reason: Literal["unreadable", "model", "budget"] = Field(
        default="model", description="No readable findings JSON, a model failure, or the budget spent."
    )


class ReviewReport(BaseModel):
    """The result of a review: what is reported, what was skipped, what it cost, where its trace is."""

    findings: list[Group] = Field(default_factory=list, description="Consensus findings, most severe first.")
    minority: list[Group] = Field(default_factory=list, description="The others, ranked.")
    patch: Patch | None = None
    tests: TestRun | None = Field(default=None, description="The test command on the changed code.")
    base_tests: TestRun | None = Field(default=None, description="The test command on the base.")
    pre_existing: list[TestFailure] = Field(
        default_factory=list, description="Tests that already fail on the base (never blamed on the change)."
    )
    differential: DifferentialStage | None = Field(
        default=None, description="What the differential stage did (None when it did not run)."
    )
    observed_behaviour: list[Difference] = Field(
        default_factory=list,
        description="Differences the description asks for: what the change observably does (no finding).",
    )
    stages_run: list[str] = Field(default_factory=list, description="The stages that ran, in order.")
    reading_seconds: float | None = Field(
        default=None,
        description="Wall seconds of the reading review: its agents, the consensus and the patch's test run "
        "(None: it did not run). The test stage and the differential stage time themselves; a model is loaded "
        "by the first stage that calls it.",
    )
    nothing_to_review: str | None = Field(
        default=None,
        description="Why nothing was reviewed: a --base range with no change, or only deletions, mode "
        "changes or binary files (and no test command to run).",
    )
    complete: bool = Field(default=True, description="False when the review could not be completed.")
    incomplete_reason: str | None = Field(default=None, description="Why not, in one line.")
    agents: int
    quorum: int
    files: list[str] = Field(default_factory=list, description="Files reviewed.")
    skipped: list[Skipped] = Field(default_factory=list)
    unusable: list[Unusable] = Field(default_factory=list)
    dropped: int = Field(default=0, description="Findings dropped for not fitting the schema.")
    stopped: str = Field(default="done", description="done, or budget when the budget ran out.")
    error: str | None = None
    ledger: Ledger = Field(default_factory=Ledger)
    trace_id: str = ""
    config: ReviewConfig

    def incomplete(self, reason: str) -> None:
        """Mark the review not completed (the first reason is kept)."""
        if self.complete:
            self.complete, self.incomplete_reason = False, reason

    def fails(self) -> bool:
        """Whether a consensus finding is at or above ``config.fail_on``: a verified one (reproduced by
        execution), or any with ``config.fail_on_unverified`` — then the reading review's consensus
        findings merged into an execution finding count at their own severity too, as they would have
        unmerged (merging never changes the exit code); the rule is memdoor.review.counting's."""
        if self.config.fail_on == "never":
            return False

        def counted(g: Group) -> list[str]:
            merged = [(a.severity, a.consensus) for a in g.also_read]
            return counted_severities(
                g.severity, g.verified, merged, unverified=self.config.fail_on_unverified
            )

        return at_or_above((s for g in self.findings for s in counted(g)), self.config.fail_on)


class Prepared(BaseModel):
    """A diff checked against its repository, with the changed copy to review."""

    files: list[FileDiff]
    parts: list[Part]
    skipped: list[Skipped]
    root: Path
    changed: Path
    workdir: Path
    base_commit: str | None = Field(
        default=None,
        description="A range's base commit (--base), which the base the tests run on is built from; None (a "
        "diff file): the base is the changed copy with the diff applied in reverse.",
    )
    head_commit: str | None = Field(
        default=None, description="The range's head commit (--head): ``root`` is its exported tree."
    )
    checkout: Path = Field(
        description="The user's checkout (``root``, or the one a range is read from): what the test "
        "command's view is worked out from, e.g. which links its git tracks (testsight.py)."
    )
    binary: list[str] = Field(
        default_factory=list,
        description="A range's binary files, left out of the diff: where a test finding of a range of "
        "binary files alone points.",
    )


def prepare(
    diff_text: str, repo: Path, config: ReviewConfig, workdir: Path, found: Range | None = None
) -> Prepared:
    """Parse the diff, make the changed copy in ``workdir`` and split the work per file. A diff file is
    checked to apply to the checkout at ``repo``, one way only. ``found``: the git range the diff is
    (``--base``; ``repo`` is its head, copied as it is), whose base commit the tests' base is built
    from. ReviewInputError for bad input (a file of the checkout that cannot be read included);
    NothingToReview when no file can be reviewed — except a range's with a test command, which is
    prepared with no parts for its tests alone (a deletion can break a test). Nothing calls a model.
    With a test command, ``workdir``'s parents must be searchable by other users (SandboxError)."""
    # a range of binary files alone comes with no diff, for its tests alone (gitrange.read_range)
    binary_only = found is not None and not diff_text.strip() and bool(found.binary)
    files = [] if binary_only else parse_diff(diff_text, max_bytes=config.max_diff_bytes)
    if len(files) > config.max_files:
        raise ReviewInputError(
            f"the diff changes {len(files)} files; a review takes at most {config.max_files} "
            "(--max-files raises the limit; or review it in parts)"
        )
    root = repo_root(repo)
    if not binary_only:
        check_agreement(files, git_changes(root, diff_text))  # reviewed = what git applies, or refused
    # a range of deletions and mode changes can still break a test: with a test command, run it alone
    tests_only = found is not None and runs_tests(config) and no_code(files)
    if binary_only and not tests_only:  # read_range keeps such a range only for a test command
        raise NothingToReview("only binary files change: nothing to review")
    unread = [skipped_unread(fd, config.max_part_chars) for fd in files]
    if files and all(unread) and not tests_only:  # before the copy: a mode change alone applies both ways
        _nothing_reviewable(
            [Skipped(file=fd.path, reason=str(why)) for fd, why in zip(files, unread, strict=True)], files
        )
    os.chmod(workdir, 0o711)  # the test command's unprivileged uid must reach the copies
    if config.test and os.geteuid() == 0:
        check_reachable(workdir / "x")  # SandboxError now, before any copy or model call
    try:  # the user's checkout: a file it cannot read is bad input, not a crash
        changed = _changed(root, diff_text, workdir / "changed", found)
        parts, skipped = build_parts(files, changed, config.max_part_chars)
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        raise ReviewInputError(f"the checkout {root} cannot be copied: {where}{e.strerror or e}") from None
    if not parts and not tests_only:
        _nothing_reviewable(skipped, files)
    if len(parts) > config.max_parts:
        raise ReviewInputError(
            f"the diff has {len(parts)} files to review; a review takes at most {config.max_parts} "
            "(--max-parts raises the limit; or review it in parts)"
        )
    return Prepared(
        files=files, parts=parts, skipped=skipped, root=root, changed=changed, workdir=workdir,
        base_commit=found.base_commit if found else None, head_commit=found.head_commit if found else None,
        checkout=found.root if found else root, binary=found.binary if found else [],
    )  # fmt: skip


def runs_tests(config: ReviewConfig) -> bool:
    """Whether the review runs a test command: one given, and the ``tests`` stage chosen."""
    return bool(config.test) and "tests" in config.stages


def binary_location(binary: list[str], changed: Path) -> str:
    """Where a test finding of a range of binary files alone points: its first binary file the change
    keeps whose name is UTF-8 (not a deleted file, nor a rename's old name), else its first name as a
    report can hold it (bytes that are not UTF-8 written ``\\xNN``); "-" for none."""
    for name in binary:
        if shown_name(name) == name and (changed / name).is_file():
            return name
    return shown_name(binary[0]) if binary else "-"


def no_code(files: list[FileDiff]) -> bool:
    """Whether the diff changes no code: every file deleted, or changed without a hunk (a mode, a rename,
    a binary file)."""
    return all(f.deleted or not f.hunks for f in files)


def _nothing_reviewable(skipped: list[Skipped], files: list[FileDiff]) -> NoReturn:
    """No file of the diff can be reviewed, and why (the first five): NothingToReview when the diff
    changes no code (:func:`no_code`), ReviewInputError when code it changes cannot be read (a part
    too long, a file that is not text after the change)."""
    why = "; ".join(f"{s.file}: {s.reason}" for s in skipped[:5]) + ("; …" if len(skipped) > 5 else "")
    error = NothingToReview if no_code(files) else ReviewInputError
    raise error(f"nothing in the diff can be reviewed ({why})")


def _changed(root: Path, diff_text: str, dest: Path, found: Range | None) -> Path:
    """The changed code at ``dest``. A range's is its head as it is — the exported head commit, or the
    working tree — since git made the diff from it: applying the diff there could apply it a second
    time. A diff file's is the checkout with the diff applied, unless it holds the change already."""
    return checkout_copy(root, dest) if found is not None else changed_copy(root, diff_text, dest)


def fresh_copy(src: Path, dest: Path) -> Path:
    """A copy of ``src`` for one test run (a test command may change the files it runs in)."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def base_tree(prepared: Prepared, dest: Path, paths: list[str] | None = None) -> Path:
    """The base the tests run on, at ``dest``. A range's comes from its base commit: with ``--head`` that
    commit's whole tree, exported and copied as the changed tree was; against the working tree, a copy
    of the working tree with every path the range changes put back as the commit has it
    (:func:`memdoor.review.gitrange.restore_base`). ``paths`` (a range's base only): just those paths as
    the base commit has them, exported alone, in both modes — the differential stage's base, which is
    read at the diff's paths only (against the working tree, every path of the diff is one the range
    changes, so the whole base has the commit's version there too). A diff file's base is the changed
    copy with the diff applied in reverse. git's scratch tree is ``dest``'s name with ``-tree`` in the
    work directory. ReviewInputError (one line) when git or the file system cannot build it."""
    scratch = prepared.workdir / f"{dest.name}-tree"
    try:
        if prepared.base_commit is None:
            base_copy(fresh_copy(prepared.changed, dest), "".join(f.text for f in prepared.files))
        elif prepared.head_commit is not None or paths is not None:
            tree = export_tree(prepared.root, prepared.base_commit, scratch, paths=paths, what="--base")
            files = tracked_files(tree)
            copy_tree(tree, files if paths is None else sorted(set(files) & set(paths)), dest)
        else:
            fresh_copy(prepared.changed, dest)
            restore_base(prepared.root, prepared.base_commit, dest, scratch)
    except OSError as e:  # a rename, a removal or a copy the file system refused: not a crash
        raise ReviewInputError(f"the base cannot be built: {os_reason(e, prepared.workdir)}") from None
    return dest


def test_limits(config: ReviewConfig, checkout: Path | None) -> TestRunConfig:
    """The test command's limits and view: the user's tools as this process's environment finds them."""
    sight = sight_for(
        config.test or "",
        os.environ,
        test_paths=[Path(p) for p in config.test_paths],
        test_env=config.test_env,
        checkout=checkout,
    )
    return TestRunConfig(timeout_s=config.test_timeout_s, sight=sight)


async def run_tests_async(
    src: Path, dest: Path, command: str, config: ReviewConfig, checkout: Path | None = None
) -> TestRun:
    limits = test_limits(config, checkout)
    return await in_thread(lambda cancel: run_tests(fresh_copy(src, dest), command, limits, cancel))


async def test_stage(prepared: Prepared, config: ReviewConfig, ctx: CallContext) -> TestStage:
    """The test command on the base, then (when it ran there) on the changed code, compared
    (:mod:`memdoor.review.teststage`). SandboxError when the sandbox cannot run it."""
    command = config.test or ""
    limits = test_limits(config, prepared.checkout)

    try:  # a base that cannot be built: the stage stops with the reason, the review is incomplete
        base_dir = await in_thread(lambda _: base_tree(prepared, prepared.workdir / "base"))
    except ReviewInputError as e:
        return TestStage(unusable=str(e))

    def on_base(cancel: threading.Event) -> TestRun:
        return run_tests(base_dir, command, limits, cancel)

    base = await in_thread(on_base)
    await ctx.event("tests", None, on="base", passed=base.passed, exit_code=base.exit_code)
    problem = base_problem(base)
    if problem is not None:
        return TestStage(base=base, unusable=unusable_reason(base, problem))
    head = await run_tests_async(
        prepared.changed, prepared.workdir / "changed-run", command, config, prepared.checkout
    )
    await ctx.event("tests", None, on="change", passed=head.passed, exit_code=head.exit_code)
    return compare(
        base, head, prepared.files or [FileDiff(path=binary_location(prepared.binary, prepared.changed))]
    )


def compared(differential: DifferentialStage | None) -> bool:
    """Whether the differential stage ran a changed function on both versions (none: it executed nothing)."""
    return differential is not None and any(f.outcome != "not run" for f in differential.functions)


def differential_findings(differential: DifferentialStage | None) -> list[Group]:
    """The differential stage's findings (each marked as shown by that stage)."""
    return findings_of(differential) if differential is not None else []


def _completion(report: ReviewReport, reviews: list[AgentReview], executed: bool) -> None:
    """Mark ``report`` incomplete when no stage could stand: every model call of the reading review
    failed, or the budget stopped every answer before an execution stage (``executed``) ran."""
    if not reviews or any(r.error is None for r in reviews):
        return
    if all(r.budget for r in reviews) and not executed:
        report.incomplete("the budget stopped the review before any stage ran")
    elif not any(r.budget for r in reviews) and all(not r.unreadable for r in reviews):
        report.incomplete("every model call failed")


async def checked_patch(consensus: Consensus, prepared: Prepared, config: ReviewConfig, ctx: CallContext):
    """The patch of the consensus suggestions, applied with ``git apply`` to a copy and tested there."""
    patch = assemble(consensus.findings, prepared.changed)
    if patch is None or not patch.diff:
        return patch
    patched = prepared.workdir / "patched"
    try:  # git on a copy of the tree: off the event loop (a server answers meanwhile)
        await in_thread(lambda _: apply_patch(fresh_copy(prepared.changed, patched), patch.diff))
    except ReviewInputError as e:  # our own patch did not apply: say so, offer nothing
        patch.left_out.append(f"the patch does not apply: {e}")
        patch.diff = ""
        return patch
    if config.test:
        patch.tests = await run_tests_async(
            patched, prepared.workdir / "patched-run", config.test, config, prepared.checkout
        )
        await ctx.event("patch_tests", None, passed=patch.tests.passed, exit_code=patch.tests.exit_code)
    return patch


def make_team(config: ReviewConfig, env: RunEnv) -> list[Agent]:
    """The review's agents: ``config.agents`` over ``config.models``, each with its model's size."""
    configs = team_configs(
        config.models, config.agents, temperatures=config.temperatures, seed=config.seed,
        max_tokens=config.max_tokens,
    )  # fmt: skip
    for c in configs:  # the model's size makes each call's compute (≈ 2 × parameters × tokens)
        c.parameters = parameters_of(c.model, config.params)
    return [Agent(c, env.pool.get(c.model)) for c in configs]


async def _tests(report: ReviewReport, prepared: Prepared, config: ReviewConfig, ctx: CallContext):
    """The test stage into ``report`` (None when there is no test command or no sandbox for it)."""
    if not config.test:
        return None
    report.stages_run.append("tests")
    try:
        stage = await test_stage(prepared, config, ctx)
    except SandboxError as e:
        report.incomplete(f"no sandbox for the tests: {e}")
        return None
    report.base_tests, report.tests = stage.base, stage.head
    report.pre_existing = stage.pre_existing
    if stage.unusable is not None:
        report.incomplete(stage.unusable)
    return stage


async def _differential(
    report: ReviewReport, prepared: Prepared, config: ReviewConfig, env: RunEnv, team: list[Agent],
    ctx: CallContext,
) -> DifferentialStage | None:  # fmt: skip
    """The differential stage into ``report``: its record, and the differences the description asks for
    as the change's observed behaviour (its findings are taken by the caller)."""
    report.stages_run.append("differential")
    build = None  # a diff file's: the diff's files with the diff reversed (the stage's own)
    if prepared.base_commit is not None:  # a range's: from its base commit, only the paths the stage reads
        build = functools.partial(base_tree, prepared, paths=sorted(touched_paths(prepared.files)))
    try:
        stage = await run_stage(
            prepared.files, prepared.changed, prepared.workdir, team, ctx,
            Judge(env.sandbox, env.sandbox_slots), config.description,
            commit_messages=config.commit_messages, inputs_per_agent=config.differential_inputs, max_functions=config.max_functions,
            logprobs=config.logprobs,
            base=build,
        )  # fmt: skip
    except SandboxError as e:
        report.incomplete(f"no sandbox for the differential stage: {e}")
        return None
    report.differential = stage
    if stage.stopped not in (None, "budget"):  # its base (or its files) could not be read: nothing compared
        report.incomplete(f"the differential stage compared nothing: {stage.stopped}")
    report.observed_behaviour = behaviour_of(stage)
    if stage.stopped == "budget":
        report.stopped = "budget"
    await ctx.event(
        "differential", None, functions=len(stage.functions), differences=len(stage.differences),
        not_reproduced=len(stage.not_reproduced), outcome=stage.outcome, rule=stage.rule,
    )  # fmt: skip
    return stage


async def _reading(
    report: ReviewReport, prepared: Prepared, config: ReviewConfig, team: list[Agent], ctx: CallContext
) -> list[AgentReview]:
    """Every agent's reading of every part; unusable answers noted in ``report``."""
    tests = test_text(report.tests)
    reviews = await asyncio.gather(
        *(
            ask_agent(a, part, ctx, tests, config.logprobs, config.format_retries)
            for part in prepared.parts
            for a in team
        )
    )
    for r in reviews:
        report.dropped += len(r.dropped)
        if r.error is not None:
            report.unusable.append(Unusable(agent=r.agent, file=r.part, error=r.error, reason=reason(r)))
            if r.budget:
                report.stopped = "budget"
    return list(reviews)


async def run_review(prepared: Prepared, config: ReviewConfig, env: RunEnv) -> ReviewReport:
    """Review ``prepared`` with a team of ``config.agents``. Never loses a run: the report is recorded
    (memory and ``env.trace_dir``) whatever happens; errors of the run are in ``report.error``."""
    trace = Trace()
    ctx = CallContext(
        memory=env.memory,
        budget=BudgetTracker(config.budget),
        ledger=Ledger(),
        trace=trace,
        price=env.price,
        on_event=env.on_event,
    )
    report = ReviewReport(
        agents=config.agents,
        quorum=quorum(config.agents),
        files=[p.file for p in prepared.parts],
        skipped=prepared.skipped,
        config=config,
        ledger=ctx.ledger,
        trace_id=trace.id,
    )
    if env.on_start is not None:
        env.on_start(trace.id)
    started = time.monotonic()
    try:
        await ctx.event(
            "start",
            None,
            problem=f"review of {', '.join(report.files)}",
            strategy=f"review:{config.agents}",
            config=config.shown(),
        )
        stage = await _tests(report, prepared, config, ctx) if "tests" in config.stages else None
        team = make_team(config, env)
        differential = None
        readable = bool(prepared.parts)  # none: a range's deletions, modes or binaries, for its tests alone
        if "differential" in config.stages and readable:
            differential = await _differential(report, prepared, config, env, team, ctx)
        reviews: list[AgentReview] = []
        consensus = Consensus(agents=config.agents, quorum=quorum(config.agents))
        if "reading" in config.stages and readable:
            report.stages_run.append("reading")
            with _reading_timed(report):
                reviews = await _reading(report, prepared, config, team, ctx)
                consensus = decide(reviews, config.agents)
        _completion(report, reviews, stage is not None or compared(differential))
        executed = (stage.findings if stage else []) + differential_findings(differential)
        merged = merge(executed, consensus, prepared.files)  # a reading finding an execution shows joins it
        report.findings, report.minority = merged.findings, merged.minority
        await ctx.event(
            "consensus", None, findings=len(report.findings), minority=len(report.minority), merged=merged.merged
        )  # fmt: skip
        if "reading" in config.stages and readable:
            with _reading_timed(report):
                report.patch = await checked_patch(consensus, prepared, config, ctx)
    except Exception as e:  # a failed review is a result, not a crash
        report.error = f"{type(e).__name__}: {e}"
        report.incomplete(f"the review failed: {report.error}")
        with contextlib.suppress(MemdoorError):
            await ctx.event("error", None, error=report.error)
    finally:
        ctx.ledger.wall_seconds = time.monotonic() - started
        await record(report, trace, env)
    return report


@contextlib.contextmanager
def _reading_timed(report: ReviewReport) -> Iterator[None]:
    """Add the block's wall seconds to the reading review's, however it ends."""
    started = time.monotonic()
    try:
        yield
    finally:
        report.reading_seconds = (report.reading_seconds or 0.0) + time.monotonic() - started


async def record(report: ReviewReport, trace: Trace, env: RunEnv) -> None:
    """The report to memory (final answer, trace) and the trace file; a failure to record is noted."""
    totals = report.ledger.totals().model_dump(mode="json")
    final = {
        **report.model_dump(mode="json", exclude={"ledger"}),
        "config": report.config.shown(),
        "ledger": totals,  # what `memdoor trace` reads
        "calls": [{**c.model_dump(mode="json"), "model": redact_spec(c.model)} for c in report.ledger.calls],
    }
    problems = await save_record(trace.id, TraceRecord(trace=trace, final=final), env)
    if problems:
        note = "not recorded: " + "; ".join(problems)
        report.error = f"{report.error}; {note}" if report.error else note


__all__ = ["Prepared", "ReviewConfig", "ReviewReport", "prepare", "run_review"]
