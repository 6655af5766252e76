"""Agents and teams. An agent is a model with a role prompt and sampling settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from memdoor.agents.calls import CallContext
from memdoor.core.errors import BudgetExceeded, ModelError
from memdoor.core.ledger import CallRecord
from memdoor.core.messages import Message, ModelResponse

if TYPE_CHECKING:
    from memdoor.core.protocols import Model


CHARS_PER_TOKEN = 4  # tokenizer-free estimate: code and English average 3.5-4.5 characters per token


def prompt_estimate(messages: Sequence[Message]) -> int:
    """About how many tokens a prompt will cost, known before the call (its usage says what it did cost)."""
    return sum(len(m.get("content") or "") for m in messages) // CHARS_PER_TOKEN


class AgentConfig(BaseModel):
    """How one agent samples."""

    id: str = Field(description="Agent id, unique in the team (AGENT_ID in distributed mode).")
    model: str = Field(description="Model spec (MODEL_NAME), e.g. local:qwen2.5-coder-0.5b.")
    temperature: float = Field(default=0.2, description="Sampling temperature.")
    seed: int | None = Field(default=None, description="Sampling seed; each agent gets its own.")
    max_tokens: int = Field(default=1024, description="Completion token cap per call.")
    prompt_variant: int = Field(default=0, description="Which system-prompt variant to use (diversity).")
    parameters: float | None = Field(
        default=None,
        description="Parameters of the model (compute ≈ 2 × parameters × tokens); None: unknown.",
    )
    language: str | None = Field(
        default=None,
        description="The language this agent writes in; None: the problem's own (a mixed-language team "
        "gives its agents different ones, on standard-input problems).",
    )


class Agent:
    """An agent of a team: calls its model and records every call in the run's ledger, trace and budget."""

    def __init__(self, config: AgentConfig, model: Model):
        self.config = config
        self.model = model

    @property
    def id(self) -> str:
        return self.config.id

    async def ask(
        self,
        messages: Sequence[Message],
        ctx: CallContext,
        *,
        role: str,
        n: int = 1,
        logprobs: bool = True,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed_offset: int = 0,
    ) -> ModelResponse:
        """One model call. Checks the budget first; raises BudgetExceeded or ModelError (recorded either way)."""
        ctx.budget.check()
        cfg = self.config
        seed = None if cfg.seed is None else cfg.seed + seed_offset
        per_token = None if cfg.parameters is None else 2 * cfg.parameters
        max_tokens, held = ctx.budget.reserve(
            prompt_estimate(messages), max_tokens or cfg.max_tokens, n, flops_per_token=per_token
        )
        try:
            await ctx.event("call", self.id, role=role, n=n)
            resp = await self.model.complete(
                messages,
                n=n,
                temperature=cfg.temperature if temperature is None else temperature,
                max_tokens=max_tokens,
                logprobs=logprobs,
                seed=seed,
            )
        except ModelError as e:
            ctx.ledger.add(CallRecord.failed(agent=self.id, model=cfg.model, role=role, n=n, error=e))
            ctx.budget.charge(0)
            await ctx.event("failure", self.id, role=role, error=f"{type(e).__name__}: {e}")
            raise
        finally:  # answered, failed or cancelled: the hold goes back; the call's real cost is what is charged
            ctx.budget.release(held, per_token)
        u = resp.usage
        compute = None if per_token is None else per_token * (u.prompt_tokens + u.completion_tokens)
        ctx.ledger.add(
            CallRecord(
                agent=self.id,
                model=cfg.model,
                role=role,
                n=n,
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                latency_s=u.latency_s,
                retries=u.retries,
                usd=ctx.price(cfg.model, u),
                compute=compute,
            )
        )
        ctx.budget.charge(u.prompt_tokens + u.completion_tokens, compute=compute or 0.0)
        await ctx.event(
            "answer",
            self.id,
            role=role,
            tokens=u.prompt_tokens + u.completion_tokens,
            seconds=round(u.latency_s, 3),
        )
        return resp


class Team:
    """N agents. Agents with the same model spec share one model instance (one loaded engine)."""

    def __init__(self, agents: Sequence[Agent]):
        if not agents:
            raise ValueError("a team needs at least one agent")
        self.agents = list(agents)

    def __len__(self) -> int:
        return len(self.agents)

    def __getitem__(self, i: int) -> Agent:
        return self.agents[i % len(self.agents)]

    @property
    def ids(self) -> list[str]:
        return [a.id for a in self.agents]

    def strongest(self, k: int = 1) -> list[Agent]:
        """The ``k`` agents of the biggest models (team order among equals, and in the result), or the
        first ``k`` when some agent's size is unknown."""
        k = min(k, len(self.agents))
        sizes = [a.config.parameters for a in self.agents]
        if any(s is None for s in sizes):
            return self.agents[:k]
        ranked = sorted(range(len(self.agents)), key=lambda i: -(sizes[i] or 0.0))  # stable
        return [self.agents[i] for i in sorted(ranked[:k])]


def team_configs(
    specs: Sequence[str],
    size: int,
    *,
    temperatures: Sequence[float] = (0.2, 0.6, 0.8, 0.4, 1.0),
    seed: int = 0,
    max_tokens: int = 1024,
    languages: Sequence[str] = (),
) -> list[AgentConfig]:
    """Configs for ``size`` agents: model specs round-robin, temperatures, seeds and prompt variants varied,
    and ``languages`` round-robin when given (none: every agent writes in the problem's language).

    An agent samples by its *rank among the agents of its model*: the k-th agent of a model samples at
    the k-th temperature, with seed ``seed + 1000 k`` and prompt variant k, whatever other models the team
    holds. So every model's first agent drafts exactly what ``single`` of that model drafts, and a mixed
    team's drafts are the first drafts of each model's own team (in a bench: the same draws, computed
    once). A cascade that escalates to a bigger model gets that model's ``single`` draft, not a hotter
    sample of a later variant.
    """
    if not specs:
        raise ValueError("no model spec")
    models = [specs[i % len(specs)] for i in range(size)]
    ranks = [models[:i].count(m) for i, m in enumerate(models)]
    return [
        AgentConfig(
            id=f"agent{i}",
            model=model,
            temperature=temperatures[rank % len(temperatures)],
            seed=seed + 1000 * rank,
            max_tokens=max_tokens,
            prompt_variant=rank,
            language=languages[i % len(languages)] if languages else None,
        )
        for i, (model, rank) in enumerate(zip(models, ranks, strict=True))
    ]


__all__ = ["Agent", "AgentConfig", "BudgetExceeded", "Team", "team_configs"]
