"""What every doctor probe shares: the report records and running a probe program."""

from __future__ import annotations

import contextlib
import json
from typing import Literal

from pydantic import BaseModel, Field

from memdoor.core.problem import TestCase
from memdoor.core.protocols import Sandbox
from memdoor.core.verdict import Verdict

CheckStatus = Literal["ok", "warn", "fail"]


class Check(BaseModel):
    """One property of the isolation and how the probe found it."""

    name: str = Field(description="Short name of the property (uid, environment, network...).")
    status: CheckStatus = Field(description="ok; warn (works, but weaker than it should be); fail.")
    detail: str = Field(default="", description="What the probe saw.")


class DoctorReport(BaseModel):
    """Everything ``memdoor doctor`` found."""

    isolation: str = Field(description="Active isolation (bwrap, unshare) or 'none' when no tool works.")
    python: str = Field(description="The interpreter candidates run with.")
    grader_is_root: bool = Field(description="Whether Memdoor runs as root (needed for per-candidate uids).")
    checks: list[Check] = Field(default_factory=list, description="One entry per property, in order.")
    limits: dict[str, str] = Field(
        default_factory=dict,
        description="How each limit (memory, processes, cpu, disk) is enforced: a cgroup per candidate "
        "(v1 or v2) and/or per-process rlimits.",
    )

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(c.status != "fail" for c in self.checks)

    @property
    def weak(self) -> bool:
        """Some check only warned: the isolation works but is weaker than the bwrap setup."""
        return any(c.status == "warn" for c in self.checks)


def record(sb: Sandbox, code: str) -> tuple[Verdict, str]:
    """Run a probe program (stdin kind, no prelude) and return its verdict and printed output."""
    v = sb.run(code, [TestCase(kind="stdin", input="\n", output=None)], prelude="none")
    out = v.tests[0].output if v.tests and v.tests[0].output is not None else ""
    return v, out


def json_line(out: str) -> dict:
    for line in reversed(out.strip().splitlines()):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                return value
    return {}
