"""Showing a team at work: one line per trace event (for ``memdoor trace``), and a live terminal view.

:func:`describe` turns a :class:`TraceEvent` into a short readable line; :class:`LiveView` keeps a
table of agents (what each is doing, its last public-test result, its tokens), the latest events and
the vote, redrawn by ``rich`` while a run goes on. Feed it events with ``view.on_event``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memdoor.core.trace import TraceEvent

if TYPE_CHECKING:
    from memdoor.run.tracestore import TraceRecord

CODE_ROLES = ("draft", "revise", "repair", "refine")
DOING = {
    "draft": "drafting",
    "revise": "revising",
    "repair": "repairing",
    "refine": "refining",
    "review": "reviewing",
    "inputs": "writing inputs",
}


def _tests(d: dict[str, Any]) -> str:
    total = d.get("total")
    if total in (None, 0):
        return str(d.get("status", ""))
    return f"{d.get('passed')}/{total} public tests passed" + (
        "" if d.get("status") == "passed" else f" ({d.get('status')})"
    )


def describe(ev: TraceEvent) -> str:
    """One line saying what happened (no code, no long texts)."""
    d, k = ev.data, ev.kind
    if k == "start":
        return f"problem {d.get('problem')}, strategy {d.get('strategy')}"
    if k == "strategy":
        return f"{d.get('name')} with {', '.join(d.get('team', []))}"
    if k == "call":
        return f"asked to {d.get('role')}" + (f" (n={d['n']})" if d.get("n", 1) != 1 else "")
    if k == "answer":
        return f"answered {d.get('role')}: {d.get('tokens')} tokens in {d.get('seconds')} s"
    if k in CODE_ROLES:
        lines = len((d.get("code") or "").splitlines())
        return f"round {d.get('round')}: {lines} lines of code, {_tests(d)}"
    if k == "review":
        verdict = {True: "OK", False: "ISSUES"}.get(d.get("ok"), "no verdict (counts as issues)")
        return f"round {d.get('round')}: reviewed {d.get('about')}'s code: {verdict}"
    if k == "inputs":
        return f"wrote {d.get('count')} test inputs to tell candidates apart"
    if k == "vote":
        if d.get("index") is None:
            return "nothing to vote on"
        rule, reason = d.get("rule") or d.get("reason"), d.get("reason")
        why = rule if reason in (None, rule) else f"{rule}, {reason}"
        return (
            f"{d.get('chosen_agent')} chosen by {why} (confidence {d.get('confidence')}); "
            f"groups {d.get('groups')}, survivors {d.get('survivors')}"
        )
    if k == "budget":
        return f"budget spent: {d.get('what')} {d.get('spent')} of {d.get('limit')}"
    if k == "stalled":
        return f"round {d.get('round')}: no progress (same code or same failing tests): stop"
    if k == "converged":
        return f"round {d.get('round')}: every draft passes the public tests: stop"
    if k == "failure":
        return f"failed ({d.get('role')}): {d.get('error')} — the team goes on without it"
    if k == "graded":
        hidden = d.get("hidden_tests")
        scope = "public tests only (no hidden tests)" if not hidden else f"incl. {hidden} hidden"
        return (
            f"{'PASSED' if d.get('passed') else 'FAILED'} {d.get('tests_passed')}/{d.get('tests_total')} "
            f"tests ({scope}), {d.get('status')}; any candidate correct: {'yes' if d.get('oracle') else 'no'}"
        )
    if k == "error":
        return f"run failed: {d.get('error')}"
    return ", ".join(f"{key}={value}" for key, value in d.items())


def timeline_line(ev: TraceEvent) -> str:
    """``  12.31s  agent1   draft      round 0: ...`` — a line of a printed timeline."""
    return f"{ev.t:8.2f}s  {ev.agent or '':<8} {ev.kind:<9} {describe(ev)}"


@dataclass
class AgentRow:
    """What the live view shows about one agent."""

    doing: str = "waiting"
    last: str = ""
    tokens: int = 0
    calls: int = 0


class LiveView:
    """A rich live display of a team run. Use as a context manager; pass ``on_event`` to the runner."""

    def __init__(self, title: str, *, console: Any = None, keep: int = 10):
        from rich.console import Console

        self.title = title
        self.console = console or Console(stderr=True)
        self.agents: dict[str, AgentRow] = {}
        self.log: deque[str] = deque(maxlen=keep)
        self.vote = ""
        self.outcome = ""
        self._live: Any = None

    def __enter__(self) -> LiveView:
        from rich.live import Live

        self._live = Live(self.render(), console=self.console, refresh_per_second=4, transient=False)
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self.render())
            self._live.__exit__(*exc)
            self._live = None

    def on_event(self, ev: TraceEvent) -> None:
        """Update the view with one event (the runner calls this for every trace event)."""
        d = ev.data
        if ev.kind == "strategy":
            for entry in d.get("team", []):
                self.agents.setdefault(entry.split("=", 1)[0], AgentRow())
        row = self.agents.setdefault(ev.agent, AgentRow()) if ev.agent else None
        if row is not None:
            if ev.kind == "call":
                row.doing, row.calls = DOING.get(d.get("role"), str(d.get("role"))), row.calls + 1
            elif ev.kind == "answer":
                row.tokens += int(d.get("tokens") or 0)
                row.doing = "running public tests" if d.get("role") in CODE_ROLES else "idle"
            elif ev.kind in CODE_ROLES:
                row.doing, row.last = "idle", _tests(d)
            elif ev.kind == "review":
                row.doing, row.last = "idle", describe(ev).split(": ", 1)[-1]
            elif ev.kind == "failure":
                row.doing = "FAILED"
        if ev.kind == "vote":
            self.vote = describe(ev)
        elif ev.kind in ("graded", "error"):
            self.outcome = describe(ev)
        if ev.kind not in ("call", "answer"):
            self.log.append(f"{ev.t:6.1f}s {ev.agent or '':<7} {ev.kind:<8} {describe(ev)}")
        if self._live is not None:
            self._live.update(self.render())

    def render(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        table = Table(title=self.title, expand=False)
        for col in ("agent", "doing", "last result", "calls", "tokens"):
            table.add_column(col)
        for name, row in self.agents.items():
            table.add_row(name, row.doing, row.last, str(row.calls), str(row.tokens))
        parts: list[Any] = [table, Text("\n".join(self.log), style="dim")]
        if self.vote:
            parts.append(Text(f"vote: {self.vote}", style="bold"))
        if self.outcome:
            parts.append(Text(self.outcome, style="bold green" if "PASSED" in self.outcome else "bold red"))
        return Group(*parts)


def render_record(record: TraceRecord, *, code: bool = False) -> str:
    """The timeline, one line per event, then the final answer."""
    trace = record.trace
    started = datetime.fromtimestamp(trace.started_at).isoformat(sep=" ", timespec="seconds")
    lines = [f"trace {trace.id} (started {started}, {len(trace.events)} events)"]
    for ev in trace.events:
        lines.append(timeline_line(ev))
        if code and ev.kind in CODE_ROLES and ev.data.get("code"):
            lines += ["          " + row for row in ev.data["code"].splitlines()]
        if code and ev.kind == "review" and ev.data.get("text"):
            lines += ["          | " + row for row in ev.data["text"].splitlines()]
    final = record.final
    if final:
        v = final.get("verdict") or {}
        lines += [
            "",
            f"final: {'PASSED' if final.get('passed') else 'FAILED'} "
            f"({v.get('status', 'not graded')}, {v.get('tests_passed', 0)}/{v.get('tests_total', 0)} tests"
            + ("" if final.get("hidden_tests") else ", public tests only")
            + f"), answer by {final.get('agent') or '-'}, stopped: {final.get('stopped')}",
        ]
        ledger = final.get("ledger") or {}
        lines.append(
            f"cost: {ledger.get('calls', 0)} calls, {ledger.get('prompt_tokens', 0)} + "
            f"{ledger.get('completion_tokens', 0)} tokens, {ledger.get('wall_seconds', 0):.1f} s"
        )
        if final.get("error"):
            lines.append(f"error: {final['error']}")
        if final.get("code"):
            lines += ["```python", final["code"], "```"]
    return "\n".join(lines)
