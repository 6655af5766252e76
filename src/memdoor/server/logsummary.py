"""Repeated log lines once, then a count: a flood of the same error cannot flood the server's log.

A hostile or broken client can make the same error happen thousands of times a second (connections
refused at the cap, clients leaving, ``accept()`` out of file descriptors). :class:`RepeatSummary`
is a logging filter: the first record of a kind is logged in full (traceback included), the next
ones of that kind are only counted, and :meth:`RepeatSummary.flush` (called by the server about
once a second) logs one line per kind, "… N more in the last W s", when its window has passed.

A kind is the logger, the message template (before its arguments: the client's address may differ)
and, for an exception, its type and the line that raised it — so two different bugs are two kinds.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

SUMMARY = "memdoor_summary"
"""Attribute of the summary records themselves (never counted as repeats)."""


@dataclass
class _Kind:
    logger: str
    first_line: str
    since: float
    level: int
    count: int = 0
    examples: list[str] = field(default_factory=list)


def kind_of(record: logging.LogRecord) -> tuple[object, ...]:
    """What makes two records the same kind of event (see the module's doc)."""
    where: tuple[object, ...] = ()
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        frames = traceback.extract_tb(exc.__traceback__)
        last = (frames[-1].filename, frames[-1].lineno) if frames else ()
        where = (type(exc).__qualname__, getattr(exc, "errno", None), *last)
    return (record.name, record.levelno, str(record.msg), *where)


class RepeatSummary(logging.Filter):
    """Lets the first record of each kind through; counts the repeats for :meth:`flush` (thread-safe)."""

    def __init__(self, window_s: float = 10.0, *, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        if window_s <= 0:
            raise ValueError("window_s must be positive")
        self.window_s = window_s
        self._clock = clock
        self._kinds: dict[tuple[object, ...], _Kind] = {}
        self._lock = threading.Lock()
        self._attached: list[logging.Logger] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, SUMMARY, False) or record.levelno < logging.INFO:
            return True
        key = kind_of(record)
        with self._lock:
            seen = self._kinds.get(key)
            if seen is None:
                try:
                    text = record.getMessage()
                except Exception:  # arguments that do not fit the template: logging reports it itself
                    text = str(record.msg)
                first = text.strip().splitlines()
                self._kinds[key] = _Kind(
                    record.name, first[0] if first else "", self._clock(), record.levelno
                )
                return True
            seen.count += 1
            return False

    def flush(self, *, final: bool = False) -> None:
        """Log the count of every kind whose window has passed (every kind when ``final``); a kind
        that stayed quiet for a whole window is forgotten, so its next record is logged in full."""
        now = self._clock()
        due: list[_Kind] = []
        with self._lock:
            for key, kind in list(self._kinds.items()):
                if not final and now - kind.since < self.window_s:
                    continue
                if kind.count:
                    due.append(_Kind(kind.logger, kind.first_line, kind.since, kind.level, kind.count))
                    kind.count, kind.since = 0, now
                else:
                    del self._kinds[key]
        for kind in due:
            logging.getLogger(kind.logger).log(
                kind.level,
                "%s (… %s more in the last %.0f s)",
                kind.first_line,
                f"{kind.count:,}",
                max(now - kind.since, 1.0),
                extra={SUMMARY: True},
            )

    def attach(self, names: Iterable[str]) -> None:
        """Filter the records of these loggers (until :meth:`detach`)."""
        for name in names:
            logger = logging.getLogger(name)
            logger.addFilter(self)
            self._attached.append(logger)

    def detach(self) -> None:
        """Log what is still counted, and stop filtering."""
        self.flush(final=True)
        for logger in self._attached:
            logger.removeFilter(self)
        self._attached.clear()
