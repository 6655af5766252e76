"""What one run is asked to do: the strategy spec (``parallel:5``), its options and the SolveConfig."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memdoor.core.budget import Budget
from memdoor.core.errors import UsageError, validation_problems
from memdoor.core.net import shown_specs
from memdoor.core.registry import load, names
from memdoor.problems.jsonl import parse_json
from memdoor.problems.languages import LANGUAGES
from memdoor.strategies.base import Strategy

DEFAULT_MODEL = "local:qwen2.5-coder-0.5b"
DEFAULT_TEMPERATURES = (0.2, 0.6, 0.8, 0.4, 1.0)


class StrategySpec(BaseModel):
    """A strategy and its team size, written ``parallel:5`` (``single`` alone means one agent)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(
        description="Strategy name from the registry: single, parallel, sequential, shared, hybrid."
    )
    agents: int = Field(default=1, ge=1, description="Number of agents in the team.")

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in names("strategy"):
            raise ValueError(f"unknown strategy {v!r} (choose from: {', '.join(names('strategy'))})")
        return v

    @classmethod
    def parse(cls, text: str, agents: int | None = None) -> StrategySpec:
        """``"parallel:5"`` → (parallel, 5); ``"single"`` → (single, 1); ``agents`` overrides a missing count."""
        name, sep, count = text.strip().partition(":")
        if name not in names("strategy"):
            raise UsageError(f"unknown strategy {name!r} (choose from: {', '.join(names('strategy'))})")
        if sep:
            try:
                n = int(count)
            except ValueError:
                raise UsageError(f"bad strategy {text!r}: expected NAME or NAME:AGENTS") from None
        else:
            n = agents if agents is not None else 1
        if n < 1:
            raise UsageError(f"bad strategy {text!r}: a team needs at least one agent")
        return cls(name=name, agents=n)

    def __str__(self) -> str:
        return self.name if self.name == "single" and self.agents == 1 else f"{self.name}:{self.agents}"


def parse_options(items: list[str], *, flag: str = "--option") -> dict[str, Any]:
    """``["rounds=2", "stop_when_all_pass=false"]`` → ``{"rounds": 2, "stop_when_all_pass": False}``
    (a value is read as JSON when it is JSON, else kept as text); UsageError naming ``flag`` for an item
    that is not KEY=VALUE. The strategy checks the keys and values (:meth:`SolveConfig.make_strategy`)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad {flag} {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = parse_json(value.strip())
        except ValueError:  # not JSON (or nested too deeply): the text itself
            out[key.strip()] = value.strip()
    return out


class SolveConfig(BaseModel):
    """Everything that decides how a team solves a problem (recorded with every result)."""

    model_config = ConfigDict(extra="forbid")

    strategy: StrategySpec = Field(description="Strategy and team size.")
    models: list[str] = Field(
        default_factory=lambda: [DEFAULT_MODEL],
        min_length=1,
        description="Model specs, assigned to agents round-robin (several make a mixed team).",
    )
    budget: Budget = Field(default_factory=Budget, description="Per-problem limits: tokens, calls, seconds.")
    seed: int = Field(
        default=0, description="Base sampling seed; the k-th agent of a model samples with seed + 1000 * k."
    )
    max_tokens: int = Field(default=1024, ge=16, description="Completion token cap per model call.")
    temperatures: list[float] = Field(
        default_factory=lambda: list(DEFAULT_TEMPERATURES),
        min_length=1,
        description="Sampling temperatures, assigned to agents in order (agent 0 gets the first).",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Strategy options (its Config fields, e.g. rounds, repair_rounds, inputs); "
        "unknown ones are an error.",
    )
    name_function: bool = Field(
        default=False,
        description="The request named no function (the problem's func_name is a placeholder): the team's "
        "first agent chooses a descriptive name before the strategy runs; Solution.naming says so.",
    )
    test_inputs: int = Field(
        default=0,
        ge=0,
        description="For a problem with no tests at all: test inputs (no outputs) the team's first agent "
        "writes before the strategy runs, so candidates can be told apart by behaviour (0: none).",
    )
    params: dict[str, float] = Field(
        default_factory=dict,
        description="Parameter counts by model spec or name, for models the catalog does not know "
        "(compute ≈ 2 × parameters × tokens; a compute budget needs every agent's size).",
    )
    languages: list[str] = Field(
        default_factory=list,
        description="Languages assigned to agents round-robin (agent 0 gets the first): a mixed-language "
        "team, for standard-input problems only (their tests are the same in every language); empty: every "
        "agent writes in the problem's language.",
    )
    selector: str = Field(default="vote", description="Selector name from the registry.")
    selector_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Selector settings, e.g. {'k': 3} (the k-of-N majority) or {'weighting': 'mean'}.",
    )

    @field_validator("languages")
    @classmethod
    def _languages(cls, v: list[str]) -> list[str]:
        unknown = [x for x in v if x not in LANGUAGES]
        if unknown:
            raise ValueError(f"unknown language {unknown[0]!r} (choose from: {', '.join(LANGUAGES)})")
        return v

    def shown(self) -> dict[str, Any]:
        """This config as answers, traces and memory record it: its JSON dump with each model spec shown
        by :func:`memdoor.core.net.redact_spec` (no password or key of a spec's URL)."""
        return shown_specs(self.model_dump(mode="json"))

    def make_selector(self) -> Any:
        """The configured selector (its own checks raise UsageError for bad settings)."""
        try:
            return load("selector", self.selector)(**self.selector_options)
        except TypeError as e:
            raise UsageError(f"bad settings for selector {self.selector}: {e}") from None

    def settings(self) -> dict[str, Any]:
        """What decides the team's behaviour beyond the strategy's name and models: the strategy's options
        with its defaults filled in, the sampling temperatures and the selector, and for a mixed team how its
        agents sample (by rank among their model's agents; earlier, by team position). A bench records it
        per row, so a default changed between two sittings of one run is caught, not mixed into its results."""
        settings: dict[str, Any] = {
            "options": self.make_strategy().config.recorded(),
            "temperatures": list(self.temperatures),
            "selector": self.selector,
            "selector_options": dict(self.selector_options),
        }
        if len(set(self.models)) > 1:  # a mixed team: agents sample by rank within their model (team_configs)
            settings["sampling"] = "rank-in-model"
        return settings

    def make_strategy(self) -> Strategy:
        """The configured strategy object (options checked against its Config: UsageError if bad)."""
        cls = load("strategy", self.strategy.name)
        try:
            return cls(cls.Config(**self.options))
        except ValidationError as e:
            problems = validation_problems(e)
            known = ", ".join(cls.Config.model_fields)
            raise UsageError(
                f"bad options for strategy {self.strategy.name}: {problems} (its options: {known})"
            ) from None
