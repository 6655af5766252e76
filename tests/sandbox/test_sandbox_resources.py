"""Resources per candidate (issue 11, items 3-5): one bounded writable place, memory, processes and CPU
counted for all of a candidate's processes together (a control group per candidate), and the rlimit
fallback where no cgroup can be used. Real hostile programs through the real sandbox, both isolation kinds.

Assertions are on verdicts and on the groups' own counters (read just before each group is removed), never
on timings.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from sandbox_helpers import stdin_tests

from memdoor.core.problem import Problem
from memdoor.judging.programs import grade_many
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.cgroups import CONTROLLERS, Cgroups, GroupLimits, find_layout, group_prefix
from memdoor.sandbox.resource_probes import FILL_EVERYWHERE

needs_cgroups = pytest.mark.skipif(
    os.geteuid() != 0 or Cgroups.open() is None, reason="no usable cgroup here (needs root)"
)

MEMORY_MB = 256  # small, so the hostile programs cannot hurt the shared machine

# Three processes holding 150 MiB each (each one under the per-process limit, 450 MiB together).
THREE_HOLDERS = """
import posix, time
kids = []
for _ in range(3):
    pid = posix.fork()
    if pid == 0:
        block = b"x" * (150 << 20)
        time.sleep(3)
        posix._exit(0)
    kids.append(pid)
for pid in kids:
    _, status = posix.waitpid(pid, 0)
    if status != 0:
        raise RuntimeError("a child died: %d" % status)
print("all held")
"""

# 100 MiB written to /tmp, then 200 MiB in the process: only the two together are over the limit.
FILE_THEN_MEMORY = """
for name in ("a", "b"):  # each file under the 64 MiB file-size limit
    with open("/tmp/" + name, "wb") as f:
        for _ in range(50):
            f.write(b"y" * (1 << 20))
block = b"x" * (200 << 20)
print("all held")
"""

# Threads count as processes (pids.max, RLIMIT_NPROC): start sleeping ones until refused.
THREAD_BOMB = """
import threading, time, json
n = 0
try:
    for _ in range(5000):
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        n += 1
except RuntimeError:
    pass
print(json.dumps({"started": n}))
"""

# 62 children that leave the session and spin; the parent spins too.
SPINNERS = """
import posix
for _ in range(62):
    if posix.fork() == 0:
        posix.setsid()
        while True:
            pass
while True:
    pass
"""

# About 0.3 s of CPU alone (next to the spinners, without a cgroup per candidate: 6 s and more).
HONEST_WORK = "n = int(input())\nprint(sum(i * i for i in range(n)) % 1000003)"
HONEST_N = 4_000_000


def own_groups() -> list[Path]:
    """Groups this test process created that still exist."""
    groups = Cgroups.open()
    if groups is None:
        return []
    prefix = group_prefix()
    found = []
    for parent in groups.layout.parents.values():
        found += [p for p in parent.iterdir() if p.name.startswith(prefix)]
    return found


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def kind(request):
    return request.param


@pytest.fixture(scope="module")
def small(kind):
    """A sandbox with a small memory limit; records each group's final counters. The generous test limit
    keeps a loaded machine from turning a slow out-of-memory kill into a time_limit."""
    with open_sandbox(
        SandboxConfig(isolation=kind, memory_mb=MEMORY_MB, max_processes=24, timeout_s=30)
    ) as sb:
        seen = []
        if sb.cgroups is not None:
            sb.cgroups.on_removed = seen.append
        yield sb, seen


@pytest.fixture(scope="module")
def fallback(kind):
    """The same sandbox without cgroups: per-process rlimits only."""
    with open_sandbox(SandboxConfig(isolation=kind, memory_mb=MEMORY_MB, cgroups=False)) as sb:
        yield sb


def assert_healthy(sb) -> None:
    v = sb.run("a, b = map(int, input().split())\nprint(a * b)", stdin_tests(("6 7\n", "42\n")))
    assert v.passed, v


def _disk(sb) -> dict[str, int]:
    v = sb.run(FILL_EVERYWHERE, stdin_tests(("\n", None)), prelude="none")
    assert v.passed, v
    return json.loads(v.tests[0].output)


@pytest.mark.parametrize("cgroups", [True, False])
def test_only_the_bounded_tmp_is_writable(kind, cgroups):
    with open_sandbox(SandboxConfig(isolation=kind, tmp_mb=32, cgroups=cgroups)) as sb:
        written = _disk(sb)
        assert sum(written.values()) <= 32, written
        assert written["/tmp"] + written["/dev/shm"] >= 16, written  # /tmp and /dev/shm work, bounded
        for place in ("/", "/var/tmp", "/dev", "/usr", "/newdir", "/proc/fill"):
            assert written[place] == 0, (place, written)
        assert_healthy(sb)


@needs_cgroups
@pytest.mark.parametrize(
    "code", [THREE_HOLDERS, FILE_THEN_MEMORY], ids=["three-processes", "file-and-memory"]
)
def test_memory_is_limited_per_candidate(small, code):
    sb, seen = small
    assert sb.cgroups is not None
    seen.clear()
    v = sb.run(code, stdin_tests(("\n", "all held\n")), prelude="none")
    assert v.status == "memory_limit", v
    counters = [s for s in seen if s.oom_kills]
    assert counters, seen
    assert all(s.memory_peak is None or s.memory_peak <= MEMORY_MB << 20 for s in seen), seen
    assert_healthy(sb)


def test_without_cgroups_each_process_is_still_limited(fallback):
    assert fallback.cgroups is None
    v = fallback.run(f"x = b'x' * ({MEMORY_MB + 64} << 20)", stdin_tests(("\n", "")), prelude="none")
    assert v.status == "memory_limit", v
    v = fallback.run(THREAD_BOMB, stdin_tests(("\n", None)), prelude="none")
    assert json.loads(v.tests[0].output)["started"] < 5000, v
    assert_healthy(fallback)


@needs_cgroups
def test_thread_bomb_is_bounded_per_candidate(small):
    sb, seen = small
    seen.clear()
    v = sb.run(THREAD_BOMB, stdin_tests(("\n", None)), prelude="none")
    assert v.passed, v
    assert json.loads(v.tests[0].output)["started"] < 24, v
    assert seen, "the candidate ran in a group"
    assert_healthy(sb)


@needs_cgroups
def test_a_spinning_candidate_does_not_starve_its_neighbour(kind):
    expected = str(sum(i * i for i in range(HONEST_N)) % 1000003) + "\n"
    problem = Problem(
        id="squares", statement="sum of squares", public_tests=stdin_tests((f"{HONEST_N}\n", expected))
    )
    seen = []
    with open_sandbox(SandboxConfig(isolation=kind, timeout_s=5, workers=2)) as sb:
        assert sb.cgroups is not None
        sb.cgroups.on_removed = seen.append
        started = time.monotonic()
        verdicts = list(grade_many([(problem, SPINNERS), (problem, HONEST_WORK)], sb, workers=2))
        wall = time.monotonic() - started
    assert [v.status for v in verdicts] == ["time_limit", "passed"], verdicts
    # The spinners' group never had more than its one core (quota), whatever the machine's load.
    spent = max(s.cpu_seconds or 0.0 for s in seen)
    assert 0 < spent <= wall * 1.0 * 1.1 + 0.5, (spent, wall)


@needs_cgroups
def test_no_group_is_left_behind(small):
    sb, _ = small
    before = set(own_groups())  # other open sandboxes of this test run keep their prestarted ones
    problem = Problem(id="mul", statement="m", public_tests=stdin_tests(("6 7\n", "42\n")))
    jobs = [(problem, "a, b = map(int, input().split())\nprint(a * b)")] * 6
    jobs += [(problem, "import posix\nposix.kill(1, 9)"), (problem, THREAD_BOMB)]
    assert sum(v.passed for v in grade_many(jobs, sb, workers=3)) == 6
    sb.close()  # the prestarted sandboxes go too
    assert set(own_groups()) <= before


@needs_cgroups
def test_stale_groups_of_a_dead_grader_are_removed():
    dead = subprocess.Popen(["true"])
    dead.wait()
    groups = Cgroups.open()
    groups_of_dead = groups.create(GroupLimits(memory_bytes=64 << 20, pids=8, cpu_cores=1.0))
    renamed = {}
    for ctl, d in groups_of_dead.dirs.items():
        target = d.with_name(f"{group_prefix(dead.pid)}0123456789ab")
        d.rename(target)  # cgroupfs allows renaming a group in place
        renamed[ctl] = target
    sleeper = subprocess.Popen(
        ["/bin/sh", "-c", f"echo 0 > '{renamed['memory']}/cgroup.procs' && exec sleep 60"]
    )
    # wait until the sleeper is in the group (a fixed pause could end before it joins on a loaded machine:
    # the group would then be removed empty, and the sleeper's own join fail, without a kill to check)
    procs, deadline = renamed["memory"] / "cgroup.procs", time.monotonic() + 60
    while str(sleeper.pid) not in procs.read_text().split() and time.monotonic() < deadline:
        assert sleeper.poll() is None, "the sleeper could not join the stale group"
        time.sleep(0.02)
    assert str(sleeper.pid) in procs.read_text().split()
    assert Cgroups.open() is not None
    assert not any(p.exists() for p in renamed.values())
    assert sleeper.wait(60) == -9  # killed by the cleanup


def test_cgroup_v2_layout_and_limit_files(tmp_path):
    """Path and file-format logic only, on a fake cgroup2 tree (this machine runs cgroup v1)."""
    root = tmp_path / "cgroup"
    own = root / "grader.scope"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (own / "cgroup.subtree_control").write_text("")
    mounts = f"cgroup2 {root} cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"
    layout = find_layout(mounts, "0::/grader.scope\n")
    assert layout.mode == "cgroup v2" and layout.missing == {}
    assert set(layout.parents) == set(CONTROLLERS) and layout.parents["memory"] == own
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    group = Cgroups(layout).create(GroupLimits(memory_bytes=256 << 20, pids=67, cpu_cores=1.0))
    d = group.dirs["memory"]
    assert d.parent == own and set(group.dirs.values()) == {d}
    assert (d / "memory.max").read_text() == str(256 << 20)
    assert (d / "pids.max").read_text() == "67"
    assert (d / "cpu.max").read_text() == "100000 100000" and (d / "cpu.weight").read_text() == "100"
    wrapped = group.wrap(["bwrap", "x"])
    assert wrapped[-2:] == ["bwrap", "x"] and f"{d}/cgroup.procs" in wrapped[2]
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    (d / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\n")
    stats = group.stats()
    assert group.oom_killed() and stats.cpu_seconds == 1.5
    unlimited = Cgroups(layout).create(GroupLimits(memory_bytes=1 << 30, pids=8, cpu_cores=0))
    assert (unlimited.dirs["cpu"] / "cpu.max").read_text() == "max 100000"


def test_cgroup_v2_refused_controllers_mean_rlimits(tmp_path):
    """Where v2 controllers cannot be enabled below the grader's group, no controller is used."""
    root = tmp_path / "cgroup"
    own = root / "busy"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("memory pids\n")
    (own / "cgroup.subtree_control").mkdir()  # writing it fails, as EBUSY would
    layout = find_layout(f"cgroup2 {root} cgroup2 rw 0 0\n", "0::/busy\n")
    assert layout.parents == {}
    assert "cpu" in layout.missing and "cannot enable controllers" in layout.missing["memory"]
