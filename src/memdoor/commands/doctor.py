"""Check the sandbox: which isolation is active, and whether each property holds.

Every property is tested by running a probe program in the sandbox (it tries to read a canary variable of
the grader, to reach a listener on 127.0.0.1, to write host files, to allocate too much memory, to fork
without end, to leave a daemon behind, to hold more memory in several processes than one candidate may, to
fill every writable place, to spin on every core). It also says how each limit is enforced: a cgroup per
candidate (v1 or v2) or per-process rlimits only. Exit status 0 when nothing failed (warnings say the isolation is
weaker than bubblewrap's), 1 when a check failed. It also says which languages can run here (Python, and
JavaScript and Rust when node and the sandbox's Rust toolchain are found: versions, and a trivial program
run in the same isolation); a missing language is not a failure.

The review section checks ``memdoor review --test``'s stage: bubblewrap present (without it a review with
tests exits 3: a failure here), and a trivial Python test from a new virtualenv, a Node test needing a
package in its node_modules and a Rust test built offline, each run as the review runs them (from this
environment; the fix is named when one fails), and the limits the test command runs under (``--no-review``
skips it).
"""

from __future__ import annotations

import argparse
import json

from memdoor.review.doctor import diagnose_review
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
    p.add_argument("--no-review", action="store_true", help="skip the checks of the review's test stage")
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
    config = SandboxConfig(**fields)
    report = diagnose(config)
    languages = _languages(config) if report.ok else []
    review = None if args.no_review else diagnose_review()
    if args.json:
        print(
            json.dumps(
                {
                    **report.model_dump(),
                    "ok": report.ok,
                    "weak": report.weak,
                    "languages": [x.model_dump() for x in languages],
                    "review": None if review is None else {**review.model_dump(), "ok": review.ok},
                }
            )
        )
    else:
        print(render(report))
        if languages:
            print(render_languages(languages))
        if review is not None:
            print(render_review(review))
    review_ok = review is None or all(c.status == "ok" for c in review.checks if c.name == "bubblewrap")
    return 0 if report.ok and review_ok else 1


def render_review(review) -> str:
    mark = {"ok": "ok  ", "unavailable": "--  ", "fail": "FAIL"}
    lines = ["review test stage (memdoor review --test):"]
    for c in review.checks:
        lines.append(f"  [{mark[c.status]}] {c.name:<11}  {c.detail}".rstrip())
        if c.status != "ok" and c.fix:
            lines.append(f"         fix: {c.fix}")
    lines.append("  limits enforced on the test command:")
    lines += [f"    {name:<9}  {how}" for name, how in review.limits.items()]
    return "\n".join(lines)


def _languages(config: SandboxConfig) -> list:
    from memdoor.core.errors import SandboxError
    from memdoor.sandbox.lang.doctor import check_languages
    from memdoor.sandbox.open import open_sandbox

    try:
        with open_sandbox(config.model_copy(update={"prestart": False})) as sb:
            return check_languages(sb)
    except SandboxError:
        return []


def render_languages(languages: list) -> str:
    lines = ["languages:"]
    mark = {"ok": "ok  ", "unavailable": "--  ", "fail": "FAIL"}
    for x in languages:
        what = " ".join(part for part in (x.version, f"({x.tool})" if x.tool else "") if part)
        lines.append(f"  [{mark[x.status]}] {x.language:<10}  {what}  {x.detail}".rstrip())
    return "\n".join(lines)
