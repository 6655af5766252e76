"""Probes of the resources a candidate can take (what ``memdoor doctor`` reports after the isolation checks):
which limits are enforced and how (a cgroup v1/v2 per candidate, or per-process rlimits only), then real
programs that try to break them: several processes together over the memory limit, files written
everywhere, and processes spinning on every core.
"""

from __future__ import annotations

import json

from memdoor.core.problem import TestCase
from memdoor.core.protocols import Sandbox
from memdoor.sandbox.cgroups import CONTROLLERS, Cgroups
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.open import open_sandbox
from memdoor.sandbox.probe_kit import Check, json_line, record

_PROBE_MB = 256  # the memory probe runs with this limit, so it never takes much of the machine

# Three processes of 40 % of the limit each: every one is under it, the three together are not.
_HOLDERS = """
import posix, time
kids = []
for _ in range(3):
    pid = posix.fork()
    if pid == 0:
        block = b"x" * ({mb} << 20)
        time.sleep(2)
        posix._exit(0)
    kids.append(pid)
dead = sum(posix.waitpid(pid, 0)[1] != 0 for pid in kids)
if dead:
    raise MemoryError("%d of 3 processes were killed" % dead)
print("held")
"""

# 1 MiB files, each under the file-size limit, written into every place until refused; MiB written per
# place (distinct directory names: /dev/shm is a link to /tmp). Also run by tests/sandbox.
FILL_EVERYWHERE = r"""
import json, os
res = {}
places = ["/", "/dev/shm", "/tmp", "/var/tmp", os.path.expanduser("~") + "/home", "/dev", "/usr", "/newdir",
          "/proc/fill"]
for n, place in enumerate(places):
    total = 0
    try:
        d = os.path.join(place, "fill-%d" % n)
        os.makedirs(d)
        chunk = b"x" * (1 << 20)
        for i in range(100000):
            with open(os.path.join(d, str(i)), "wb") as f:
                f.write(chunk)
            total += 1
    except OSError:
        pass
    res[place] = total
print(json.dumps(res))
"""

# Four processes spin for one second of wall time; their CPU time over that second is what they got.
_SPIN = """
import posix, time, json
start = time.monotonic()
kids = []
for _ in range(4):
    pid = posix.fork()
    if pid == 0:
        while time.monotonic() - start < 1.0:
            pass
        posix._exit(0)
    kids.append(pid)
for pid in kids:
    posix.waitpid(pid, 0)
t = posix.times()
print(json.dumps({"cpu": t.children_user + t.children_system, "wall": time.monotonic() - start}))
"""


def _groups_of(sb: Sandbox) -> Cgroups | None:
    return getattr(sb, "cgroups", None)


def enforcement(sb: Sandbox, config: SandboxConfig) -> dict[str, str]:
    """How each limit is enforced, by limit name (what ``memdoor doctor --json`` shows as ``limits``)."""
    groups = _groups_of(sb)
    mode = groups.mode if groups is not None else None
    used = set(groups.controllers) if groups is not None else set()
    how = {
        "memory": f"{mode}: {config.memory_mb} MiB per candidate (all its processes and tmpfs files)"
        if "memory" in used
        else "rlimit only",
        "processes": f"{mode}: pids.max per candidate" if "pids" in used else "rlimit only",
        "cpu": f"{mode}: equal share per candidate"
        + (f", quota {config.cpu_cores:g} core(s)" if config.cpu_cores > 0 else "")
        if "cpu" in used
        else "none (CPU-time rlimit per process only)",
    }
    how["memory"] += f"; rlimit: {config.memory_mb} MiB address space per process"
    how["processes"] += f"; rlimit: {config.max_processes} per uid"
    how["disk"] = (
        f"one tmpfs of {config.tmp_mb} MiB at /tmp (/dev/shm links to it), root read-only; rlimit: "
        f"{config.max_file_mb} MiB per file"
    )
    return how


def check_cgroups(sb: Sandbox, config: SandboxConfig) -> Check:
    """Whether candidates get a control group, and why not where they do not."""
    groups = _groups_of(sb)
    if groups is not None and set(groups.controllers) == set(CONTROLLERS):
        return Check(
            name="per-candidate limits",
            status="ok",
            detail=f"{groups.mode}: memory, pids and cpu groups per candidate (rlimits per process too)",
        )
    if not config.cgroups:
        why = "disabled in the configuration (cgroups=False)"
    else:
        missing = Cgroups.why_not()
        if groups is not None:
            missing = {k: v for k, v in missing.items() if k not in groups.controllers}
        why = "; ".join(f"{k}: {v}" for k, v in missing.items()) or "cannot create groups here"
    partial = f"{groups.mode} for {', '.join(groups.controllers)}; " if groups is not None else ""
    return Check(
        name="per-candidate limits",
        status="warn",
        detail=f"{partial}rlimits per process only ({why}): processes of one candidate can together "
        "exceed the memory limit and take more than their share of CPU",
    )


def check_candidate_memory(sb: Sandbox, config: SandboxConfig) -> Check:
    """Three processes each under the memory limit, over it together."""
    each = _PROBE_MB * 2 // 5
    probe = config.model_copy(
        update={"memory_mb": _PROBE_MB, "isolation": sb.name, "prestart": False, "timeout_s": 30.0}
    )
    with open_sandbox(probe) as small:
        v = small.run(
            _HOLDERS.format(mb=each), [TestCase(kind="stdin", input="\n", output="held")], prelude="none"
        )
        groups = _groups_of(small)
    what = f"3 processes of {each} MiB under a {_PROBE_MB} MiB limit"
    if v.status == "memory_limit":
        return Check(name="candidate memory", status="ok", detail=f"{what}: memory_limit")
    if v.status == "passed" and (groups is None or "memory" not in groups.controllers):
        return Check(
            name="candidate memory",
            status="warn",
            detail=f"{what}: all held (the limit is per process only)",
        )
    return Check(name="candidate memory", status="fail", detail=f"{what}: {v.status}")


def check_disk(sb: Sandbox, config: SandboxConfig) -> Check:
    """Files written everywhere (each under the file-size limit) stay within the one bounded /tmp."""
    v, out = record(sb, FILL_EVERYWHERE)
    written = json_line(out)
    if not written:
        return Check(name="disk", status="fail", detail=f"probe failed: {v.status}")
    total = sum(int(n) for n in written.values())
    outside = {k: n for k, n in written.items() if n and k not in ("/tmp", "/dev/shm", "/tmp/home")}
    if outside or total > config.tmp_mb:
        return Check(
            name="disk", status="fail", detail=f"wrote {total} MiB; outside /tmp: {json.dumps(outside)}"
        )
    return Check(
        name="disk",
        status="ok",
        detail=f"{total} MiB written in all (/tmp and /dev/shm: one {config.tmp_mb} MiB tmpfs); "
        "/, /dev, /usr read-only",
    )


def check_cpu(sb: Sandbox, config: SandboxConfig) -> Check:
    """Four spinning processes: with a quota they get ``cpu_cores`` cores at most, whatever the machine has."""
    v, out = record(sb, _SPIN)
    got = json_line(out)
    if not got:
        return Check(name="cpu share", status="fail", detail=f"probe failed: {v.status}")
    rate = float(got["cpu"]) / max(float(got["wall"]), 1e-3)
    seen = f"4 spinning processes got {rate:.2f} CPU-s per s"
    groups = _groups_of(sb)
    if groups is None or "cpu" not in groups.controllers:
        return Check(name="cpu share", status="warn", detail=f"{seen}; no per-candidate CPU control")
    if config.cpu_cores > 0 and rate > config.cpu_cores * 1.25 + 0.1:
        return Check(
            name="cpu share", status="fail", detail=f"{seen}, over the {config.cpu_cores:g}-core quota"
        )
    quota = f"quota {config.cpu_cores:g} core(s)" if config.cpu_cores > 0 else "no quota"
    return Check(name="cpu share", status="ok", detail=f"{seen} ({quota}, equal share per candidate)")


PROBES = [check_cgroups, check_candidate_memory, check_disk, check_cpu]
