"""One command run in a candidate's isolation: the sandbox of the Python harness (same tool, namespaces,
unprivileged uid leased per run, cleared environment, no network, private /tmp, control group), with the
launcher (``launch.py``) in place of the harness. The trusted side feeds the job, reads stdout and stderr
(capped), enforces the wall-clock limit and kills the whole sandbox at the end."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from typing import Protocol

from memdoor.core.errors import SandboxError
from memdoor.core.verdict import TestResult
from memdoor.sandbox.cgroups import Cgroups
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.supervisor import TOOL_PATH
from memdoor.sandbox.uids import Lease, UidPool, kill_tree, reap_uid, tasks_of_uid


class Isolation(Protocol):
    """What a runner needs of the Python sandbox (``BwrapSandbox`` or ``UnshareSandbox``)."""

    name: str
    config: SandboxConfig
    cgroups: Cgroups | None

    def acquire_uid(self) -> Lease | None: ...

    def exec_command(self, uid: int | None, argv: list[str], ro_paths: tuple[str, ...] = ()) -> list[str]: ...


@dataclass(frozen=True)
class CommandLimits:
    """What one command may use. ``address_space``: also set RLIMIT_AS to ``memory_mb`` (JIT runtimes and
    compilers reserve far more address space than they use, so they get it only where no group limits them)."""

    timeout_s: float
    memory_mb: int
    max_processes: int
    max_file_mb: int
    max_output_bytes: int
    address_space: bool = True


@dataclass
class CommandResult:
    """How the command ended. ``exit_code``: the sandbox's exit status, which is the command's (above 128 when
    a signal ended it); None when it was stopped for a limit (``timed_out``, ``overflow``)."""

    exit_code: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    overflow: bool = False
    oom_killed: bool = False
    seconds: float = 0.0


def candidate_limits(config: SandboxConfig, *, address_space: bool) -> CommandLimits:
    """A candidate's run under the sandbox's settings (a test's time, the candidate's memory and processes)."""
    return CommandLimits(
        timeout_s=config.timeout_s,
        memory_mb=config.memory_mb,
        max_processes=config.max_processes,
        max_file_mb=config.max_file_mb,
        max_output_bytes=config.max_output_bytes,
        address_space=address_space,
    )


def limit_result(outcome: CommandResult, config: SandboxConfig) -> TestResult | None:
    """The result when the run was stopped for a limit (memory, time, output); None when it ended by itself."""
    s = outcome.seconds
    if outcome.oom_killed:
        return TestResult(status="memory_limit", seconds=s, detail=f"killed: over {config.memory_mb} MiB")
    if outcome.timed_out:
        return TestResult(status="time_limit", seconds=s, detail="wall-clock limit")
    if outcome.overflow:
        return TestResult(
            status="wrong_answer", seconds=s, detail=f"output exceeds {config.max_output_bytes} bytes"
        )
    return None


def launcher_source() -> str:
    return resources.files("memdoor.sandbox.lang").joinpath("launch.py").read_text(encoding="utf-8")


def _rlimits(limits: CommandLimits, config: SandboxConfig, own_uid: bool) -> dict[str, int]:
    found = {
        "fsize": limits.max_file_mb << 20,
        "cpu": int(limits.timeout_s) + 5,
        "core": 0,
        "nproc": limits.max_processes,
    }
    if limits.address_space:
        found["as"] = limits.memory_mb << 20
    if own_uid:  # our own uid (not root): RLIMIT_NPROC also counts our other tasks (best effort, as Python's)
        found["nproc"] = tasks_of_uid(os.getuid()) + limits.max_processes * config.workers
    return found


def run_isolated(
    sandbox: Isolation,
    argv: list[str],
    files: list[tuple[str, bytes, int]],
    limits: CommandLimits,
    *,
    env: dict[str, str] | None = None,
    ro_paths: tuple[str, ...] = (),
    stdin_file: str | None = None,
) -> CommandResult:
    """Run ``argv`` in a fresh sandbox after writing ``files`` ((name, bytes, mode) in /tmp); never raises
    for anything the command does, SandboxError when the sandbox cannot start."""
    config = sandbox.config
    lease = sandbox.acquire_uid()
    group = None
    try:
        if sandbox.cgroups is not None:
            group = sandbox.cgroups.candidate_group(limits.memory_mb, limits.max_processes, config.cpu_cores)
        job = {
            "files": [(name, base64.b64encode(data).decode(), mode) for name, data, mode in files],
            "limits": _rlimits(limits, config, own_uid=lease is None),
            "argv": argv,
            "env": {"PATH": "/usr/bin", "HOME": "/tmp", **(env or {})},
            "stdin": stdin_file,
        }
        launcher = [config.python, "-I", "-S", "-c", launcher_source()]
        command = sandbox.exec_command(lease.uid if lease else None, launcher, ro_paths)
        outcome = _run(
            group.wrap(command) if group is not None else command, json.dumps(job).encode(), limits
        )
        if group is not None and group.oom_killed():
            outcome.oom_killed = True
        return outcome
    finally:
        if group is not None:
            group.remove()
        if lease is not None:
            lease.clean = reap_uid(lease.uid)
            UidPool.release(lease)


def _run(command: list[str], job: bytes, limits: CommandLimits) -> CommandResult:
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": TOOL_PATH},
            start_new_session=True,
        )
    except OSError as e:
        raise SandboxError(f"cannot start the sandbox: {e}") from e
    out = CommandResult()
    try:
        _converse(proc, job, limits, started, out)
    finally:
        kill_tree(proc)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                pipe.close()
    out.seconds = time.monotonic() - started
    if not (out.timed_out or out.overflow):
        out.exit_code = (
            proc.returncode
        )  # the command's status (a signal's end: 128 + its number, or negative)
    return out


def _converse(
    proc: subprocess.Popen, job: bytes, limits: CommandLimits, started: float, out: CommandResult
) -> None:
    """Write the job, read both outputs until they end, the deadline passes or they exceed the cap."""
    pending = memoryview(job)
    os.set_blocking(proc.stdin.fileno(), False)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdin, selectors.EVENT_WRITE)
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
    buffers = {"stdout": bytearray(), "stderr": bytearray()}
    open_outputs = 2
    deadline = started + limits.timeout_s
    while open_outputs:
        left = deadline - time.monotonic()
        if left <= 0:
            out.timed_out = True
            break
        for key, _ in sel.select(min(left, 1.0)):
            if key.fileobj is proc.stdin:
                try:
                    pending = pending[os.write(proc.stdin.fileno(), pending[: 1 << 16]) :]
                except BlockingIOError:
                    continue
                except OSError:
                    pending = memoryview(b"")
                if not pending:
                    sel.unregister(proc.stdin)
                    with contextlib.suppress(OSError):
                        proc.stdin.close()
                continue
            chunk = os.read(key.fileobj.fileno(), 1 << 16)
            if not chunk:
                sel.unregister(key.fileobj)
                open_outputs -= 1
                continue
            buffers[key.data] += chunk
            if len(buffers["stdout"]) + len(buffers["stderr"]) > limits.max_output_bytes:
                out.overflow = True
                open_outputs = 0
                break
    sel.close()
    out.stdout, out.stderr = bytes(buffers["stdout"]), bytes(buffers["stderr"])
    if not (out.timed_out or out.overflow):
        try:
            proc.wait(max(deadline - time.monotonic(), 0.05))
        except subprocess.TimeoutExpired:
            out.timed_out = True
    if out.timed_out or out.overflow:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
