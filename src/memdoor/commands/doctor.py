"""Check the sandbox: which isolation is active, and whether each property holds.

Every property is tested by running a probe program in the sandbox (it tries to read a canary variable of
the grader, to reach a listener on 127.0.0.1, to write host files, to allocate too much memory, to fork
without end, to leave a daemon behind, to hold more memory in several processes than one candidate may, to
fill every writable place, to spin on every core). It also says how each limit is enforced: a cgroup per
candidate (v1 or v2) or per-process rlimits only. Exit status 0 when nothing failed (warnings say the isolation is
weaker than bubblewrap's), 1 when a check failed.
"""

from __future__ import annotations

import argparse
import json

from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.probe_kit import DoctorReport
from memdoor.sandbox.probes import diagnose

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--isolation", default="auto", choices=["auto", "bwrap", "unshare"], help="isolation to check"
    )
    p.add_argument(
        "--python", default=None, help="interpreter candidates run with (default /usr/bin/python3)"
    )
    p.add_argument(
        "--no-cgroups",
        action="store_true",
        help="check the setup without a control group per candidate (per-process rlimits only)",
    )


def render(report: DoctorReport) -> str:
    width = max(len(c.name) for c in report.checks)
    lines = [f"sandbox isolation: {report.isolation}   interpreter: {report.python}"]
    lines += [f"  [{_MARK[c.status]}] {c.name:<{width}}  {c.detail}" for c in report.checks]
    if report.limits:
        lines.append("limits enforced:")
        lines += [f"  {name:<9}  {how}" for name, how in report.limits.items()]
    if not report.ok:
        lines.append("the sandbox is NOT safe to run untrusted code here")
    elif report.weak:
        lines.append("the sandbox works, with the weaknesses marked WARN")
    else:
        lines.append("all checks passed")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    fields = {"isolation": args.isolation, "cgroups": not args.no_cgroups}
    if args.python:
        fields["python"] = args.python
    report = diagnose(SandboxConfig(**fields))
    if args.json:
        print(json.dumps({**report.model_dump(), "ok": report.ok, "weak": report.weak}))
    else:
        print(render(report))
    return 0 if report.ok else 1
