"""Dollars and latency per problem for a serving setup the user describes, from a run's measured work.

The run measured what each row *does* per problem (tokens, and compute: FLOPs ≈ 2 × parameters ×
tokens); what that costs depends on the hardware, which the run does not know. The user gives it
(``memdoor report DIR --serving gpus=1,gpu_hour_usd=2.0,tokens_per_s=1500,streams=8``, or a YAML file
with the same keys) and this module turns one into the other with a deliberately small model:

1. **Work.** A row's work per problem in tokens of the *reference model* (the one ``tokens_per_s`` was
   measured with; by default the run's biggest): compute per problem / (2 × its parameters). A model
   half its size counts half a token per token (decoding cost grows with parameters). When some size is
   unknown, tokens are counted as they are, whatever the model.
2. **Throughput.** The setup processes ``tokens_per_s`` tokens per second in all (prompt + completion,
   as the run counts them) when ``streams`` requests run at once; each stream then gets
   ``tokens_per_s / streams``.
3. **Dollars.** The GPUs are paid whether busy or not: $ per problem = gpus × gpu_hour_usd / 3600 ×
   work / tokens_per_s / utilization.
4. **Latency** (model time only: the sandbox's test runs come on top) at full load: between the
   problem's calls all running at once, on min(calls, streams) streams, and one after another on one
   stream (work × streams / tokens_per_s). The first bound holds only for independent calls (parallel
   drafts); calls that wait for earlier ones (a cascade's escalation, a repair, adaptive's later waves,
   sequential and shared rounds) lie nearer the second, so a cascade's first bound can sit below one draw
   of the bigger model's.

No figure is given without these inputs: the report prints them and the assumptions beside the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memdoor.bench.rowstats import RowStats
from memdoor.core.errors import UsageError, validation_problems

EXAMPLE = "gpus=1,gpu_hour_usd=2.0,tokens_per_s=1500,streams=8"


class ServingSetup(BaseModel):
    """The serving setup a user describes (``--serving``)."""

    model_config = ConfigDict(extra="forbid")

    gpus: int = Field(ge=1, description="GPUs of the setup (all paid for).")
    gpu_hour_usd: float = Field(gt=0, allow_inf_nan=False, description="Price of one GPU for one hour, in $.")
    tokens_per_s: float = Field(
        gt=0,
        allow_inf_nan=False,
        description="Tokens (prompt + completion) the setup's engine processes per second in all, measured "
        "with the reference model at ``streams`` concurrent requests.",
    )
    streams: int = Field(ge=1, description="Concurrent requests at which tokens_per_s was measured.")
    model: str | None = Field(
        default=None,
        description="The reference model tokens_per_s was measured with (a model spec); default: the run's "
        "biggest model.",
    )
    utilization: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="Share of the time the setup is busy (idle time is paid too); 1: kept full.",
    )


class ServingRow(BaseModel):
    """One row's dollars and latency per problem on the setup."""

    work_tokens: float = Field(description="Tokens of the reference model per problem (see the module).")
    usd_per_problem: float = Field(description="Dollars per problem.")
    problems_per_hour: float = Field(description="Problems the setup finishes per hour at its utilization.")
    latency_s: tuple[float, float] = Field(
        description="Model seconds per problem at full load: calls all at once, calls one after another."
    )


class ServingEstimate(BaseModel):
    """The estimate for every row, with the inputs and assumptions it came from."""

    setup: ServingSetup = Field(description="The inputs, the reference model filled in.")
    reference_parameters: float | None = Field(
        description="Parameters of the reference model (None: tokens counted as they are)."
    )
    assumptions: list[str] = Field(description="What the figures assume, in words (printed beside them).")
    rows: dict[str, ServingRow] = Field(description="Row name → its figures (rows without results left out).")


def parse_setup(text: str) -> ServingSetup:
    """``KEY=VALUE,...`` or the path of a YAML/JSON file of the same keys; UsageError (one line) when bad."""
    path = Path(text)
    if path.suffix in (".yaml", ".yml", ".json") or path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
            raise UsageError(f"--serving {text}: cannot read it ({reason})") from None
        if not isinstance(data, dict):
            raise UsageError(f"--serving {text}: expected a mapping of keys such as {EXAMPLE}")
    else:
        data = {}
        for item in (i.strip() for i in text.split(",")):
            key, sep, value = item.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise UsageError(f"bad --serving {text!r}: expected KEY=VALUE,..., e.g. {EXAMPLE}")
            data[key.strip()] = value.strip()
    try:
        return ServingSetup.model_validate(data)
    except ValidationError as e:
        raise UsageError(f"bad --serving {text!r}: {validation_problems(e)} (e.g. {EXAMPLE})") from None


def estimate(
    rows: Sequence[RowStats], setup: ServingSetup, size: Callable[[str], float | None]
) -> ServingEstimate:
    """Dollars and latency per problem of ``rows`` on ``setup``; ``size(model)`` gives parameters (None:
    unknown). UsageError when the reference model named is not known."""
    scored = [r for r in rows if r.pass_at_1 is not None]
    models = list(dict.fromkeys(m for r in scored for m in r.models))
    reference = setup.model
    if reference is None and models:
        sizes = [size(m) for m in models]
        # some size unknown: tokens count as they are, so no model is the reference
        reference = models[sizes.index(max(sizes))] if None not in sizes else None
    ref_size = size(reference) if reference is not None else None
    if setup.model is not None and ref_size is None and any(size(m) is not None for m in models):
        raise UsageError(f"--serving model={setup.model}: its size is unknown (give a model the run knows)")
    by_compute = ref_size is not None and all(r.compute_per_problem is not None for r in scored)
    setup = setup.model_copy(update={"model": reference})
    out: dict[str, ServingRow] = {}
    for r in scored:
        work = (r.compute_per_problem or 0.0) / (2 * (ref_size or 1.0)) if by_compute else r.tokens.mean
        busy = work / setup.tokens_per_s  # seconds of the whole setup per problem
        serial = work * setup.streams / setup.tokens_per_s
        out[r.name] = ServingRow(
            work_tokens=work,
            usd_per_problem=setup.gpus * setup.gpu_hour_usd / 3600 * busy / setup.utilization,
            problems_per_hour=3600 * setup.utilization / busy if busy else float("inf"),
            latency_s=(serial / max(1.0, min(r.calls.mean, setup.streams)), serial),
        )
    return ServingEstimate(
        setup=setup,
        reference_parameters=ref_size if by_compute else None,
        assumptions=assumptions(setup, by_compute),
        rows=out,
    )


def assumptions(setup: ServingSetup, by_compute: bool) -> list[str]:
    """The model's assumptions in words, with the inputs filled in."""
    work = (
        f"work per problem in tokens of {setup.model}: the row's compute / (2 × its parameters); a smaller "
        "model's token counts in proportion to its size"
        if by_compute
        else "work per problem: the row's tokens as they are (some model's size is unknown)"
    )
    return [
        f"inputs: {json.dumps(setup.model_dump(mode='json'), sort_keys=True)}",
        work,
        f"the setup processes {setup.tokens_per_s:g} tokens/s in all at {setup.streams} concurrent requests, "
        f"{setup.tokens_per_s / setup.streams:g} tokens/s per request; prompt tokens cost as much as "
        "completion tokens (measure tokens_per_s counting both, as the run does)",
        f"$ per problem = {setup.gpus} GPU × ${setup.gpu_hour_usd:g}/hour × the setup's seconds per problem "
        f"/ 3600 / utilization {setup.utilization:g} (idle time is paid)",
        "latency: model time at full load only (the sandbox's test runs come on top), between the calls "
        "all at once on min(calls, streams) streams and one after another on one stream; the first is "
        "reachable only when the calls are independent (parallel drafts): a cascade's escalation, a repair, "
        "adaptive's later waves and the rounds of sequential and shared wait for the calls before them, so "
        "their latency lies nearer the second",
    ]
