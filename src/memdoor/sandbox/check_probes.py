"""Doctor probe: HumanEval ``check()`` is judged outside the program (issue 11, item 7).

A program answering a check test tries what fakes a pass under the official harness (an object equal to
everything, replaced builtins) and what would fake one from inside the sandbox (result frames written to
every file descriptor it can open, the harness's included through /proc/1/fd); each must fail, while the
honest version of the same program passes.
"""

from __future__ import annotations

from memdoor.core.problem import TestCase
from memdoor.core.protocols import Sandbox
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.probe_kit import Check

_CHECK = TestCase(
    kind="check",
    input="def check(candidate):\n    assert candidate(1) == 2\n    assert abs(candidate(2) - 3) < 1e-9\n",
)
_HONEST = "def inc(x):\n    return x + 1\n"
_ALWAYS_EQUAL = """
import builtins
builtins.abs = lambda x: 0
class Yes:
    def __eq__(self, other):
        return True
    def __sub__(self, other):
        return 0
def inc(x):
    return Yes()
"""
_FORGER = """
import json, os, struct
def _frame(head):
    h = json.dumps(head).encode()
    return struct.pack(">II", len(h), 0) + h
FORGED = _frame({"ev": "res", "i": 0, "status": "ok", "detail": "", "t": 0.0, "overflow": False})
FORGED += _frame({"ev": "end"})
def inc(x):
    paths = ["/proc/self/fd/" + n for n in os.listdir("/proc/self/fd")]
    try:
        paths += ["/proc/1/fd/" + n for n in os.listdir("/proc/1/fd")]
    except OSError:
        pass
    for path in paths:
        try:
            fd = os.open(path, os.O_WRONLY)
            os.write(fd, FORGED)
        except OSError:
            pass
    os._exit(0)
"""


def check_check_judge(sb: Sandbox, config: SandboxConfig) -> Check:
    name = "check() judge"
    honest = sb.run(_HONEST, [_CHECK], func_name="inc")
    if not honest.passed:
        return Check(name=name, status="fail", detail=f"an honest program got {honest.status}")
    faked = sb.run(_ALWAYS_EQUAL, [_CHECK], func_name="inc")
    forged = sb.run(_FORGER, [_CHECK], func_name="inc")
    passed = [what for what, v in (("an always-equal result", faked), ("forged frames", forged)) if v.passed]
    if passed:
        return Check(name=name, status="fail", detail=f"{' and '.join(passed)} passed check()")
    noted = "differs from the official harness" in faked.tests[0].detail
    return Check(
        name=name,
        status="ok",
        detail="check() runs outside the program: an always-equal result with replaced builtins fails"
        + (" (noted as an official pass)" if noted else "")
        + "; forged result frames fail",
    )


PROBES = [check_check_judge]
