"""Running untrusted candidate code against tests, isolated, with limits. Results are verdicts, never exceptions.

Use :func:`open_sandbox` with a :class:`SandboxConfig`; the returned object's ``run`` is thread-safe.
"""

from memdoor.core.verdict import Status, TestResult, Verdict
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.open import open_sandbox

__all__ = ["SandboxConfig", "Status", "TestResult", "Verdict", "open_sandbox"]
