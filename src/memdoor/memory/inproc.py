"""Team memory in the current process: dicts and lists, safe under asyncio (the default backend)."""

from __future__ import annotations

from typing import Any

from memdoor.memory.codec import decode, encode, encode_entry


class InProcMemory:
    """Per task: append-only logs by kind, small JSON values and a final answer, held in memory.

    Every operation completes without awaiting anything, so coroutines of one event loop never see
    a half-done write and concurrent appends all land in order. Entries are stored as JSON text,
    exactly as :class:`~memdoor.memory.redis_memory.RedisMemory` stores them, so both backends
    return the same values. Not shared between processes: use Redis for that.
    """

    name = "inproc"

    def __init__(self) -> None:
        self._logs: dict[str, dict[str, list[str]]] = {}
        self._values: dict[str, dict[str, str]] = {}
        self._finals: dict[str, str] = {}

    async def append(self, task_id: str, kind: str, entry: dict[str, Any]) -> int:
        """Append ``entry`` to the ``kind`` log of ``task_id``; return its 0-based position."""
        text = encode_entry(entry)
        log = self._logs.setdefault(task_id, {}).setdefault(kind, [])
        log.append(text)
        return len(log) - 1

    async def entries(self, task_id: str, kind: str, start: int = 0) -> list[dict[str, Any]]:
        """Entries of the ``kind`` log of ``task_id`` from position ``start`` on, in append order."""
        log = self._logs.get(task_id, {}).get(kind, [])
        return [decode(t, f"{task_id}/{kind}") for t in log[max(start, 0) :]]

    async def set_final(self, task_id: str, answer: dict[str, Any]) -> None:
        """Record (or replace) the team's final answer for ``task_id``."""
        self._finals[task_id] = encode_entry(answer)

    async def get_final(self, task_id: str) -> dict[str, Any] | None:
        """The final answer of ``task_id``, or None when there is none yet."""
        text = self._finals.get(task_id)
        return None if text is None else decode(text, f"{task_id}/final")

    async def put(self, task_id: str, key: str, value: Any, *, overwrite: bool = True) -> bool:
        """Store a small JSON value under ``key`` for ``task_id``.

        With ``overwrite=False`` an existing value is kept. Returns whether the value was written.
        """
        values = self._values.setdefault(task_id, {})
        if not overwrite and key in values:
            return False
        values[key] = encode(value)
        return True

    async def get(self, task_id: str, key: str, default: Any = None) -> Any:
        """The value stored under ``key`` for ``task_id``, or ``default``."""
        text = self._values.get(task_id, {}).get(key)
        return default if text is None else decode(text, f"{task_id}/{key}")

    async def tasks(self) -> list[str]:
        """Ids of the tasks that have anything stored, sorted."""
        return sorted(set(self._logs) | set(self._values) | set(self._finals))

    async def kinds(self, task_id: str) -> list[str]:
        """Kinds of log ``task_id`` has entries in, sorted."""
        return sorted(self._logs.get(task_id, {}))

    async def delete(self, task_id: str) -> None:
        """Forget everything stored for ``task_id``."""
        self._logs.pop(task_id, None)
        self._values.pop(task_id, None)
        self._finals.pop(task_id, None)

    async def release(self, task_id: str) -> None:
        """Forget ``task_id``: nothing else can read this memory, and it must not grow with every run."""
        await self.delete(task_id)

    async def aclose(self) -> None:
        """Nothing to release."""

    async def __aenter__(self) -> InProcMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
