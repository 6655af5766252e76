"""Choosing and checking the isolation tool: :func:`open_sandbox`."""

from __future__ import annotations

from memdoor.core.errors import SandboxError
from memdoor.core.problem import TestCase
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.isolation import interpreter_ok, make
from memdoor.sandbox.supervisor import Supervisor

_SMOKE = TestCase(kind="functional", input="20\n22", output="42")


def _smoke(sandbox: Supervisor) -> None:
    """Run a trivial program; SandboxError unless it passes (the tool starts and the harness answers)."""
    verdict = sandbox.run("def add(a, b):\n    return a + b\n", [_SMOKE], func_name="add")
    if not verdict.passed:
        detail = verdict.tests[0].detail if verdict.tests else ""
        raise SandboxError(
            f"the {sandbox.name} sandbox does not run programs correctly ({verdict.status}: {detail})"
        )


def open_sandbox(config: SandboxConfig | None = None) -> Supervisor:
    """A ready sandbox for ``config`` (default settings when None).

    ``isolation="auto"`` uses bubblewrap when it works here, else ``unshare``; the chosen tool is checked
    by running a trivial program. Raises SandboxError when no requested tool works. ``.name`` says which
    isolation is active.
    """
    config = config or SandboxConfig()
    interpreter_ok(config.python)
    kinds = ["bwrap", "unshare"] if config.isolation == "auto" else [config.isolation]
    errors = []
    for kind in kinds:
        sandbox = make(config, kind)
        try:
            sandbox.check_tools()
            _smoke(sandbox)
        except SandboxError as e:
            errors.append(f"{kind}: {e}")
            continue
        return sandbox
    raise SandboxError("no working sandbox: " + "; ".join(errors))
