"""Value types of command-line options, shared by every command (argparse ``type=``).

Each type parses one option value and refuses anything out of its range with
``argparse.ArgumentTypeError``, so argparse reports ``argument --timeout: ...`` on one line and exits 2
(see :class:`memdoor.cli.Parser`) before a command runs. Floats must be finite: ``nan`` and ``inf``
are refused everywhere, as they would pass a ``> 0`` check and then overflow (``int(inf)``) or never
end (``sleep(nan)``). Every range has an upper bound too, so no limit can overflow an rlimit, a Redis
TTL or a C integer further down.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

from memdoor.core.limits import MAX_AGENTS

MAX_SECONDS = 7 * 24 * 3600.0
"""Longest duration any option accepts (a week)."""
MAX_COUNT = 1_000_000
"""Largest count (workers, concurrency, queue length...) unless an option says otherwise."""
MAX_TOKENS = 10**12
"""Largest token or call budget."""
MAX_SEED = 2**31 - 1
"""Seeds are passed to model backends, whose seeds are 32-bit or 64-bit integers."""


def _show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


@dataclass(frozen=True)
class IntRange:
    """An integer ``lo <= n <= hi``."""

    lo: int
    hi: int

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {_show(text)}") from None
        if value < self.lo:
            raise argparse.ArgumentTypeError(f"must be at least {self.lo} (got {_show(text)})")
        if value > self.hi:
            raise argparse.ArgumentTypeError(f"must be at most {self.hi} (got {_show(text)})")
        return value


@dataclass(frozen=True)
class FloatRange:
    """A finite number ``lo < x <= hi`` (``lo <= x <= hi`` when ``closed``)."""

    lo: float
    hi: float
    closed: bool = False

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {_show(text)}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number (got {_show(text)})")
        if value < self.lo or (value == self.lo and not self.closed):
            low = "at least" if self.closed else "more than"
            raise argparse.ArgumentTypeError(f"must be {low} {self.lo:g} (got {_show(text)})")
        if value > self.hi:
            raise argparse.ArgumentTypeError(f"must be at most {self.hi:g} (got {_show(text)})")
        return value


def at_least(lo: int, hi: int = MAX_COUNT) -> Callable[[str], int]:
    """An integer option of at least ``lo`` (and at most ``hi``)."""
    return IntRange(lo, hi)


POSITIVE = at_least(1)
"""A count of at least 1."""
NON_NEGATIVE = at_least(0)
"""A count that may be 0 (its help says what 0 means)."""
TOKENS = at_least(1, MAX_TOKENS)
"""A token or call budget."""
MAX_TOKENS_PER_CALL = at_least(16, 1_000_000)
"""Completion tokens per model call (16 is the least a code answer can fit in)."""
AGENTS = at_least(1, MAX_AGENTS)
"""A team size."""
FLOPS = FloatRange(0.0, 1e30)
"""A compute budget in FLOPs (``5e12``): finite, more than 0."""
SEED = IntRange(0, MAX_SEED)
"""A sampling seed."""
PORT = IntRange(0, 65535)
"""A TCP port (0: any free port)."""
SECONDS = FloatRange(0.0, MAX_SECONDS)
"""A duration: finite, more than 0."""
SECONDS_OR_ZERO = FloatRange(0.0, MAX_SECONDS, closed=True)
"""A duration that may be 0 (its help says what 0 means)."""
