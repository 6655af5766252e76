"""A control group per candidate: memory (tmpfs files included), processes and CPU counted for all of its
processes together, on cgroup v1 or v2; rlimits alone where neither can be used.

A group is created for each sandbox process before it starts; the sandbox's first process joins it before
it executes anything (a ``/bin/sh`` wrapper writes ``0`` to ``cgroup.procs``), so every process of the
candidate is inside from its first instruction. Groups are made below the grader's own group of each
controller (``memdoor-<pid namespace>-<grader pid>-<token>``) and removed once their processes are gone; groups of graders
that died (their pid is gone) are killed and removed when a :class:`Cgroups` is opened.

Memory accounting includes the shared-memory (tmpfs) pages a candidate writes: memcg charges them to the
writer's group, so /tmp and the memory of every process share one bound. CPU: each group has the default
weight, so candidates graded at once share the CPU equally whatever their process count, and an optional
CFS quota caps each at ``cpu_cores`` cores.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memdoor.core.errors import SandboxError

Mode = Literal["cgroup v1", "cgroup v2"]
CONTROLLERS = ("memory", "pids", "cpu")
_V1_EXTRA = ("cpuacct",)  # read for CPU usage when mounted apart from cpu (optional)
_NAME = re.compile(r"memdoor-(?:(\d+)-)?(\d+)-[0-9a-f]+")  # pid namespace (older names: none), pid, token
_PERIOD_US = 100_000
SANDBOX_OWN_PROCESSES = 3  # bwrap's or unshare's own processes, counted in the group's pids.max


@dataclass(frozen=True)
class GroupLimits:
    """What one candidate may use in total."""

    memory_bytes: int
    pids: int
    cpu_cores: float  # CFS quota in cores; 0: no quota (equal weights only)


@dataclass
class GroupStats:
    """A group's counters, read just before it is removed."""

    oom_kills: int = 0
    memory_peak: int | None = None
    pids_refused: int = 0
    cpu_seconds: float | None = None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _keyed(text: str) -> dict[str, int]:
    """``name value`` lines (memory.events, memory.oom_control, pids.events, cpu.stat) as a dict."""
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            found[parts[0]] = int(parts[1])
    return found


def _number(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


class Group:
    """One candidate's group: a directory per v1 controller, or one v2 directory."""

    def __init__(
        self, mode: Mode, dirs: dict[str, Path], on_removed: Callable[[GroupStats], None] | None = None
    ):
        self.mode = mode
        self.dirs = dirs  # controller -> directory (v2: the same directory for all)
        self.on_removed = on_removed  # given the group's final counters (tests, doctor)

    @property
    def _unique_dirs(self) -> list[Path]:
        return list(dict.fromkeys(self.dirs.values()))

    def wrap(self, command: list[str]) -> list[str]:
        """``command`` run by a shell that first moves itself into the group (before anything else runs)."""
        joins = " && ".join(f"echo 0 > '{d}/cgroup.procs'" for d in self._unique_dirs)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "memdoor-join", *command]

    def stats(self) -> GroupStats:
        s = GroupStats()
        mem = self.dirs.get("memory")
        if mem is not None:
            if self.mode == "cgroup v2":
                s.oom_kills = _keyed(_read(mem / "memory.events")).get("oom_kill", 0)
                s.memory_peak = _number(_read(mem / "memory.peak"))
            else:
                control = _keyed(_read(mem / "memory.oom_control"))
                if "oom_kill" in control:
                    s.oom_kills = control["oom_kill"]
                else:  # kernels before 4.13: the limit was hit (reclaim may have sufficed)
                    s.oom_kills = int((_number(_read(mem / "memory.failcnt")) or 0) > 0)
                s.memory_peak = _number(_read(mem / "memory.max_usage_in_bytes"))
        pids = self.dirs.get("pids")
        if pids is not None:
            s.pids_refused = _keyed(_read(pids / "pids.events")).get("max", 0)
        if self.mode == "cgroup v2" and "cpu" in self.dirs:
            usec = _keyed(_read(self.dirs["cpu"] / "cpu.stat")).get("usage_usec")
            s.cpu_seconds = usec / 1e6 if usec is not None else None
        elif "cpuacct" in self.dirs:
            ns = _number(_read(self.dirs["cpuacct"] / "cpuacct.usage"))
            s.cpu_seconds = ns / 1e9 if ns is not None else None
        return s

    def oom_killed(self) -> bool:
        """The kernel killed a process of the group because the group was out of memory."""
        return self.stats().oom_kills > 0

    def pids(self) -> list[int]:
        found: set[int] = set()
        for d in self._unique_dirs:
            found.update(int(p) for p in _read(d / "cgroup.procs").split() if p.isdigit())
        return sorted(found)

    def remove(self, *, attempts: int = 50) -> bool:
        """Kill what is left in the group and remove its directories. True when they are all gone."""
        if self.on_removed is not None:
            self.on_removed(self.stats())
        for attempt in range(attempts):
            left = [d for d in self._unique_dirs if d.exists()]
            for d in left:
                with contextlib.suppress(OSError):
                    d.rmdir()
            if not any(d.exists() for d in left):
                return True
            kill_all = self._unique_dirs[0] / "cgroup.kill"
            if self.mode == "cgroup v2" and kill_all.exists():
                with contextlib.suppress(OSError):
                    kill_all.write_text("1")
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002 * (attempt + 1))
        return not any(d.exists() for d in self._unique_dirs)


@dataclass
class Layout:
    """Where this grader's candidate groups go: the parent directory for each usable controller."""

    mode: Mode | None = None
    parents: dict[str, Path] = field(default_factory=dict)  # controller -> directory below which groups go
    missing: dict[str, str] = field(default_factory=dict)  # controller -> why it cannot be used


def _mounts(mounts_text: str) -> tuple[dict[str, Path], Path | None]:
    """(v1 controller -> mount point, the cgroup2 mount point) from /proc/self/mounts."""
    v1: dict[str, Path] = {}
    v2 = None
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        point, fstype, options = Path(parts[1].replace("\\040", " ")), parts[2], parts[3].split(",")
        if fstype == "cgroup":
            for name in (*CONTROLLERS, *_V1_EXTRA):
                if name in options:
                    v1.setdefault(name, point)
        elif fstype == "cgroup2" and v2 is None:
            v2 = point
    return v1, v2


def _own_paths(cgroup_text: str) -> tuple[dict[str, str], str | None]:
    """(v1 controller -> our group's path, our v2 group's path) from /proc/self/cgroup."""
    v1: dict[str, str] = {}
    v2 = None
    for line in cgroup_text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        for name in parts[1].split(","):
            v1[name] = parts[2]
    return v1, v2


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def find_layout(mounts_text: str, cgroup_text: str) -> Layout:
    """Decide v1 or v2 and each controller's parent directory (v1 wins where controllers are mounted as v1)."""
    v1_mounts, v2_mount = _mounts(mounts_text)
    v1_own, v2_own = _own_paths(cgroup_text)
    layout = Layout()
    if any(name in v1_mounts for name in CONTROLLERS):
        layout.mode = "cgroup v1"
        for name in (*CONTROLLERS, *_V1_EXTRA):
            if name not in v1_mounts:
                layout.missing[name] = "controller not mounted"
                continue
            parent = v1_mounts[name] / v1_own.get(name, "/").lstrip("/")
            if not _writable(parent):
                layout.missing[name] = f"no write access to {parent}"
                continue
            layout.parents[name] = parent
        return layout
    if v2_mount is None or v2_own is None:
        layout.missing = {name: "no cgroup file system mounted" for name in CONTROLLERS}
        return layout
    layout.mode = "cgroup v2"
    parent = v2_mount / v2_own.lstrip("/")
    available = set(_read(parent / "cgroup.controllers").split())
    if not _writable(parent):
        layout.missing = {name: f"no write access to {parent}" for name in CONTROLLERS}
        return layout
    wanted = [name for name in CONTROLLERS if name in available]
    for name in CONTROLLERS:
        if name not in available:
            layout.missing[name] = f"controller not available in {parent}"
    if wanted:
        enabled = set(_read(parent / "cgroup.subtree_control").split())
        todo = [name for name in wanted if name not in enabled]
        try:
            if todo:  # refused (EBUSY) when our group holds processes and is not the root
                (parent / "cgroup.subtree_control").write_text(" ".join(f"+{n}" for n in todo))
        except OSError as e:
            reason = (
                f"cannot enable controllers below {parent} ({e.strerror or e}); cgroup v2 needs a "
                "delegated group without processes of its own"
            )
            layout.missing.update({name: reason for name in wanted})
            return layout
        layout.parents = {name: parent for name in wanted}
    return layout


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def group_prefix(pid: int | None = None) -> str:
    """How the names of the groups of grader ``pid`` (default: this process) start. The pid namespace is in
    the name: only graders of our own namespace can be known dead by their pid."""
    return f"memdoor-{_pid_namespace()}-{os.getpid() if pid is None else pid}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Cgroups:
    """Makes a group per candidate below the grader's own groups (see :func:`find_layout`)."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.mode = layout.mode
        self.on_removed: Callable[[GroupStats], None] | None = None  # see Group.on_removed

    @classmethod
    def open(cls, root: Path = Path("/proc/self")) -> Cgroups | None:
        """The usable controllers of this machine (stale groups of dead graders removed), or None when
        none can be used (``why_not`` says why)."""
        layout = find_layout(_read(root / "mounts"), _read(root / "cgroup"))
        groups = cls(layout)
        if not any(name in layout.parents for name in CONTROLLERS):
            return None
        groups.clean_stale()
        try:  # a trial group: creating and joining must work, not just look permitted
            trial = groups.create(GroupLimits(memory_bytes=64 << 20, pids=8, cpu_cores=1.0))
        except OSError:
            return None
        try:
            joined = subprocess.run(trial.wrap(["/bin/true"]), capture_output=True, check=False).returncode
        except OSError:
            joined = -1
        trial.remove()
        return groups if joined == 0 else None

    @staticmethod
    def why_not(root: Path = Path("/proc/self")) -> dict[str, str]:
        """Why each controller cannot be used (empty when all can)."""
        layout = find_layout(_read(root / "mounts"), _read(root / "cgroup"))
        return {name: why for name, why in layout.missing.items() if name in CONTROLLERS}

    @property
    def controllers(self) -> list[str]:
        return [name for name in CONTROLLERS if name in self.layout.parents]

    def create(self, limits: GroupLimits) -> Group:
        """A new empty group with ``limits``; OSError when the kernel refuses."""
        name = f"{group_prefix()}{secrets.token_hex(6)}"
        dirs = {ctl: parent / name for ctl, parent in self.layout.parents.items()}
        group = Group(self.layout.mode or "cgroup v1", dirs, self._removed)
        try:
            for d in group._unique_dirs:
                d.mkdir()
            if self.layout.mode == "cgroup v2":
                self._limit_v2(dirs, limits)
            else:
                self._limit_v1(dirs, limits)
        except OSError:
            group.on_removed = None
            group.remove(attempts=3)
            raise
        return group

    def candidate_group(self, memory_mb: int, max_processes: int, cpu_cores: float) -> Group:
        """The group of one sandbox: the candidate's memory and processes (plus the sandbox's own), its CPU
        quota; SandboxError when the kernel refuses."""
        limits = GroupLimits(
            memory_bytes=memory_mb << 20, pids=max_processes + SANDBOX_OWN_PROCESSES, cpu_cores=cpu_cores
        )
        try:
            return self.create(limits)
        except OSError as e:
            raise SandboxError(f"cannot create the candidate's control group: {e}") from e

    def _removed(self, stats: GroupStats) -> None:
        if self.on_removed is not None:  # looked up when the group goes: it may be set after creation
            self.on_removed(stats)

    @staticmethod
    def _limit_v1(dirs: dict[str, Path], limits: GroupLimits) -> None:
        if "memory" in dirs:
            (dirs["memory"] / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
            memsw = dirs["memory"] / "memory.memsw.limit_in_bytes"
            if memsw.exists():  # no swapping out of the limit either
                memsw.write_text(str(limits.memory_bytes))
        if "pids" in dirs:
            (dirs["pids"] / "pids.max").write_text(str(limits.pids))
        if "cpu" in dirs:
            (dirs["cpu"] / "cpu.shares").write_text("1024")
            (dirs["cpu"] / "cpu.cfs_period_us").write_text(str(_PERIOD_US))
            quota = int(limits.cpu_cores * _PERIOD_US) if limits.cpu_cores > 0 else -1
            (dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(quota))

    @staticmethod
    def _limit_v2(dirs: dict[str, Path], limits: GroupLimits) -> None:
        if "memory" in dirs:
            (dirs["memory"] / "memory.max").write_text(str(limits.memory_bytes))
            swap = dirs["memory"] / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        if "pids" in dirs:
            (dirs["pids"] / "pids.max").write_text(str(limits.pids))
        if "cpu" in dirs:
            (dirs["cpu"] / "cpu.weight").write_text("100")
            quota = str(int(limits.cpu_cores * _PERIOD_US)) if limits.cpu_cores > 0 else "max"
            (dirs["cpu"] / "cpu.max").write_text(f"{quota} {_PERIOD_US}")

    def clean_stale(self) -> int:
        """Kill and remove the groups left by graders that are no longer running. How many were removed."""
        stale: dict[str, dict[str, Path]] = {}
        ns = _pid_namespace()
        for ctl, parent in self.layout.parents.items():
            with contextlib.suppress(OSError):
                for entry in parent.iterdir():
                    m = _NAME.fullmatch(entry.name)
                    ours = m is not None and int(m.group(1) or ns) == ns
                    if ours and entry.is_dir() and not _alive(int(m.group(2))):
                        stale.setdefault(entry.name, {})[ctl] = entry
        removed = 0
        for dirs in stale.values():
            removed += Group(self.layout.mode or "cgroup v1", dirs).remove(attempts=10)
        return removed
