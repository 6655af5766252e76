"""A deterministic model that replays given answers. For tests of control flow and demos of the machinery only.

Never use it to produce a reported result: it knows nothing about the problem.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from memdoor.core.errors import ModelError, ModelSpecError
from memdoor.core.messages import Completion, Message, ModelResponse, Usage

Responder = Callable[[Sequence[Message]], "str | Exception"]


class ScriptedModel:
    """Replays ``answers`` in order (cycling when ``cycle``), or asks ``respond(messages)`` for each completion.

    An answer that is an Exception instance is raised instead (to script failures). Token counts are
    whitespace word counts, so budgets behave like a real model's. ``delay`` sleeps per call.
    """

    def __init__(
        self,
        answers: Sequence[str | Exception] = (),
        *,
        respond: Responder | None = None,
        cycle: bool = True,
        logprob: float | Sequence[float] = -0.1,
        delay: float = 0.0,
        spec: str = "scripted",
    ):
        if not answers and respond is None:
            raise ModelSpecError("scripted model needs answers or a respond function")
        self.spec = spec
        self._answers = list(answers)
        self._respond = respond
        self._cycle = cycle
        self._logprobs = [logprob] if isinstance(logprob, int | float) else list(logprob)
        self._delay = delay
        self.calls: list[list[Message]] = []
        self._i = 0

    @classmethod
    def from_spec(cls, rest: str) -> ScriptedModel:
        """``scripted:FILE`` where FILE is a JSON list of answer strings, or an object
        ``{"answers": [...], "delay": SECONDS}`` (a pause per call, to script a slow model)."""
        path = Path(rest)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise ModelSpecError(f"scripted model: cannot read answers from {rest!r}: {e}") from None
        delay = 0.0
        if isinstance(data, dict):
            delay = data.get("delay", 0.0)
            if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
                raise ModelSpecError(f"scripted model: {rest!r}: 'delay' must be a non-negative number")
            data = data.get("answers")
        answers = data
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers) or not answers:
            raise ModelSpecError(f"scripted model: {rest!r} must hold a non-empty JSON list of strings")
        return cls(answers, spec=f"scripted:{rest}", delay=float(delay))

    def _next(self, messages: Sequence[Message]) -> str | Exception:
        if self._respond is not None:
            return self._respond(messages)
        if self._i >= len(self._answers):
            if not self._cycle:
                return ModelError("scripted model ran out of answers")
            self._i = 0
        answer = self._answers[self._i]
        self._i += 1
        return answer

    async def complete(
        self, messages, *, n=1, temperature=0.2, max_tokens=1024, logprobs=False, seed=None, stop=None
    ) -> ModelResponse:
        self.calls.append(list(messages))
        if self._delay:
            await asyncio.sleep(self._delay)
        completions = []
        for k in range(n):
            answer = self._next(messages)
            if isinstance(answer, Exception):
                raise answer
            words = answer.split()[:max_tokens]
            lp = self._logprobs[(len(self.calls) - 1 + k) % len(self._logprobs)]
            completions.append(
                Completion(
                    text=answer,
                    finish_reason="stop",
                    logprobs=[float(lp)] * max(1, len(words)) if logprobs else None,
                )
            )
        prompt_tokens = sum(len(m.get("content", "").split()) for m in messages)
        completion_tokens = sum(max(1, len(c.text.split())) for c in completions)
        return ModelResponse(
            model=self.spec,
            completions=completions,
            usage=Usage(
                prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, latency_s=self._delay
            ),
        )

    async def aclose(self) -> None:
        return None
