"""Progress of a bench run on standard error: a rich bar with ETA and a live scoreboard on a terminal,
plain one-line-per-result output otherwise (logs, CI, pipes)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import IO, Protocol

from memdoor.bench.records import ResultRecord


class Scoreboard:
    """Solved / finished per row, counting what earlier sessions stored too."""

    def __init__(self, rows: Sequence[str], stored: Sequence[ResultRecord] = ()):
        self.rows = list(rows)
        self.solved = dict.fromkeys(self.rows, 0)
        self.finished = dict.fromkeys(self.rows, 0)
        self.errors = dict.fromkeys(self.rows, 0)
        for r in stored:
            self.add(r, replacing=None)

    def add(self, result: ResultRecord, replacing: ResultRecord | None) -> None:
        """Count ``result``; ``replacing`` is the stored error it supersedes (a retry), if any."""
        if result.row not in self.solved:
            return
        if replacing is not None:
            self.finished[replacing.row] -= 1
            self.errors[replacing.row] -= replacing.status == "error"
        self.finished[result.row] += 1
        self.solved[result.row] += result.passed
        self.errors[result.row] += result.status == "error"

    def line(self) -> str:
        parts = []
        for row in self.rows:
            part = f"{row} {self.solved[row]}/{self.finished[row]}"
            if self.errors[row]:
                part += f" ({self.errors[row]} err)"
            parts.append(part)
        return " | ".join(parts)


class Progress(Protocol):
    """What the bench loop reports to."""

    def start(self, total: int, already: int, board: Scoreboard) -> None: ...

    def advance(self, result: ResultRecord) -> None: ...

    def close(self) -> None: ...


class PlainProgress:
    """One line per finished result: ``[12/200 eta 3m10s] HumanEval/3 parallel:5 passed 4.1s | board``."""

    def __init__(self, stream: IO[str] | None = None):
        self._stream = stream or sys.stderr
        self._total = self._done = self._already = 0
        self._t0 = time.monotonic()
        self._board: Scoreboard | None = None

    def start(self, total: int, already: int, board: Scoreboard) -> None:
        self._total, self._done, self._already, self._board = total, already, already, board
        self._t0 = time.monotonic()
        print(
            f"bench: {total} runs, {already} already stored, {total - already} to do",
            file=self._stream,
            flush=True,
        )

    def advance(self, result: ResultRecord) -> None:
        self._done += 1
        new = self._done - self._already
        left = self._total - self._done
        eta = (time.monotonic() - self._t0) / new * left if new else 0.0
        outcome = "error" if result.status == "error" else ("passed" if result.passed else "failed")
        board = self._board.line() if self._board else ""
        print(
            f"[{self._done}/{self._total} eta {_duration(eta)}] {result.problem_id} {result.row} "
            f"{outcome} {result.wall_seconds:.1f}s | {board}",
            file=self._stream,
            flush=True,
        )

    def close(self) -> None:
        return None


class RichProgress:
    """A progress bar with elapsed time and ETA, and the scoreboard under it (terminal only)."""

    def __init__(self, stream: IO[str] | None = None):
        from rich.console import Console

        self._console = Console(file=stream or sys.stderr)
        self._live = None
        self._board: Scoreboard | None = None

    def start(self, total: int, already: int, board: Scoreboard) -> None:
        from rich.console import Group
        from rich.live import Live
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichBar

        self._board = board
        self._bar = RichBar(
            TextColumn("bench"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self._console,
        )
        self._task = self._bar.add_task("bench", total=total, completed=already)
        self._group = Group(self._bar, self._table())
        self._live = Live(self._group, console=self._console, refresh_per_second=4, transient=False)
        self._live.start()

    def _table(self):
        from rich.table import Table

        table = Table(box=None, pad_edge=False)
        for col in ("row", "solved", "finished", "errors", "pass@1"):
            table.add_column(col)
        board = self._board
        assert board is not None
        for row in board.rows:
            fin = board.finished[row]
            rate = f"{board.solved[row] / fin:.1%}" if fin else "-"
            table.add_row(row, str(board.solved[row]), str(fin), str(board.errors[row]), rate)
        return table

    def advance(self, result: ResultRecord) -> None:
        from rich.console import Group

        self._bar.advance(self._task)
        if self._live is not None:
            self._live.update(Group(self._bar, self._table()))

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def make_progress(stream: IO[str] | None = None) -> Progress:
    """Rich on a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    return RichProgress(stream) if isatty is not None and isatty() else PlainProgress(stream)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else (f"{m}m{s:02d}s" if m else f"{s}s")
