"""Every setting of a team server (``memdoor serve``), with its default and meaning."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from memdoor.core.errors import UsageError
from memdoor.run.config import DEFAULT_MODEL, StrategySpec
from memdoor.server.teams import DEFAULT_TEAMS, team_table

TOKEN_ENV = "MEMDOOR_SERVE_TOKEN"
"""Environment variable holding the bearer token when ``--token`` is not given."""

ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?|https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")
"""A web origin: scheme, host and optional port, nothing else."""


class ServeConfig(BaseModel):
    """How a team server runs. Limits apply per request unless said otherwise."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(
        default="127.0.0.1",
        description="Address to bind. Anything but loopback needs a token (see memdoor.server.launch).",
    )
    port: int = Field(default=8080, ge=0, le=65535, description="TCP port to bind (0: any free port).")
    models: list[str] = Field(
        default_factory=lambda: [DEFAULT_MODEL],
        min_length=1,
        description="Model specs of the agents, assigned round-robin (several make a mixed team).",
    )
    teams: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TEAMS),
        min_length=1,
        description="Teams offered as models, as memdoor/<strategy>-<agents> or <strategy>:<agents>.",
    )
    token: SecretStr | None = Field(
        default=None, description="Bearer token clients must send; None: no authentication (loopback only)."
    )
    concurrency: int = Field(default=1, ge=1, description="Team runs at once (server-wide).")
    max_queue: int = Field(
        default=16,
        ge=0,
        description="Requests that may wait for a run slot (server-wide); one more is answered 429.",
    )
    timeout_s: float | None = Field(
        default=600.0,
        gt=0,
        description="Wall seconds a request may take, queue wait included; then 504. None: no limit.",
    )
    budget_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Prompt + completion tokens the whole team may spend on a request; then 504. None: no limit.",
    )
    max_tokens: int = Field(
        default=1024, ge=16, description="Completion token cap per model call (a request may ask for less)."
    )
    test_inputs: int = Field(
        default=5,
        ge=0,
        description="Test inputs the team writes when the request shows no examples (0: none; "
        "the selector then groups candidates by behaviour on them).",
    )
    options: dict[str, dict[str, object]] = Field(
        default_factory=dict,
        description="Strategy options by strategy name, e.g. {'hybrid': {'repair_rounds': 3}}.",
    )
    progress: Literal["reasoning", "comments", "none"] = Field(
        default="reasoning",
        description="How a stream shows the team's progress: as delta.reasoning_content (clients show it "
        "as thinking), as SSE comments (invisible to clients), or not at all.",
    )
    heartbeat_s: float = Field(
        default=10.0, gt=0, description="Seconds of silence after which a stream sends a keep-alive comment."
    )
    max_body_bytes: int = Field(
        default=4 * 1024 * 1024, ge=1024, description="Largest request body accepted; a larger one is a 413."
    )
    retry_after_s: int = Field(default=2, ge=0, description="Retry-After seconds sent with a 429.")
    max_connections: int = Field(
        default=1000,
        ge=1,
        le=1_000_000,
        description="Open client connections at once (server-wide). Above it the connection longest waiting "
        "for its request or receiving its body is closed to make room, or, when every one holds a request "
        "being answered, the new one is answered 503. Lowered at start to fit the process's open-file limit.",
    )
    idle_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="Seconds a connection may stay silent while the server waits for its request (a new "
        "connection, or a kept-alive one between requests); then it is closed.",
    )
    header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="Seconds from when a connection begins waiting for a request until its whole request "
        "head (request line and headers) has arrived; then 408 and closed.",
    )
    body_timeout_s: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="Seconds for a request's whole body to arrive after its head; then 408 and closed.",
    )
    write_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Seconds a connection may leave its answers unread (the server's writing to it paused, "
        "its buffers full); then it is closed, the rest of its answers dropped.",
    )
    log_repeat_window_s: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="A log line that repeats (a refused connection, a client that left, accept() out of "
        "files) is logged once, then once per this many seconds with the count of its repeats.",
    )
    trace_dir: Path | None = Field(
        default=None, description="Where run traces are saved (memdoor trace ID); None: not saved."
    )
    seed: int = Field(default=0, description="Base sampling seed when a request gives none.")
    review_repo: Path | None = Field(
        default=None,
        description="A git checkout that served reviews apply diffs to; with it the server also offers "
        "memdoor/review-N models (see memdoor.server.review). None: no review models.",
    )
    review_test: str | None = Field(
        default=None, description="Shell command running the review repository's tests (in the sandbox)."
    )
    review_agents: list[Annotated[int, Field(ge=1, le=16)]] = Field(
        default_factory=lambda: [3, 5], min_length=1, description="Team sizes of the review models offered."
    )

    cors_origins: list[str] = Field(
        default_factory=list,
        description="Web origins (scheme://host[:port]) whose pages may call the server from a browser "
        "(CORS); none by default, so no web page can read the answers.",
    )

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, v: list[str]) -> list[str]:
        for origin in v:
            if not ORIGIN.fullmatch(origin):
                raise ValueError(f"{origin!r} is not an origin like https://editor.example:8443 (no path)")
        return v

    @field_validator("teams")
    @classmethod
    def _teams_parse(cls, v: list[str]) -> list[str]:
        try:
            team_table(v)
        except UsageError as e:  # shown as a validation error of this field
            raise ValueError(str(e)) from None
        return v

    def team_table(self) -> dict[str, StrategySpec]:
        """Model id → StrategySpec of the teams served."""
        return team_table(self.teams)
