"""Check the sandbox: which isolation is active, and whether each property holds.

Every property is tested by running a probe program in the sandbox (it tries to read a canary variable of
the grader, to reach a listener on 127.0.0.1, to write host files, to allocate too much memory, to fork
without end, to leave a daemon behind). Exit status 0 when nothing failed (warnings say the isolation is
weaker than bubblewrap's), 1 when a check failed.
"""

from __future__ import annotations

import argparse
import json

from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.probes import DoctorReport, diagnose

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--isolation", default="auto", choices=["auto", "bwrap", "unshare"], help="isolation to check"
    )
    p.add_argument(
        "--python", default=None, help="interpreter candidates run with (default /usr/bin/python3)"
    )


def render(report: DoctorReport) -> str:
    width = max(len(c.name) for c in report.checks)
    lines = [f"sandbox isolation: {report.isolation}   interpreter: {report.python}"]
    lines += [f"  [{_MARK[c.status]}] {c.name:<{width}}  {c.detail}" for c in report.checks]
    if not report.ok:
        lines.append("the sandbox is NOT safe to run untrusted code here")
    elif report.weak:
        lines.append("the sandbox works, with the weaknesses marked WARN")
    else:
        lines.append("all checks passed")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    fields = {"isolation": args.isolation}
    if args.python:
        fields["python"] = args.python
    report = diagnose(SandboxConfig(**fields))
    if args.json:
        print(json.dumps({**report.model_dump(), "ok": report.ok, "weak": report.weak}))
    else:
        print(render(report))
    return 0 if report.ok else 1
