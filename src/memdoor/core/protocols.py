"""The ports, in one place. Implementations fit them without inheriting (structural typing).

Implementations are plain classes chosen by a short name from :mod:`memdoor.core.registry`. This module
sits low (see docs/architecture.md): it names only records (problems, verdicts, candidates). The
strategies' own interface, which speaks of a Team and a RunContext, is
:class:`memdoor.strategies.base.Strategy`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from memdoor.core.candidates import Candidate, DuelWhen, Selection
    from memdoor.core.messages import Message, ModelResponse
    from memdoor.core.problem import Problem, TestCase
    from memdoor.core.verdict import Verdict


@runtime_checkable
class Model(Protocol):
    """A chat model. ``spec`` is the string it was made from (``local:qwen2.5-coder-0.5b``)."""

    spec: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.2,
        max_tokens: int = 1024,
        logprobs: bool = False,
        seed: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> ModelResponse:
        """Generate ``n`` completions. Raises :class:`memdoor.core.errors.ModelError` subclasses when it fails for good."""
        ...

    async def aclose(self) -> None:
        """Release connections (and, for embedded models, nothing shared with other users)."""
        ...


@runtime_checkable
class Sandbox(Protocol):
    """Runs untrusted code against tests in isolation. Never raises for anything the candidate does."""

    name: str

    def run(
        self,
        code: str,
        tests: Sequence[TestCase],
        *,
        func_name: str | None = None,
        prelude: str = "none",
        stop_at_first_failure: bool = True,
    ) -> Verdict:
        """Run ``code`` against ``tests`` (all of one kind). Tests whose ``output`` is None only record output."""
        ...


@runtime_checkable
class Memory(Protocol):
    """Shared team memory per task: append-only logs by kind, plus a final answer.

    Kinds used by strategies: ``drafts``, ``reviews``, ``verdicts``, ``votes``, ``timeline``.
    Entries are JSON-able dicts. Appends never overwrite: concurrent writers both land.
    """

    async def append(self, task_id: str, kind: str, entry: dict[str, Any]) -> int:
        """Append ``entry`` to the ``kind`` log of ``task_id``; return its 0-based position."""
        ...

    async def entries(self, task_id: str, kind: str) -> list[dict[str, Any]]:
        """All entries of the ``kind`` log of ``task_id``, in append order."""
        ...

    async def set_final(self, task_id: str, answer: dict[str, Any]) -> None:
        """Record the team's final answer for ``task_id``."""
        ...

    async def get_final(self, task_id: str) -> dict[str, Any] | None:
        """The final answer of ``task_id``, or None when there is none yet."""
        ...

    async def release(self, task_id: str) -> None:
        """``task_id``'s run is over and its trace is kept elsewhere (a trace file): a memory held in this
        process only forgets the task, so a long-lived server's memory does not grow with every request;
        a store shared with other processes keeps it for them."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class CodeRunner(Protocol):
    """Runs code on tests off the event loop, within the run's sandbox slots (:class:`memdoor.judging.judge.Judge`)."""

    async def run_tests(
        self,
        problem: Problem,
        code: str,
        tests: Sequence[TestCase] | None = None,
        *,
        stop_at_first_failure: bool = False,
    ) -> Verdict:
        """``code`` on ``tests`` (default: the problem's public tests)."""
        ...


@runtime_checkable
class Referee(Protocol):
    """Says which of two outputs is right for one input of a problem (an agent asked to work it out: S*'s
    judged comparison). It sees the public view of the problem, the input and the outputs, never code."""

    async def which(self, problem: Problem, test: TestCase, outputs: Sequence[str]) -> int | None:
        """The index in ``outputs`` of the right one, or None when it cannot tell."""
        ...


@runtime_checkable
class Selector(Protocol):
    """Chooses one candidate among many, using only public tests and agent-written inputs.

    A selector only decides: the strategy records its decision (memory kind ``votes``, a ``vote`` event).
    """

    async def select(
        self,
        problem: Problem,
        candidates: Sequence[Candidate],
        runner: CodeRunner,
        *,
        extra_inputs: Sequence[TestCase] = (),
        referee: Referee | None = None,
        duel: DuelWhen = "contested",
    ) -> Selection:
        """Pick a candidate. ``problem`` is the public view (no hidden tests); ``runner`` runs candidates;
        ``extra_inputs`` are agent-written inputs (``output`` None) whose outputs help tell candidates apart;
        ``referee``, when given, settles between the two leading groups: a vote without a strict majority
        (``duel="contested"``), or any vote where the survivors behave in two or more ways (``"split"``)."""
        ...
