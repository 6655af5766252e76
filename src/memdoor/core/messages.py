"""What a model call returns."""

from __future__ import annotations

from pydantic import BaseModel, Field

Message = dict[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``."""


class Completion(BaseModel):
    """One generated answer."""

    text: str = Field(description="The generated text.")
    finish_reason: str | None = Field(default=None, description="stop, length, ... as the backend reports.")
    logprobs: list[float] | None = Field(
        default=None, description="Log-probability of each generated token, when the backend gives them."
    )

    @property
    def mean_logprob(self) -> float | None:
        """Mean token log-probability (a confidence signal), or None when unknown."""
        if not self.logprobs:
            return None
        return sum(self.logprobs) / len(self.logprobs)


class Usage(BaseModel):
    """What one call cost."""

    prompt_tokens: int = Field(default=0, description="Tokens in the prompt (counted once per call).")
    completion_tokens: int = Field(default=0, description="Tokens generated, over all n completions.")
    latency_s: float = Field(default=0.0, description="Wall seconds from request to full answer.")
    retries: int = Field(default=0, description="How many times the call was retried before it succeeded.")


class ModelResponse(BaseModel):
    """The answer to one ``Model.complete`` call."""

    model: str = Field(description="The model spec that answered.")
    completions: list[Completion] = Field(description="n completions, in order.")
    usage: Usage = Field(default_factory=Usage, description="Tokens and latency of the whole call.")
