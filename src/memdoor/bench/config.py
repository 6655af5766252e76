"""What a bench run is: its rows (strategy × models), problem filters, budget and seed.

The *identity* of a run (everything that changes results) decides whether a results directory
can be resumed: same identity → resume, another identity → refused. How fast it runs
(``--concurrency``) and where the suite file lives are not part of it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import date
from itertools import groupby
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from memdoor.core.budget import Budget
from memdoor.core.errors import UsageError
from memdoor.core.net import redact_spec
from memdoor.models.pool import split_spec
from memdoor.problems.languages import parse_languages

if TYPE_CHECKING:
    from memdoor.run.config import SolveConfig

DIFFICULTIES = ("easy", "medium", "hard")


class RowSpec(BaseModel):
    """One row of the results table: a strategy run by a list of model specs."""

    name: str = Field(
        description="Row name: the strategy as in LIST (``parallel:5``), or ``STRATEGY@TEAM`` for a row "
        "naming its own models (``parallel:5@local:a*1+local:b*4``)."
    )
    strategy: str = Field(description="Normalised strategy spec, e.g. ``parallel:5`` or ``single``.")
    models: list[str] = Field(
        description="Model specs the team's agents use, round-robin (a row naming its team lists one "
        "spec per agent, so agent i uses models[i])."
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Strategy options the entry sets (``sstar:16[repair_rounds=0]``); the rest keep the "
        "strategy's defaults. Left out of the stored config when empty.",
    )
    baseline: bool = Field(default=False, description="True for --baseline rows (a comparison model).")
    languages: list[str] = Field(
        default_factory=list,
        description="Languages of the agents, round-robin (``parallel:3#python+javascript+rust``: a "
        "mixed-language team, standard-input problems only); empty: the problems' own.",
    )
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="What the row ran with beyond its spec (the strategy's options with defaults filled "
        "in, temperatures, selector; see SolveConfig.settings), recorded when the run starts; empty in a "
        "directory made before it was recorded.",
    )
    revision: dict[str, str] = Field(
        default_factory=dict,
        description="The revision of what decides the row's behaviour beyond its settings (strategy code, "
        "shared strategy code, selector, prompts; see memdoor.bench.revision), recorded when the run starts "
        "and checked when it resumes; empty in a directory made before it was recorded (left out of run.json).",
    )

    @model_serializer(mode="wrap")
    def _drop_empty_options(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A row without options or revision is stored as before those fields existed (run.json stays the
        same)."""
        data = handler(self)
        for key in ("options", "revision"):
            if not data.get(key):
                data.pop(key, None)
        return data

    def same_row(self, other: RowSpec) -> bool:
        """The same strategy, team and languages (settings and revision are compared on their own: see
        ResultsStore)."""
        same = {"settings", "revision"}
        return self.model_dump(exclude=same) == other.model_dump(exclude=same)

    @property
    def team(self) -> str:
        """The row's team in words, e.g. ``1× local:a + 4× local:b``."""
        counts: dict[str, int] = {}
        for m in self.models:
            counts[m] = counts.get(m, 0) + 1
        if len(counts) == 1 and len(self.models) == 1:
            return self.models[0]
        if all(c == 1 for c in counts.values()):
            return " + ".join(counts)
        return " + ".join(f"{c}× {m}" for m, c in counts.items())


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        return {prefix: value}
    out: dict[str, Any] = {}
    for k, v in value.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def settings_diff(old: dict[str, Any], new: dict[str, Any], most: int = 3) -> str:
    """What differs between two rows' settings, e.g. ``options.refine: 'all' → 'failing'``."""
    a, b = _flat(old), _flat(new)

    def show(d: dict[str, Any], k: str) -> str:
        return repr(d[k]) if k in d else "(none)"

    changes = [
        f"{k}: {show(a, k)} → {show(b, k)}" for k in sorted(set(a) | set(b)) if show(a, k) != show(b, k)
    ]
    more = f" and {len(changes) - most} more" if len(changes) > most else ""
    return "; ".join(changes[:most]) + more


class ProblemFilter(BaseModel):
    """Which problems of the suite run. Every filter is inclusive; unset filters keep everything."""

    difficulty: list[str] | None = Field(
        default=None, description="Keep problems of these difficulties (unknown difficulty is dropped)."
    )
    since: date | None = Field(default=None, description="Keep problems released on or after this date.")
    until: date | None = Field(default=None, description="Keep problems released on or before this date.")
    limit: int | None = Field(
        default=None, description="Keep the first N after filtering, in the suite's file order."
    )


class BenchConfig(BaseModel):
    """Everything that defines a bench run's results."""

    suite: str = Field(description="The SUITE argument: a problem file or folder, or ``humaneval``.")
    rows: list[RowSpec] = Field(description="Strategy rows in LIST order, then baselines in flag order.")
    filters: ProblemFilter = Field(default_factory=ProblemFilter, description="Problem selection.")
    budget_tokens: int | None = Field(
        default=None, description="Token budget per problem and row (equal for every row), or unlimited."
    )
    budget_compute: float | None = Field(
        default=None,
        description="Compute budget (FLOPs ≈ 2 × parameters × tokens) per problem and row, or unlimited.",
    )
    params: dict[str, float] = Field(
        default_factory=dict,
        description="Parameter counts given with --params (model spec or name → parameters), for models "
        "the catalog does not know (remote ones).",
    )
    seed: int = Field(default=0, description="Base sampling seed handed to every row.")
    max_tokens: int = Field(default=1024, description="Completion token cap per model call.")

    def identity(self) -> dict:
        """The fields that must match for a results directory to be resumed (the suite path is not one:
        the selected problems' content digest stands for it). Fields at their default are left out, so
        a directory made before a field existed still resumes."""
        data = self.model_dump(mode="json", exclude={"suite"})
        for key in ("budget_compute", "params"):
            if not data.get(key):
                data.pop(key, None)
        return data

    def identity_json(self) -> str:
        return json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))

    @property
    def row_names(self) -> list[str]:
        return [r.name for r in self.rows]


def hide_secrets(config: BenchConfig) -> tuple[BenchConfig, dict[str, str]]:
    """``config`` as a results directory records it, and the raw spec of each model spec it shows otherwise.

    Every model spec (a row's models and its name, a --params key) is shown by
    :func:`memdoor.core.net.redact_spec`: no password or key of a spec's URL is stored, printed or reported.
    The raw specs stay in memory, where the models are opened (:func:`memdoor.bench.draws.paired_pool`). A
    config whose specs hold no secret comes back equal (so directories made before resume as they did).
    UsageError when two specs differ only in their secrets (the directory could not tell them apart)."""
    raw_of: dict[str, str] = {}
    for spec in dict.fromkeys([*(m for r in config.rows for m in r.models), *config.params]):
        shown = redact_spec(spec)
        if raw_of.setdefault(shown, spec) != spec:
            raise UsageError(
                f"two model specs differ only in their secrets (both shown as {shown!r}): a results "
                "directory could not tell them apart; bench them in separate runs"
            )
    raw_of = {shown: raw for shown, raw in raw_of.items() if shown != raw}
    if not raw_of:
        return config, {}
    rows = [
        r.model_copy(
            update={"name": shown_name(r.name, raw_of), "models": [redact_spec(m) for m in r.models]}
        )
        for r in config.rows
    ]
    params = {redact_spec(k): v for k, v in config.params.items()}
    return config.model_copy(update={"rows": rows, "params": params}), raw_of


def shown_name(text: str, raw_of: Mapping[str, str]) -> str:
    """``text`` (a row name, a command-line argument) with each raw spec of ``raw_of`` (shown → raw, as
    :func:`hide_secrets` gives it) replaced by its shown form, longest first."""
    for shown, raw in sorted(raw_of.items(), key=lambda item: len(item[1]), reverse=True):
        text = text.replace(raw, shown)
    return text


def solve_config(config: BenchConfig, row: RowSpec) -> SolveConfig:
    """The runner's configuration for one row: same budget (tokens, compute), seed and token cap for every
    row; an agent samples by its rank among its model's agents, alike in every row (see
    :func:`memdoor.agents.team.team_configs`)."""
    from memdoor.run.config import SolveConfig, StrategySpec

    return SolveConfig(
        strategy=StrategySpec.parse(row.strategy),
        models=list(row.models),
        budget=Budget(tokens=config.budget_tokens, compute=config.budget_compute),
        seed=config.seed,
        max_tokens=config.max_tokens,
        params=dict(config.params),
        languages=list(row.languages),
        options=dict(row.options),
    )


def parse_strategy(text: str) -> str:
    """Validate and normalise one strategy spec (``parallel:5``) with the runner's parser."""
    from memdoor.run.config import StrategySpec

    return str(StrategySpec.parse(text.strip()))


def split_entries(text: str) -> list[str]:
    """``a,b[x=1,y=2]@m,c`` → ``["a", "b[x=1,y=2]@m", "c"]``: commas inside an entry's ``[options]`` do
    not split it (stripped; empty items kept, for the caller to refuse)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    return [*items, text[start:].strip()]


def parse_strategy_options(text: str, where: str) -> tuple[str, dict[str, Any], str]:
    """``sstar:16[repair_rounds=0,inputs=3]`` → (``sstar:16``, its options, the canonical
    ``[repair_rounds=0,inputs=3]`` for the row name; empty for no brackets). The strategy checks the
    option names and values: UsageError naming the entry and the strategy's options."""
    from memdoor.run.config import SolveConfig, StrategySpec, parse_options

    strategy, bracket, rest = text.strip().partition("[")
    if not bracket:
        return parse_strategy(strategy), {}, ""
    body, close, tail = rest.rpartition("]")
    if not close or tail.strip() or not body.strip():
        raise UsageError(
            f"bad {where} {text!r}: expected STRATEGY[KEY=VALUE,...], e.g. sstar:16[repair_rounds=0]"
        )
    options = parse_options(body.split(","), flag=f"{where} {text!r}")
    s = parse_strategy(strategy)
    SolveConfig(strategy=StrategySpec.parse(s), options=options).make_strategy()  # bad options: UsageError
    shown = ",".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in options.items())
    return s, options, f"[{shown}]"


def parse_team(text: str, agents: int, where: str) -> list[str]:
    """``local:a*1+local:b*4`` → one model spec per agent (``[a, b, b, b, b]``); a single spec without a
    count serves every agent. UsageError when the counts do not add up to ``agents``; ModelSpecError for
    a spec whose syntax or backend is wrong (nothing is opened)."""
    specs: list[str] = []
    parts = [p.strip() for p in text.split("+")]
    if not text.strip() or any(not p for p in parts):
        raise UsageError(f"bad {where} {text!r}: expected MODEL or MODEL*COUNT+MODEL*COUNT")
    counted = False
    for part in parts:
        spec, star, count = part.rpartition("*")
        if not star or not count.strip().isdigit():
            spec, count = part, "1"
        else:
            counted = True
        if int(count) < 1:
            raise UsageError(f"bad {where} {text!r}: a model's count must be at least 1")
        split_spec(spec.strip())
        specs += [spec.strip()] * int(count)
    if len(parts) == 1 and not counted:
        return specs * agents
    if len(specs) != agents:
        raise UsageError(
            f"bad {where} {text!r}: the counts add up to {len(specs)} agents, the strategy has {agents}"
        )
    return specs


def parse_entry(text: str, models: list[str], *, baseline: bool = False) -> RowSpec:
    """One row: ``STRATEGY`` (the team of ``models``, round-robin) or ``STRATEGY@TEAM`` (its own team),
    either followed by ``#LANG+LANG...`` for a mixed-language team (agent i writes in the i-th language,
    round-robin)."""
    where = "--baseline" if baseline else "--strategies entry"
    body, hash_, langs = text.strip().partition("#")
    row = _parse_team_entry(body, models, baseline, where)
    if not hash_:
        return row
    languages = parse_languages(langs, f"{where} {text.strip()!r}", sep="+")
    return row.model_copy(update={"name": f"{row.name}#{'+'.join(languages)}", "languages": languages})


def _parse_team_entry(text: str, models: list[str], baseline: bool, where: str) -> RowSpec:
    from memdoor.run.config import StrategySpec

    strategy, sep, team = text.strip().partition("@")
    if sep and (not strategy.strip() or not team.strip()):
        raise UsageError(
            f"bad {where} {text!r}: expected STRATEGY@MODEL, e.g. single@local:qwen2.5-coder-1.5b"
        )
    s, options, shown = parse_strategy_options(strategy, where)
    if not sep:
        if not models:
            raise UsageError(f"bench needs --model SPEC for {text.strip()!r} (or name its team: {s}@MODEL)")
        return RowSpec(name=f"{s}{shown}", strategy=s, options=options, models=list(models))
    specs = parse_team(team, StrategySpec.parse(s).agents, where)
    if len(set(specs)) == 1:  # one model for every agent
        return RowSpec(
            name=f"{s}{shown}@{specs[0]}", strategy=s, options=options, models=[specs[0]], baseline=baseline
        )
    label = "+".join(f"{m}*{len(list(g))}" for m, g in groupby(specs))
    return RowSpec(name=f"{s}{shown}@{label}", strategy=s, options=options, models=specs, baseline=baseline)


def parse_rows(strategies: str, models: list[str], baselines: list[str]) -> list[RowSpec]:
    """Rows from ``--strategies LIST``, ``--model`` specs and ``--baseline STRATEGY@SPEC`` flags.

    An entry of LIST may name its own team: ``parallel:5@local:qwen2.5-coder-0.5b``, or a mixed one,
    ``parallel:5@local:qwen2.5-coder-1.5b*1+local:qwen2.5-coder-0.5b*4`` (agent i gets the i-th model:
    the counts add up to the team size). ``--model`` specs serve the entries naming none.

    Raises UsageError for an empty or unknown strategy, duplicate rows, or no model; ModelSpecError
    for a spec whose syntax or backend is wrong (without opening any model).
    """
    for spec in models:
        split_spec(spec)
    items = split_entries(strategies)
    if not strategies.strip() or any(not s for s in items):
        raise UsageError(
            f"bad --strategies {strategies!r}: expected a comma-separated list like single,parallel:5"
        )
    if not models and any("@" not in item for item in items):
        raise UsageError("bench needs at least one --model SPEC (or every --strategies entry names its team)")
    rows = [parse_entry(item, models) for item in items]
    for text in baselines:
        if "@" not in text:
            raise UsageError(
                f"bad --baseline {text!r}: expected STRATEGY@MODEL, e.g. single@local:qwen2.5-coder-1.5b"
            )
        rows.append(parse_entry(text, models, baseline=True))
    seen: set[str] = set()
    for row in rows:
        if row.name in seen:
            raise UsageError(f"row {row.name!r} is given twice")
        seen.add(row.name)
    return rows


def parse_params(items: list[str]) -> dict[str, float]:
    """``["openai:q@http://h/v1=7e9"]`` → ``{"openai:q@http://h/v1": 7e9}`` (split at the last ``=``);
    UsageError for anything but SPEC=N with N a positive finite number."""
    out: dict[str, float] = {}
    for text in items:
        spec, sep, value = text.rpartition("=")
        try:
            n = float(value)
        except ValueError:
            n = math.nan
        if not sep or not spec.strip() or not math.isfinite(n) or n <= 0:
            raise UsageError(f"bad --params {text!r}: expected SPEC=PARAMETERS, e.g. openai:qwen@URL=7e9")
        out[spec.strip()] = n
    return out


def parse_difficulty(text: str | None) -> list[str] | None:
    """``easy,hard`` → ``["easy", "hard"]``; UsageError for anything but easy, medium, hard."""
    if text is None:
        return None
    wanted = [d.strip().lower() for d in text.split(",") if d.strip()]
    bad = [d for d in wanted if d not in DIFFICULTIES]
    if bad or not wanted:
        raise UsageError(f"bad --difficulty {text!r}: choose from {','.join(DIFFICULTIES)}")
    return [d for d in DIFFICULTIES if d in wanted]


def parse_date(flag: str, text: str | None) -> date | None:
    """An ISO date (``2024-05-01``) or None; UsageError naming the flag otherwise."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"bad {flag} {text!r}: expected a date like 2024-05-01") from None
