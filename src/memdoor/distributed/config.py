"""Settings of one worker: its answering role and the seed protocol it leads (``memdoor worker`` fills
them from its flags and environment)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["all", "answer", "lead"]
"""``answer``: takes model jobs; ``lead``: orchestrates seed tasks (needs no model); ``all``: both."""


class SeedOptions(BaseModel):
    """How a worker serves the seed protocol (``task:<id>`` in, ``memory:<id>`` out)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_prefix: str = Field(default="task:", description="Keys clients set: <task_prefix><id>.")
    answer_prefix: str = Field(default="memory:", description="Key of the answer: <answer_prefix><id>.")
    strategy: str = Field(default="parallel", description="Strategy for tasks that name none.")
    agents: int | None = Field(
        default=None,
        ge=1,
        description="Team size for tasks that name none; None: live answering workers, at most 5.",
    )
    max_tokens: int = Field(default=1024, ge=16, description="Completion token cap per model call.")
    poll: float = Field(default=0.5, gt=0, description="Seconds between scans for new tasks.")
    lease: float = Field(default=30.0, gt=0, description="Seconds a task claim lasts unless renewed.")
    max_tasks: int = Field(default=2, ge=1, description="Seed tasks one worker orchestrates at once.")
    budget_seconds: float | None = Field(default=None, gt=0, description="Wall-second budget per task.")


class WorkerConfig(BaseModel):
    """One worker (agent) of a distributed team."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    redis: str = Field(default="redis://127.0.0.1:6379/0", description="Redis URL (REDIS_URL).")
    prefix: str = Field(
        default="memdoor:", description="Prefix of every key the team uses (except seed keys)."
    )
    agent_id: str = Field(
        min_length=1, description="AGENT_ID: unique name of this agent (its consumer name)."
    )
    model: str | None = Field(default=None, description="MODEL_NAME: the model spec this agent answers with.")
    role: Role = Field(default="all", description="answer (model jobs), lead (seed tasks) or all (both).")
    concurrency: int = Field(default=1, ge=1, description="Jobs taken at once (e.g. for a batching server).")
    visibility_timeout: float = Field(
        default=30.0,
        gt=0,
        description="Seconds a job may go without its lease renewed before another worker takes it.",
    )
    heartbeat_ttl: float = Field(
        default=15.0, gt=0, description="TTL of the heartbeat key, renewed at a third of it."
    )
    result_ttl: int = Field(default=86400, gt=0, description="Seconds results are kept.")
    block: float = Field(default=1.0, gt=0, description="Seconds one read waits for a job.")
    grace: float = Field(
        default=30.0, ge=0, description="Seconds SIGTERM waits for the current job before handing it back."
    )
    startup_timeout: float = Field(default=60.0, gt=0, description="Seconds to wait for Redis at start.")
    seed: SeedOptions = Field(default_factory=SeedOptions, description="Seed protocol settings.")

    @property
    def answers(self) -> bool:
        return self.role in ("all", "answer")

    @property
    def leads(self) -> bool:
        return self.role in ("all", "lead")
