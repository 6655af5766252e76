"""The OpenAI chat-completions shapes the server reads and writes.

Requests are parsed leniently where OpenAI clients send extras (``top_p``, ``tools``, ``user``... are
accepted and ignored) and strictly where a field matters (``model``, ``messages``, ``stream``, ``n``).
A request may carry Memdoor's own limits in a ``memdoor`` object (the openai client's ``extra_body``);
they can only lower the server's limits.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memdoor.core.ledger import Ledger


class TextPart(BaseModel):
    """One part of a message's content; only ``text`` parts are read (images and audio are ignored)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="Part type: text, image_url, input_audio...")
    text: str | None = Field(default=None, description="The text of a text part.")


class ChatMessage(BaseModel):
    """One message of the conversation."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"] = Field(
        description="Who wrote it. The team reads user and assistant turns; system prompts are its own."
    )
    content: str | list[TextPart] | None = Field(default=None, description="Text, or a list of parts.")

    @property
    def text(self) -> str:
        """The message's text (text parts joined by newlines)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if p.type == "text" and p.text)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = Field(default=False, description="Send a last chunk with the usage.")


def lower_limit(server: float | int | None, asked: float | int | None):
    """The smaller of the server's and the request's limit (None: no limit)."""
    if server is None:
        return asked
    return server if asked is None else min(server, asked)


class MemdoorOptions(BaseModel):
    """Per-request limits (``extra_body={"memdoor": {...}}``); each may only lower the server's."""

    model_config = ConfigDict(extra="forbid")

    timeout: float | None = Field(
        default=None,
        gt=0,
        le=7 * 24 * 3600,
        allow_inf_nan=False,
        description="Wall seconds for this request.",
    )
    budget_tokens: int | None = Field(default=None, ge=1, description="Team tokens for this request.")


class ChatRequest(BaseModel):
    """``POST /v1/chat/completions``."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, description="A team id from GET /v1/models, e.g. memdoor/parallel-5.")
    messages: list[ChatMessage] = Field(min_length=1, description="The conversation.")
    stream: bool = Field(default=False, description="Answer as server-sent events.")
    stream_options: StreamOptions | None = Field(default=None, description="Streaming options.")
    n: int = Field(default=1, ge=1, description="Choices wanted; a team gives one answer, so only 1.")
    max_tokens: int | None = Field(default=None, ge=1, description="Completion cap per model call.")
    max_completion_tokens: int | None = Field(
        default=None, ge=1, description="Same as max_tokens (the newer name); the smaller one wins."
    )
    seed: int | None = Field(
        default=None, ge=0, le=2**31 - 1, description="Base sampling seed of the team (0 to 2**31 - 1)."
    )
    temperature: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="Ignored: each agent samples at its own temperature (team diversity).",
    )
    memdoor: MemdoorOptions | None = Field(default=None, description="Memdoor's per-request limits.")

    def call_cap(self) -> int | None:
        """The completion cap per call the client asked for, if any."""
        caps = [c for c in (self.max_tokens, self.max_completion_tokens) if c is not None]
        return min(caps) if caps else None


class ChatUsage(BaseModel):
    """The ``usage`` of an answer, in OpenAI's shape: tokens of the whole team (every agent's calls,
    test writing included). Not :class:`memdoor.core.messages.Usage`, which is one call's usage."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def of(cls, ledger: Ledger) -> ChatUsage:
        """The tokens of every call in ``ledger``."""
        t = ledger.totals()
        return cls(
            prompt_tokens=t.prompt_tokens, completion_tokens=t.completion_tokens, total_tokens=t.tokens
        )


def completion_body(
    *, id: str, created: int, model: str, content: str, usage: ChatUsage, extra: dict[str, Any]
) -> dict[str, Any]:
    """A ``chat.completion`` object with one assistant choice; ``extra`` goes under ``memdoor``."""
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": None,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage.model_dump(),
        "memdoor": extra,
    }


def chunk_body(
    *,
    id: str,
    created: int,
    model: str,
    delta: dict[str, Any] | None,
    finish_reason: str | None = None,
    usage: ChatUsage | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion.chunk``: one choice with ``delta``, or (``delta`` None) no choice and the usage."""
    body: dict[str, Any] = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "system_fingerprint": None,
        "choices": []
        if delta is None
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage.model_dump()
    if extra is not None:
        body["memdoor"] = extra
    return body


def model_card(model_id: str, created: int) -> dict[str, Any]:
    """One entry of ``GET /v1/models``."""
    return {"id": model_id, "object": "model", "created": created, "owned_by": "memdoor"}
