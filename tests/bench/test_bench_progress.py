"""Progress output: plain lines off a terminal, a rich bar with a scoreboard on one."""

from __future__ import annotations

import io

from memdoor.bench.progress import PlainProgress, RichProgress, Scoreboard, make_progress
from memdoor.bench.records import ResultRecord


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def res(pid: str, row: str, passed: bool, status: str = "done") -> ResultRecord:
    return ResultRecord(problem_id=pid, row=row, status=status, passed=passed, wall_seconds=1.5)


def test_the_scoreboard_counts_stored_results_and_replaces_retried_errors():
    board = Scoreboard(
        ["single", "parallel:5"], [res("a", "single", True), res("b", "single", False, "error")]
    )
    assert board.line() == "single 1/2 (1 err) | parallel:5 0/0"
    board.add(res("b", "single", True), replacing=res("b", "single", False, "error"))
    assert board.line() == "single 2/2 | parallel:5 0/0"


def test_plain_progress_prints_one_line_per_result_with_eta_and_scoreboard():
    out = io.StringIO()
    progress = make_progress(out)
    assert isinstance(progress, PlainProgress)
    board = Scoreboard(["single"])
    progress.start(3, 1, board)
    r = res("p1", "single", True)
    board.add(r, None)
    progress.advance(r)
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "bench: 3 runs, 1 already stored, 2 to do"
    assert lines[1].startswith("[2/3 eta ") and "p1 single passed 1.5s | single 1/1" in lines[1]


def test_rich_progress_on_a_terminal_shows_the_bar_and_the_scoreboard():
    out = FakeTerminal()
    progress = make_progress(out)
    assert isinstance(progress, RichProgress)
    board = Scoreboard(["single", "hybrid:5"])
    progress.start(4, 0, board)
    for r in (res("p1", "single", True), res("p1", "hybrid:5", False)):
        board.add(r, None)
        progress.advance(r)
    progress.close()
    text = out.getvalue()
    assert "2/4" in text and "hybrid:5" in text and "100.0%" in text and "eta" in text
