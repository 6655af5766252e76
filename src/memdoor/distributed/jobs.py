"""What travels between the orchestrator and the workers, and where it lives in Redis.

A *job* is one ``Model.complete`` call. It is added to the stream of its model (``P jobs:<model>``),
read by one worker of the consumer group ``workers``, and answered by a *result* stored once at
``P result:<job id>`` (``SET NX``: the first result wins, a job done twice is stored once); a push to
``P reply:<job id>`` wakes the waiting orchestrator. A job id is ``<run>:<digest>:<repeat>`` — the
run (task), a digest of the request (messages, sampling settings, the agent's own seed) and how many
identical requests the run made before — so a result is only ever reused for the very same request,
whatever order concurrent agents happen to call in (an orchestrator taking a task over reuses them).

Job entries are not signed, so a worker checks each one (:meth:`Job.mismatch`): its id must be its own
request's (``<run>:<digest of what it asks>:<repeat>``) and its model the stream's. Any Redis client can
add an entry under a lead's job id; this way it can only carry that job's very request, whose honest
answer is the one the lead wants, never a prompt of its own choosing answered and signed for that id.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

from pydantic import BaseModel, Field

from memdoor.core.errors import ModelError, ModelTimeout, ModelUnavailable, RateLimited
from memdoor.core.messages import Message, ModelResponse

GROUP = "workers"
"""The consumer group every worker of a model's stream belongs to."""

ERRORS: dict[str, type[ModelError]] = {
    cls.__name__: cls for cls in (ModelError, RateLimited, ModelTimeout, ModelUnavailable)
}
"""Model error types a worker can report back, by class name (the orchestrator raises the same type)."""


class Job(BaseModel):
    """One model call to be answered by a worker serving ``model``."""

    id: str = Field(description="Job id: <run>:<digest>:<repeat>; the key of its result.")
    run: str = Field(description="The run (task) the call belongs to.")
    step: int = Field(description="Position of the call in its run, in issue order (0, 1, ...).")
    model: str = Field(description="Model spec the call is routed to (the stream it is on).")
    messages: list[Message] = Field(description="The chat messages.")
    n: int = Field(default=1, description="Completions requested.")
    temperature: float = Field(default=0.2, description="Sampling temperature.")
    max_tokens: int = Field(default=1024, description="Completion token cap.")
    logprobs: bool = Field(default=False, description="Whether token log-probabilities are wanted.")
    seed: int | None = Field(default=None, description="Sampling seed.")
    stop: list[str] | None = Field(default=None, description="Stop sequences.")
    created: float = Field(default_factory=time.time, description="Unix time the job was first enqueued.")

    def request_digest(self) -> str:
        return request_digest(
            self.model,
            self.messages,
            self.n,
            self.temperature,
            self.max_tokens,
            self.logprobs,
            self.seed,
            self.stop,
        )

    def mismatch(self, model: str) -> str | None:
        """Why this entry is not a job a lead could have issued on the stream of ``model`` (its model is
        another, or its id is not ``<run>:<its own request digest>:<repeat>``), or None when it is."""
        if self.model != model:
            name = self.model if len(self.model) <= 100 else self.model[:99] + "…"
            return f"its model {name!r} is not the stream's"
        prefix = f"{self.run}:{self.request_digest()}:"
        repeat = self.id.removeprefix(prefix)
        if not self.id.startswith(prefix) or not (repeat.isascii() and repeat.isdigit()):
            return "its id is not the one of its request"
        return None


def job_id(run: str, digest: str, repeat: int) -> str:
    """The id of the ``repeat``-th identical request (of digest ``digest``) of a run."""
    return f"{run}:{digest}:{repeat}"


def request_digest(
    model: str,
    messages: list[Message],
    n: int,
    temperature: float,
    max_tokens: int,
    logprobs: bool,
    seed: int | None,
    stop: list[str] | None,
) -> str:
    """A short digest of everything that decides a call's answer."""
    body = json.dumps(
        [model, messages, n, temperature, max_tokens, logprobs, seed, stop],
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


class JobResult(BaseModel):
    """A worker's answer to a job: a model response, or the type and message of the model error."""

    job: str = Field(description="Id of the job answered.")
    ok: bool = Field(description="True when ``response`` holds the answer.")
    response: ModelResponse | None = Field(default=None, description="The model's answer when ok.")
    error_type: str | None = Field(default=None, description="Model error class name when not ok.")
    error: str | None = Field(default=None, description="Model error message when not ok.")
    agent: str = Field(description="AGENT_ID of the worker that answered.")
    model: str = Field(description="Model spec of the worker that answered.")
    deliveries: int = Field(default=1, description="How many times the job had been handed to a worker.")
    seconds: float = Field(default=0.0, description="Wall seconds the worker spent on the job.")
    finished: float = Field(default_factory=time.time, description="Unix time the result was stored.")

    def raise_error(self) -> None:
        """Raise the model error this result reports (the same type the worker's model raised)."""
        if self.ok:
            return
        cls = ERRORS.get(self.error_type or "", ModelError)
        raise cls(f"{self.agent} ({self.model}): {self.error}")


@dataclass(frozen=True)
class Keys:
    """The key layout under a prefix (``memdoor:`` by default). Nothing else is written by the workers,
    except the seed protocol's own ``task:<id>`` / ``memory:<id>`` keys (see :mod:`.seed`)."""

    prefix: str = "memdoor:"

    def stream(self, model: str) -> str:
        """The job stream of a model spec."""
        return f"{self.prefix}jobs:{model}"

    def result(self, job_id: str) -> str:
        return f"{self.prefix}result:{job_id}"

    def queued(self, job_id: str) -> str:
        """The stream entry id of a job while it waits or runs (so a takeover does not enqueue it twice)."""
        return f"{self.prefix}queued:{job_id}"

    def reply(self, job_id: str) -> str:
        return f"{self.prefix}reply:{job_id}"

    def work(self, run: str) -> str:
        """List of what the workers did for a run: one JSON entry per stored result (agent, job, seconds)."""
        return f"{self.prefix}work:{run}"

    @property
    def agents(self) -> str:
        """Hash: agent id → JSON of the worker's registration (model, role, host, pid, started)."""
        return f"{self.prefix}agents"

    def heartbeat(self, agent_id: str) -> str:
        """String with a TTL, renewed while the worker lives."""
        return f"{self.prefix}agent:{agent_id}"

    @property
    def stats(self) -> str:
        """Hash of counters: results stored, duplicates dropped, jobs reclaimed, handed back..."""
        return f"{self.prefix}stats"

    def claim(self, task_id: str) -> str:
        """Lock (``SET NX EX``) held by the worker orchestrating a seed task."""
        return f"{self.prefix}claim:{task_id}"

    def run(self, task_id: str) -> str:
        """The run id of a seed task, kept while it is unfinished so a takeover reuses results."""
        return f"{self.prefix}run:{task_id}"
