"""The sandbox configuration: isolation tool, limits, interpreter and parallel slots."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class SandboxConfig(BaseModel):
    """How candidates are isolated and limited. Every limit applies to one candidate (all its tests)."""

    model_config = ConfigDict(frozen=True)

    isolation: Literal["auto", "bwrap", "unshare"] = Field(
        default="auto",
        description="Isolation tool: bwrap (bubblewrap), unshare (namespaces + rlimits), or auto (bwrap if it "
        "works here, else unshare). open_sandbox raises SandboxError when the chosen tool does not work.",
    )
    timeout_s: float = Field(
        default=6.0,
        gt=0,
        description="Wall-clock seconds allowed per test (and for loading the program), as LiveCodeBench's 6 s.",
    )
    memory_mb: int = Field(
        default=2048,
        ge=64,
        description="Memory of the candidate, in MiB: the address-space limit of each of its processes and, "
        "with a cgroup, the limit of all its processes and the files it writes (tmpfs) together.",
    )
    max_processes: int = Field(
        default=64,
        ge=1,
        description="Process/thread limit of the candidate (RLIMIT_NPROC of its uid; with a cgroup, also "
        "pids.max of its group); a fork storm stops here.",
    )
    max_file_mb: int = Field(
        default=64, ge=1, description="Largest file the candidate may write (RLIMIT_FSIZE), in MiB."
    )
    tmp_mb: int = Field(
        default=128,
        ge=1,
        description="Size of the candidate's private temporary directory (a tmpfs at /tmp, also its cwd), in MiB.",
    )
    max_output_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1024,
        description="Cap on the output captured per test; a program printing more gets a wrong answer "
        "(the excess is never held in the grader's memory).",
    )
    keep_output_chars: int = Field(
        default=4096,
        ge=0,
        description="Characters of each test's output kept in TestResult.output; longer outputs keep a "
        "prefix plus a SHA-256 of the whole, so distinct outputs stay distinct.",
    )
    python: str = Field(
        default="/usr/bin/python3",
        description="Interpreter run inside the sandbox. Must be readable and executable by an unprivileged "
        "uid (pyenv interpreters under /root are not) and live under /usr for bwrap (it sees only /usr).",
    )
    workers: int = Field(
        default_factory=_cores,
        ge=1,
        description="Candidates run at once by one sandbox (default: CPU cores).",
    )
    uid_base: int = Field(
        default=61000,
        ge=1000,
        description="First uid of the pool of unprivileged uids; each running candidate leases its own uid "
        "(system-wide, through a lock file) so the process limit of one cannot starve another.",
    )
    uid_count: int = Field(default=256, ge=1, description="Number of uids in the pool starting at uid_base.")
    lock_dir: str = Field(
        default="/run/memdoor-sandbox",
        description="Directory of the uid lease lock files (created if missing; falls back to the temp dir).",
    )
    prestart: bool = Field(
        default=True,
        description="Start each next candidate's sandbox while the current one runs (a fresh sandbox that has "
        "run nothing yet, holding its own uid), so that candidates do not wait for the interpreter to start. "
        "Call close() on the sandbox to stop the ones waiting.",
    )
    cgroups: bool = Field(
        default=True,
        description="Put each candidate in a control group of its own (cgroup v1 or v2, when Memdoor may "
        "create groups: normally as root) so memory, processes and CPU are limited per candidate; False, "
        "or where no cgroup can be used: per-process rlimits only (memdoor doctor says which).",
    )
    cpu_cores: float = Field(
        default=1.0,
        ge=0,
        description="With a cgroup: CPU a candidate may use, in cores (a CFS quota; 0 = no cap). Candidates "
        "graded at once also get equal CPU shares whatever their process count.",
    )
    start_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="Seconds allowed for the sandbox to start (interpreter and prelude loaded) before it "
        "counts as broken; not charged to any test.",
    )
