"""The repository's test command, run in an isolated copy: bubblewrap as the sandbox runs candidates.

The sandbox's harness runs Python programs against test cases; a review needs a shell command
(``pytest -q``, ``make test``) in a directory. This runs it with the same isolation as the sandbox's
bubblewrap: new user, pid, network, ipc, uts and mount namespaces (only ``lo``: no network), only
``/usr`` visible read-only (plus the few non-secret ``/etc`` files shared libraries need), a fresh
``/proc`` and minimal ``/dev``, a private tmpfs ``/tmp`` as ``HOME``, an empty environment (only ``PATH``
and ``HOME``), and — when Memdoor is root — an unprivileged uid leased from the sandbox's uid pool,
every process of which is killed afterwards. The copy of the repository is the one writable host
directory, bound at ``/tmp/repo`` (the working directory). Limits are rlimits (``prlimit``): address
space, processes (when a uid is leased), file size, core dumps; a wall-clock limit that kills the
whole pid namespace; and, where Memdoor may create control groups (as the sandbox's candidates get:
``SandboxConfig.cgroups``), one group for the whole command — memory of all its processes and its
``/tmp`` together, a process count and an optional CPU quota — removed (killing what is left) after
it. Output (stdout and stderr together) is capped by the file-size limit and its last ``keep_chars``
characters are kept. The sandbox's shell writes a marker (``STARTED``) at the head of the output before
anything of the command runs: a failed run without it is bubblewrap's own start-up failure (a
SandboxError), whatever the command prints; the marker is not part of the run's output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.core.errors import SandboxError
from memdoor.review.testresults import TestResults, parse_results
from memdoor.review.testsight import Sight
from memdoor.sandbox.cgroups import Cgroups, Group
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.supervisor import TOOL_PATH
from memdoor.sandbox.uids import UidPool, kill_tree, reap_uid

MOUNT = "/tmp/repo"
PARSE_CHARS = 2_000_000
"""Characters of output (the end) read for per-test results."""
_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


class TestRunConfig(BaseModel):
    """Limits of one test command run."""

    __test__ = False  # not a pytest class

    timeout_s: float = Field(default=600.0, gt=0, description="Wall-clock seconds for the whole command.")
    memory_mb: int = Field(default=2048, ge=64, description="Address space per process, MiB.")
    max_processes: int = Field(
        default=128,
        ge=1,
        description="Processes: of the command's control group, and of the leased uid (root).",
    )
    max_file_mb: int = Field(default=64, ge=1, description="Largest file written (and the output), MiB.")
    tmp_mb: int = Field(default=256, ge=1, description="Size of the private /tmp, MiB.")
    copy_mb: int = Field(
        default=1024,
        ge=1,
        description="What the command may write in its copy of the repository (a tmpfs of the copy's size "
        "plus this), MiB: never the host's disk.",
    )
    keep_chars: int = Field(default=8000, ge=0, description="Characters of output kept (the end).")
    group_memory_mb: int = Field(
        default=4096,
        ge=64,
        description="With a control group: memory of all processes and /tmp together, MiB.",
    )
    cpu_cores: float = Field(
        default=0.0, ge=0, description="With a control group: CPU quota in cores (0: none, an equal share)."
    )
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig, description="Uid pool and lock dir.")
    sight: Sight = Field(
        default_factory=Sight, description="What the command sees besides /usr: read-only binds, PATH, env."
    )


class TestRun(BaseModel):
    """What the test command did."""

    __test__ = False

    command: str
    passed: bool = Field(description="Exit status 0 within the time limit.")
    exit_code: int | None = Field(default=None, description="None when it was killed at the time limit.")
    timed_out: bool = False
    memory_exceeded: bool = Field(
        default=False,
        description="The kernel killed a process because the command's group ran out of memory.",
    )
    limited_by: str = Field(default="rlimits", description="cgroup v1, cgroup v2, or rlimits only.")
    seconds: float = 0.0
    output: str = Field(default="", description="The end of stdout and stderr together.")
    results: TestResults = Field(
        default_factory=TestResults, description="Per-test results read from the whole output."
    )
    sees: list[str] = Field(default_factory=list, description="Host paths the command saw (read-only).")
    hidden: list[str] = Field(default_factory=list, description="What it could not see, and why.")

    @property
    def outcome(self) -> str:
        """In words: passed, timed out, out of memory, or failed (exit N)."""
        if self.passed:
            return "passed"
        if self.timed_out:
            return "timed out"
        return "out of memory" if self.memory_exceeded else f"failed (exit {self.exit_code})"


def _binds() -> list[str]:
    etc = [arg for path in _ETC for arg in ("--ro-bind-try", path, path)]
    return [
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
        *etc, "--proc", "/proc", "--dev", "/dev",
    ]  # fmt: skip


SOURCE = "/tmp/.memdoor-source"
"""Where the prepared copy is bound read-only; the command's writable copy is made from it inside."""
COPY_FAILED = 125
"""Exit status of the copy step when the repository cannot be copied into the size-limited copy."""
_STARTED = "memdoor: the test sandbox started"
STARTED = f"{_STARTED}\n".encode()
"""Written by the sandbox's shell before the copy and the command: the sandbox started."""
HEAD_BYTES = 4096
"""Where the marker is looked for (the start of the output)."""
_COPY = (
    f"echo '{_STARTED}'; "
    f"cp -R -P --preserve=mode,timestamps {SOURCE}/. {MOUNT}/ 2>/tmp/.memdoor-copy || "
    f'{{ echo "memdoor: the repository could not be copied into the test copy: $(head -n 1 /tmp/.memdoor-copy)" >&2; '
    f"exit {COPY_FAILED}; }}; rm -f /tmp/.memdoor-copy; "
    'command="$1"; shift; exec /usr/bin/prlimit "$@" -- /bin/sh -c "$command"'
)
"""The sandbox's shell: the marker, the copy (before the limits: a file of the repository larger than the
command may write is still copied; the copy's tmpfs bounds it), then the command under ``prlimit``."""


def tree_bytes(root: Path) -> int:
    """Bytes ``root``'s files take in a tmpfs (sizes rounded up to pages, 4 KiB per entry)."""
    total = 0
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            st = os.lstat(os.path.join(base, name))
            total += 4096 + (st.st_size + 4095) // 4096 * 4096
    return total


def copy_bytes(repo: Path, config: TestRunConfig) -> int:
    """Size of the tmpfs the command's copy lives in: the repository plus ``copy_mb``."""
    return tree_bytes(repo) + (config.copy_mb << 20)


def command_line(repo: Path, command: str, config: TestRunConfig, uid: int | None) -> list[str]:
    """The argv running ``command`` with ``/bin/sh -c`` in a copy of ``repo``, isolated and limited.

    ``repo`` is bound read-only at ``SOURCE``; a tmpfs of :func:`copy_bytes` at ``MOUNT`` receives a copy
    of it (inside the sandbox, before the rlimits apply) and the command runs there under them, so what it
    writes counts against that size and the command's memory, never the host's disk."""
    limits = [
        f"--as={config.memory_mb << 20}",
        f"--fsize={config.max_file_mb << 20}",
        "--core=0",
        *([f"--nproc={config.max_processes}"] if uid is not None else []),
    ]
    drop = [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    sight = config.sight
    binds = sorted(sight.binds, key=lambda b: (b.dest.count("/"), b.dest))  # parents before children
    env = [arg for name, value in sight.env.items() for arg in ("--setenv", name, value)]
    return [
        *drop,
        "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1",
        *_binds(),
        "--size", str(config.tmp_mb << 20), "--tmpfs", "/tmp",
        "--ro-bind", str(repo), SOURCE,
        "--size", str(copy_bytes(repo, config)), "--tmpfs", MOUNT,
        *[arg for b in binds for arg in ("--ro-bind", b.source, b.dest)],
        "--chdir", MOUNT,
        "--clearenv", "--setenv", "PATH", sight.path, "--setenv", "HOME", "/tmp", *env,
        "--remount-ro", "/",
        "/bin/sh", "-c", _COPY, "memdoor-test", command, *limits,
    ]  # fmt: skip


def _give(tree: Path, uid: int) -> None:
    """Make ``tree`` (and everything in it) the leased uid's, so the command may write its own files."""
    os.lchown(tree, uid, uid)
    for base, dirs, files in os.walk(tree):
        for name in dirs + files:
            os.lchown(os.path.join(base, name), uid, uid)


def _group(config: TestRunConfig) -> Group | None:
    """The command's control group, or None where groups are off or cannot be used (rlimits only)."""
    groups = Cgroups.open() if config.sandbox.cgroups else None
    if groups is None:
        return None
    return groups.candidate_group(config.group_memory_mb, config.max_processes, config.cpu_cores)


def private_parent(path: Path) -> Path | None:
    """The first directory above ``path`` that other users cannot search, or None."""
    for parent in path.resolve().parents:
        if not parent.stat().st_mode & 0o001:
            return parent
    return None


def check_reachable(repo: Path) -> None:
    """SandboxError unless every directory above ``repo`` is searchable by other users (the leased uid
    binds the copy, so it must reach it: make copies under a directory of mode 0711 in /tmp)."""
    parent = private_parent(repo)
    if parent is not None:
        raise SandboxError(f"the test sandbox cannot reach {repo}: {parent} is not searchable by other users")


def reachable_sight(sight: Sight) -> Sight:
    """``sight`` without the binds the leased uid cannot reach (a private parent such as ``/root``): those
    the command needs are named in ``hidden`` with the reason and the fix (optional ones are dropped
    silently), and ``PATH`` loses their entries."""
    kept, hidden = [], list(sight.hidden)
    for b in sight.binds:
        parent = private_parent(Path(b.source))
        if parent is None:
            kept.append(b)
        elif not b.optional:
            hidden.append(
                f"{b.source} ({b.why}): {parent} is private to its owner and the tests run as an "
                f"unprivileged uid (make it searchable, chmod o+x {parent}, or install the tools elsewhere)"
            )
    out = sight.model_copy(update={"binds": kept, "hidden": hidden})
    path = [d for d in sight.path.split(":") if out.visible(os.path.realpath(d))]
    return out.model_copy(update={"path": ":".join(path)})


def _not_in(repo: Path, sight: Sight) -> Sight:
    """``sight`` without binds into the copy where the copy has that path itself (its own node_modules,
    a link included)."""
    inside = MOUNT + "/"
    binds = [
        b
        for b in sight.binds
        if not (b.dest.startswith(inside) and os.path.lexists(repo / b.dest[len(inside) :]))
    ]
    return sight.model_copy(update={"binds": binds})


def _started(path: Path) -> int | None:
    """Where the command's output begins (after the marker); None when the sandbox never started."""
    with path.open("rb") as f:
        head = f.read(HEAD_BYTES)
    at = head.find(STARTED)
    return None if at < 0 else at + len(STARTED)


def _tail(path: Path, keep: int, start: int = 0) -> str:
    """The last ``keep`` characters of the output file after byte ``start``."""
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(start, size - keep * 4))
        text = f.read().decode("utf-8", "replace")
    return text[-keep:] if keep else ""


def _wait(proc: subprocess.Popen, timeout_s: float, cancel: threading.Event | None) -> int | None:
    """The exit status, or None when the time limit passed or ``cancel`` was set first (not killed here)."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            return proc.wait(left if cancel is None else max(0.0, min(left, 0.2)))
        except subprocess.TimeoutExpired:
            if left <= 0 or (cancel is not None and cancel.is_set()):
                return None


def run_tests(
    repo: Path, command: str, config: TestRunConfig | None = None, cancel: threading.Event | None = None
) -> TestRun:
    """Run ``command`` in ``repo`` (a copy: the command may change it) in isolation. SandboxError when
    bubblewrap is missing or cannot start; anything the command does is a TestRun, never an exception.
    Setting ``cancel`` (another thread) kills the command as its time limit would (a timed-out run)."""
    config = config or TestRunConfig()
    if shutil.which("bwrap", path=TOOL_PATH) is None:
        raise SandboxError("bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
    root = os.geteuid() == 0
    config = config.model_copy(update={"sight": _not_in(repo, config.sight)})
    if root:
        config = config.model_copy(update={"sight": reachable_sight(config.sight)})
    with ExitStack() as stack:
        lease = None
        if root:
            check_reachable(repo)
            sb = config.sandbox
            lease = stack.enter_context(UidPool(sb.uid_base, sb.uid_count, sb.lock_dir).lease())
            _give(repo, lease.uid)
        uid = lease.uid if lease else None
        out_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memdoor-testrun-")))
        out_path = out_dir / "output"
        group = _group(config)
        if group is not None:
            stack.callback(group.remove)  # kills whatever is left in it
        argv = command_line(repo, command, config, uid)
        started = time.monotonic()
        with out_path.open("wb") as out:
            proc = subprocess.Popen(
                group.wrap(argv) if group is not None else argv,  # joins the group, then execs
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={"PATH": TOOL_PATH},
                start_new_session=True,
            )
            try:
                code = _wait(proc, config.timeout_s, cancel)
                if code is None:
                    kill_tree(proc)
            except BaseException:
                kill_tree(proc)
                raise
        seconds = time.monotonic() - started
        if lease is not None:
            lease.clean = reap_uid(lease.uid)
        start = _started(out_path)
        if start is None and code is not None and code != 0:  # bubblewrap (or what runs it) failed
            said = _tail(out_path, HEAD_BYTES).strip().splitlines() or [f"exit {code}, no output"]
            raise SandboxError(f"the test sandbox cannot start: {said[0]}")
        output = _tail(out_path, config.keep_chars, start or 0)
        results = parse_results(_tail(out_path, PARSE_CHARS, start or 0))
        memory_exceeded = group is not None and group.oom_killed()
        limited_by = group.mode if group is not None else "rlimits"
    return TestRun(
        command=command,
        passed=code == 0,
        exit_code=code,
        timed_out=code is None,
        memory_exceeded=memory_exceeded,
        limited_by=limited_by,
        seconds=round(seconds, 3),
        output=output,
        results=results,
        sees=[b.dest if b.dest == b.source else f"{b.source} at {b.dest}" for b in config.sight.binds],
        hidden=config.sight.hidden,
    )
