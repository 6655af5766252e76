"""The ``best`` team preset: the configuration a measurement says solves the most within a compute budget.

``memdoor solve ... --team best --budget-compute X`` picks, among the measured rows whose models the user
has, the one that solved the most at a *mean* compute per problem of at most X (ties to the cheaper) — a
point on the measured cost–accuracy frontier — and says which run it comes from. X only chooses: the
chosen row then runs as it was measured, with its run's own budget (``--budget-compute`` of that bench),
not with X as a per-problem cap (a row whose mean is X spends more than X on some problems).

The measurement is the one shipped with memdoor for the problem's language (:data:`PRESETS`, each built by
:func:`combine` from committed runs, each row saying its run: HumanEval's, :data:`SHIPPED` from
:data:`SHIPPED_RUNS`, for Python problems; HumanEval-X JavaScript's, :data:`SHIPPED_JS` from
:data:`SHIPPED_JS_RUNS`, for JavaScript ones; HumanEval-X Rust's, :data:`SHIPPED_RUST` from
:data:`SHIPPED_RUST_RUNS`, for Rust ones; HumanEval's, saying so, for a language with none or whose
measurement has no row of the user's models where HumanEval's has one: :func:`shipped_for`), or the user's
own bench directory (``--from DIR``: any models, remote ones included, with the sizes the run was given; a
committed run is rebuilt from its portable files first). Only rows today's code would run as they ran are
measured (:func:`stale`: the settings a resumed bench compares, and the revision); the others are listed in
``skipped``. A measurement holds for the suite it was made on; it does not say a cascade saves compute on
other problems (measure your own with ``memdoor bench``): a problem from another platform is told so
(:func:`other_suite_note`). The count chooses, not a test: for a chosen team :func:`describe` adds the paired
test against the best single-model row of the user's models at no more compute (:func:`single_model_match`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from memdoor.bench import portable
from memdoor.bench.analysis import Analysis, analyse
from memdoor.bench.config import BenchConfig, RowSpec, settings_diff, solve_config
from memdoor.bench.formatting import pvalue
from memdoor.bench.frontier import is_single_model
from memdoor.bench.rebuild import rebuild, rebuildable
from memdoor.bench.revision import row_revision
from memdoor.bench.rowstats import ALPHA
from memdoor.bench.stats import mcnemar_exact
from memdoor.bench.store import ResultsStore
from memdoor.core.errors import ResultsStoreError, UsageError
from memdoor.prompts.languages import NAMES

SHIPPED = "presets/humaneval.json"
"""The measurement shipped with memdoor (beside this module)."""
SHIPPED_RUNS = ("humaneval-ranked", "humaneval-rewrite", "humaneval-v2", "humaneval-matched")
"""The committed runs (under ``benchmarks/results``) the shipped measurement is built from, in order of
precedence: a row two runs hold is taken from the earlier one (the mixed teams from ``humaneval-ranked``,
whose mixed rows sampled by rank within their model, as today's code does; ``humaneval-matched`` adds the
1.5B given more compute — two and three draws, repairing its own drafts, ``adaptive:5`` — and the
strong-repair team, so they are chosen among too: e.g. a user with only the 1.5B gets ``adaptive:5``
from 3.75× its compute)."""
SHIPPED_JS = "presets/humaneval-js.json"
"""The measurement shipped with memdoor for JavaScript problems (HumanEval-X JavaScript, 161 problems)."""
SHIPPED_JS_RUNS = (
    "humaneval-js-strong-repair",
    "humaneval-js-inputs",
    "humaneval-js-clean",
    "humaneval-js-matched",
)
"""The committed runs :data:`SHIPPED_JS` is built from, in order of precedence, as BENCHMARKS.md's JavaScript
table takes its rows: the 1.5B alone and the mixed ``parallel:5`` and strong-repair ``hybrid:5`` from
``humaneval-js-strong-repair``; the 0.5B's ``parallel:5``, ``hybrid:5`` and ``sstar:5`` from
``humaneval-js-inputs`` (the same ``hybrid:5`` in ``humaneval-js-clean`` read its inputs as Python, as
today's code no longer does, though its recorded settings are the same), its ``single`` from
``humaneval-js-clean``; ``humaneval-js-matched`` adds the mixed ``cascade:5`` and the 1.5B given the same
compute (two and three draws, repairing its own drafts, ``adaptive:5``)."""
SHIPPED_RUST = "presets/humaneval-rust.json"
"""The measurement shipped with memdoor for Rust problems (HumanEval-X Rust, 163 problems)."""
SHIPPED_RUST_RUNS = ("humaneval-rust-matched",)
"""The committed run :data:`SHIPPED_RUST` is built from: the Rust confirmation (BENCHMARKS.md's Rust table),
the 1.5B alone (one, two and three draws, ``adaptive:5``) and the mixed ``cascade:5``. It has no row of the
0.5B alone, so a user with only the 0.5B is answered from HumanEval's, saying so (:func:`shipped_for`)."""
PRESETS = {
    "python": (SHIPPED, SHIPPED_RUNS),
    "javascript": (SHIPPED_JS, SHIPPED_JS_RUNS),
    "rust": (SHIPPED_RUST, SHIPPED_RUST_RUNS),
}
"""The shipped measurement of each problem language: its file and the committed runs it is built from."""
FALLBACK = "python"
"""The language whose measurement a problem of a language without one is given (HumanEval's)."""
SUITE_NAMES = {
    "humaneval": "HumanEval",
    "humaneval-js": "HumanEval-X JavaScript",
    "humaneval-rust": "HumanEval-X Rust",
}
"""The shipped measurements' suites as the output names them."""


class MeasuredRun(BaseModel):
    """A bench run some rows of a measurement come from, with what they ran under."""

    source: str = Field(description="The results directory.")
    created_at: str = Field(description="When the run started.")
    problems_sha256: str = Field(description="Digest of the run's problems (memdoor.bench.suite).")
    budget_compute: float | None = Field(
        description="The run's compute budget per problem and row (FLOPs; None: none): a chosen row runs "
        "with it, as it was measured."
    )
    budget_tokens: int | None = Field(default=None, description="The run's token budget per problem and row.")
    max_tokens: int = Field(description="The run's completion token cap per call.")
    seed: int = Field(description="The run's base sampling seed.")
    params: dict[str, float] = Field(default_factory=dict, description="Model sizes the run was given.")


class MeasuredRow(BaseModel):
    """One configuration as a bench run measured it."""

    name: str = Field(description="Row name in the run.")
    source: str = Field(description="The results directory the row comes from (its run in ``runs``).")
    strategy: str = Field(description="Strategy spec, e.g. ``cascade:5``.")
    models: list[str] = Field(description="Model spec per agent (one spec: every agent).")
    options: dict[str, Any] = Field(default_factory=dict, description="Strategy options the row set.")
    languages: list[str] = Field(
        default_factory=list, description="Agents' languages (empty: the problem's)."
    )
    solved: int = Field(description="Problems solved.")
    total: int = Field(description="Problems with a result.")
    compute_per_problem: float = Field(description="Mean FLOPs per problem.")
    solved_problems: list[str] | None = Field(
        default=None,
        description="The problems it solved, by id, kept when the row has a result on every problem of its run, "
        "so two such rows of one measurement pair by problem (None: a partial row, or a measurement written "
        "before they were kept).",
    )

    @property
    def single_model(self) -> bool:
        """One model (and at most one language), whatever the number of agents: as ``memdoor report`` says."""
        return is_single_model(self.models, self.languages)


class Measurement(BaseModel):
    """Rows with known compute measured on one suite, each from a run that says what it ran under."""

    suite: str = Field(description="The suite the rows ran on.")
    runs: list[MeasuredRun] = Field(description="The runs the rows come from.")
    rows: list[MeasuredRow] = Field(description="Rows with results and a known compute, in run order.")
    skipped: list[str] = Field(
        default_factory=list,
        description="Rows left out because today's code would run them otherwise than they were measured "
        "(``NAME (SOURCE): why``): other settings (SolveConfig.settings, as a resumed bench compares them), "
        "none recorded, or another revision (memdoor.bench.revision).",
    )

    @property
    def source(self) -> str:
        """The runs' directories in words."""
        return ", ".join(r.source for r in self.runs)

    def run_of(self, row: MeasuredRow) -> MeasuredRun:
        """The run ``row`` comes from."""
        return next(r for r in self.runs if r.source == row.source)


def stale(config: BenchConfig, spec: RowSpec) -> str | None:
    """Why today's code would run the stored row ``spec`` otherwise than it ran (None: it would not): its
    recorded settings are missing or differ from what its SolveConfig gives now, or its recorded revision
    differs from today's (a row recorded before revisions were has none and is taken, as resume takes it)."""
    if not spec.settings:
        return "no settings recorded"
    try:
        solve = solve_config(config, spec)
        now = solve.settings()
    except UsageError as e:
        return f"no longer runs ({e})"
    if spec.settings != now:
        return f"settings now differ: {settings_diff(spec.settings, now)}"
    revision = row_revision(solve.strategy.name, solve.selector)
    if spec.revision and spec.revision != revision:
        return f"revision now differs: {settings_diff(spec.revision, revision)}"
    return None


def measurement(analysis: Analysis, source: str) -> Measurement:
    """The measurement of an analysed run: rows of unknown compute left out, and rows today's code would
    run otherwise than they ran (:func:`stale`) left out and named in ``skipped``."""
    run, config = analysis.run, analysis.run.config
    specs = {r.name: r for r in config.rows}
    why = {name: stale(config, spec) for name, spec in specs.items()}
    rows = [
        MeasuredRow(
            name=r.name,
            source=source,
            strategy=r.strategy,
            models=r.models,
            options=specs[r.name].options,
            languages=specs[r.name].languages,
            solved=r.solved,
            total=r.total,
            compute_per_problem=r.compute_per_problem,
            solved_problems=[p.id for p in analysis.per_problem if (c := p.cells.get(r.name)) and c.passed]
            if r.total == analysis.problems_total
            else None,
        )
        for r in analysis.rows
        if r.total and r.compute_per_problem is not None and why.get(r.name) is None
    ]
    measured = MeasuredRun(
        source=source,
        created_at=run.created_at,
        problems_sha256=run.problems_sha256,
        budget_compute=config.budget_compute,
        budget_tokens=config.budget_tokens,
        max_tokens=config.max_tokens,
        seed=config.seed,
        params=config.params,
    )
    skipped = [f"{name} ({source}): {w}" for name, w in why.items() if w is not None]
    return Measurement(suite=config.suite, runs=[measured], rows=rows, skipped=skipped)


def combine(parts: Sequence[Measurement]) -> Measurement:
    """One measurement of the rows of ``parts`` (runs of one suite on the same problems): a row name
    already taken from an earlier part is left out of a later one. ResultsStoreError when they differ in
    suite or problems."""
    first = parts[0]
    rows, skipped, taken = [], [], set()
    for m in parts:
        if m.suite != first.suite or m.runs[0].problems_sha256 != first.runs[0].problems_sha256:
            raise ResultsStoreError(
                f"{m.source} ran on other problems than {first.source}: one measurement needs one suite"
            )
        rows += [r for r in m.rows if r.name not in taken]
        taken |= {r.name for r in m.rows}
        skipped += m.skipped
    runs = [run for m in parts for run in m.runs if any(r.source == run.source for r in rows)]
    return Measurement(suite=first.suite, runs=runs, rows=rows, skipped=skipped)


def shipped(language: str = FALLBACK) -> Measurement:
    """The measurement shipped with memdoor for ``language`` (one of :data:`PRESETS`; default HumanEval's)."""
    text = (resources.files(__package__) / PRESETS[language][0]).read_text(encoding="utf-8")
    return Measurement.model_validate_json(text)


SHIPPED_PLATFORMS = ("humaneval", "humaneval-x")
"""The platforms of the problems the shipped measurements were made on (memdoor.problems)."""


def other_suite_note(m: Measurement, platform: str | None) -> str | None:
    """A line for a problem from ``platform`` when the shipped measurement ``m`` was not made on problems
    like it (None: it was, or the platform is not known)."""
    if platform is None or platform in SHIPPED_PLATFORMS:
        return None
    name = SUITE_NAMES.get(m.suite, m.suite)
    yours = "your own problems" if platform == "user" else f"{platform} problems"
    return (
        f"measured on {name}, not on {yours} like this one: a row's lead there may not carry over "
        "(bench your own problems with memdoor bench and choose with --from DIR)"
    )


def shipped_for(
    language: str | None, usable: Callable[[list[str]], bool] = lambda models: True
) -> tuple[Measurement, str | None]:
    """The shipped measurement a problem in ``language`` chooses from (None: not known, HumanEval's), and a
    line saying it is another language's (else None): when ``language`` has none of its own, or when none of
    its own rows uses only ``usable`` models but one of HumanEval's does (e.g. Rust's, which has no row of the
    0.5B alone). A budget below every usable row is not a reason to change suites: :func:`choose` then names
    the cheapest row of the problem's own language."""
    language = language or FALLBACK
    own = shipped(language) if language in PRESETS else None
    if own is not None and (language == FALLBACK or any(usable(r.models) for r in own.rows)):
        return own, None
    fallback = shipped(FALLBACK)
    if own is not None and not any(usable(r.models) for r in fallback.rows):
        return own, None  # neither has a row of these models: the error names the problem's own suite
    name = NAMES.get(language, language)
    why = "no measurement" if own is None else "no measurement with the models you have"
    return fallback, f"{why} on {name}; using {SUITE_NAMES.get(fallback.suite, fallback.suite)}'s"


def from_directory(directory: str, source: str | None = None) -> Measurement:
    """The measurement of a bench results directory (``--from DIR``), named ``source`` (default: the
    directory); a committed run (portable files, no database) is rebuilt first, as ``memdoor report`` does.
    ResultsStoreError when it is none."""
    path = Path(directory)
    if rebuildable(path):
        rebuild(path)
    with ResultsStore.open(path) as store:
        analysis = analyse(store, resamples=100)
    return measurement(analysis, source or str(path))


def build(directories: Sequence[tuple[str, str | Path]]) -> Measurement:
    """The measurement of several runs, each given as (its name in the measurement, its directory), in
    order of precedence (:func:`combine`). The shipped ones are ``build([(f"benchmarks/results/{n}", ...)
    for n in runs])`` written to their file, for each ``(file, runs)`` of :data:`PRESETS`
    (:func:`build_shipped`)."""
    return combine([from_directory(str(path), source) for source, path in directories])


def build_shipped(language: str, repo: Path, scratch: Path) -> Measurement:
    """The shipped measurement of ``language`` made anew from the committed runs of the checkout ``repo``:
    each run's portable files are copied under ``scratch`` and rebuilt there (the committed directories are
    left as they are). ResultsStoreError when a run is not in the checkout."""
    directories = []
    for name in PRESETS[language][1]:
        source = f"benchmarks/results/{name}"
        copy = scratch / name
        copy.mkdir(parents=True)
        for file in (portable.RUN_JSON, portable.RESULTS_JSONL, portable.CALLS_JSONL):
            if not (repo / source / file).is_file():
                raise ResultsStoreError(f"{source}/{file} is not in {repo}")
            shutil.copy(repo / source / file, copy / file)
        directories.append((source, copy))
    return build(directories)


def shipped_text(m: Measurement) -> str:
    """A shipped measurement's file as it is written."""
    return m.model_dump_json(indent=1) + "\n"


def write_shipped(language: str, repo: Path) -> Path:
    """Write the shipped measurement of ``language`` anew (beside this module) from the committed runs of the
    checkout ``repo`` (:func:`build_shipped`, in a scratch directory); the file written."""
    with tempfile.TemporaryDirectory() as scratch:
        m = build_shipped(language, repo, Path(scratch))
    path = Path(__file__).parent / PRESETS[language][0]
    path.write_text(shipped_text(m), encoding="utf-8")
    return path


def choose(m: Measurement, budget: float, usable: Callable[[list[str]], bool]) -> MeasuredRow:
    """The row that solved the most at a mean compute of at most ``budget``, among those whose models are
    ``usable`` (ties to the cheaper, then the earlier); UsageError naming the cheapest otherwise."""
    if not m.rows and m.skipped:
        raise UsageError(
            f"no configuration measured in {m.source} runs today as it ran ({len(m.skipped)} left out, e.g. "
            f"{m.skipped[0]}): bench it again"
        )
    rows = [r for r in m.rows if usable(r.models)]
    if not rows:
        raise UsageError(f"no configuration measured in {m.source} uses only models you have")
    fits = [(i, r) for i, r in enumerate(rows) if r.compute_per_problem <= budget]
    if not fits:
        cheapest = min(rows, key=lambda r: r.compute_per_problem)
        raise UsageError(
            f"--budget-compute {budget:g}: no configuration measured in {m.source} costs that little; the "
            f"cheapest is {cheapest.name} at {cheapest.compute_per_problem:.3g} FLOPs per problem"
        )
    return best(fits)


def best(rows: Sequence[tuple[int, MeasuredRow]]) -> MeasuredRow:
    """The row that solved the most (by rate), ties to the cheaper, then to the earlier (its index)."""
    return min(rows, key=lambda ir: (-ir[1].solved / ir[1].total, ir[1].compute_per_problem, ir[0]))[1]


def single_model_match(
    row: MeasuredRow, m: Measurement, usable: Callable[[list[str]], bool]
) -> MeasuredRow | None:
    """For a team, the best single-model row of ``usable`` models at no more compute (:func:`best`); None
    for a single-model row or when none costs as little."""
    if row.single_model:
        return None
    rows = [
        (i, r)
        for i, r in enumerate(m.rows)
        if r.single_model and usable(r.models) and r.compute_per_problem <= row.compute_per_problem
    ]
    return best(rows) if rows else None


def against_single_model(row: MeasuredRow, match: MeasuredRow) -> str:
    """The chosen team against its single-model match, paired by problem (both rows complete on one run's
    problems, their solved problems kept): wins / losses and the exact McNemar p, uncorrected."""
    head = (
        f"against the best single-model row at no more compute, {match.name} ({match.solved}/{match.total})"
    )
    if row.solved_problems is None or match.solved_problems is None:
        return f"{head}: not paired (the measurement keeps no per-problem results of a partial row)"
    if row.total != match.total:
        return f"{head}: not paired (they ran on {row.total} and {match.total} problems)"
    mine, theirs = set(row.solved_problems), set(match.solved_problems)
    wins, losses = len(mine - theirs), len(theirs - mine)
    p = mcnemar_exact(wins, losses)
    return f"{head}: {wins} / {losses} problems, exact McNemar p = {pvalue(p)}, uncorrected: {_reading(p)}"


def _reading(p: float) -> str:
    """What a p says here: the chosen row solved at least as many as its match (it was chosen by the count
    among rows costing no more), so a significant difference is the team's lead."""
    return "a significant lead" if p < ALPHA else "no significant difference"


def describe(row: MeasuredRow, m: Measurement, budget: float, usable: Callable[[list[str]], bool]) -> str:
    """One line saying what was chosen, which measurement it comes from, and that it runs at the budget it
    was measured with (``budget`` only chooses); for a team, a second line with the best single-model row of
    ``usable`` models at no more compute and the paired test against it (the count chooses, not the test)."""
    run = m.run_of(row)
    cap = (
        "no compute cap"
        if run.budget_compute is None
        else f"a cap of {run.budget_compute:g} FLOPs per problem"
    ) + ("" if run.budget_tokens is None else f" and {run.budget_tokens:,} tokens per problem")
    line = (
        f"team best at ≤ {budget:g} FLOPs per problem on average: {row.name} — solved {row.solved}/{row.total} "
        f"({100 * row.solved / row.total:.1f}%) at {row.compute_per_problem:.3g} FLOPs per problem on "
        f"{m.suite}, the most of the configurations measured in {m.source} (this one in {run.source}, run of "
        f"{run.created_at}); it runs as measured: {cap}, max {run.max_tokens} tokens per call"
    )
    match = single_model_match(row, m, usable)
    return line if match is None else line + "\n" + against_single_model(row, match)
