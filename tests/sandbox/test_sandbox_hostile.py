"""Hostile candidates (issue 2, item 6): each gets a non-passing verdict or passes harmlessly, nothing outside
the sandbox changes, no process survives, nothing secret leaks, and the grader grades the next one correctly.

Programs use ``posix`` directly where the official graders' guard sets ``os.fork``/``os.kill`` to None:
the guard is not a defence, the sandbox is. The only network address used is 127.0.0.1.
"""

from __future__ import annotations

import os
import resource
import secrets
import socket
import time
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import fn_tests, stdin_tests

from memdoor.sandbox import SandboxConfig, open_sandbox


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def sandbox(request):
    """Every hostile program runs under both isolation tools (unshare is the fallback without bubblewrap)."""
    with open_sandbox(SandboxConfig(isolation=request.param)) as sb:
        yield sb


@pytest.fixture(scope="module")
def quick_sandbox(sandbox):
    with open_sandbox(SandboxConfig(isolation=sandbox.name, timeout_s=1.5)) as sb:
        yield sb


def assert_healthy(sb) -> None:
    """The sandbox still grades a plain candidate correctly."""
    v = sb.run("a, b = map(int, input().split())\nprint(a * b)", stdin_tests(("6 7\n", "42\n")))
    assert v.passed, v
    v = sb.run("a, b = map(int, input().split())\nprint(a + b)", stdin_tests(("6 7\n", "42\n")))
    assert v.status == "wrong_answer", v


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def wait_gone(marker: str, seconds: float = 60.0) -> list[int]:
    """The processes of ``marker`` still there after ``seconds`` (killed ones leave as the kernel gets to
    them: on a loaded machine that can take a while after the run returned)."""
    deadline = time.monotonic() + seconds
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def sleeper_marker() -> str:
    """A unique ``sleep`` duration: the sleepers a candidate starts are findable in the host's /proc."""
    return f"{900000 + secrets.randbelow(99999)}.{secrets.randbelow(10**6):06d}"


def test_infinite_loop_is_a_time_limit(quick_sandbox):
    v = quick_sandbox.run("while True:\n    pass", stdin_tests(("\n", "1\n"), ("\n", "1\n")))
    assert v.status == "time_limit"
    assert [t.status for t in v.tests] == ["time_limit", "skipped"]
    assert_healthy(quick_sandbox)


def test_sleeping_forever_is_a_time_limit(quick_sandbox):
    v = quick_sandbox.run("import time\ntime.sleep(10 ** 6)", stdin_tests(("\n", "1\n")))
    assert v.status == "time_limit"
    v = quick_sandbox.run(
        "import time\ndef f(x):\n    time.sleep(10 ** 6)\n",
        fn_tests(("1", "1")),
        func_name="f",
        prelude="none",
    )
    assert v.status == "time_limit"
    assert_healthy(quick_sandbox)


def test_time_limit_then_the_remaining_tests_still_run_when_asked(quick_sandbox):
    code = "def f(x):\n    while x == 2:\n        pass\n    return x\n"
    tests = fn_tests(("1", "1"), ("2", "2"), ("3", "3"))
    v = quick_sandbox.run(code, tests, func_name="f", stop_at_first_failure=False)
    assert [t.status for t in v.tests] == ["passed", "time_limit", "passed"]


def test_memory_hog_is_stopped(sandbox):
    v = sandbox.run("x = bytearray(3 << 30)\nprint(len(x))", stdin_tests(("\n", "1\n")), prelude="none")
    assert v.status == "memory_limit", v
    grow = "chunks = []\nwhile True:\n    chunks.append(bytearray(50 << 20))"
    v = sandbox.run(grow, stdin_tests(("\n", "1\n")), prelude="none")
    # Filling 2 GiB takes a while on a busy machine: the limit or the clock stops it, never a pass.
    assert v.status in ("memory_limit", "runtime_error", "time_limit"), v
    assert_healthy(sandbox)


def test_fork_storm_is_contained_and_reaped(quick_sandbox):
    marker = sleeper_marker()
    storm = f"""
import posix
while True:
    try:
        if posix.fork() == 0:
            posix.execv("/usr/bin/sleep", ["sleep", "{marker}"])
    except OSError:
        pass
"""
    v = quick_sandbox.run(storm, stdin_tests(("\n", "1\n")), prelude="none")
    assert not v.passed
    assert wait_gone(marker) == []
    assert_healthy(quick_sandbox)


def test_process_limit_applies(sandbox):
    # Fork (and park) children until the process limit says no: far fewer than a fork storm would want.
    code = """
import posix, time
n = 0
try:
    for _ in range(10000):
        if posix.fork() == 0:
            time.sleep(30)
            posix._exit(0)
        n += 1
except OSError:
    pass
print(n)
"""
    v = sandbox.run(code, stdin_tests(("\n", None)), prelude="none")
    assert v.passed, v
    # As root each candidate has its own uid, so the limit is exact; otherwise it also counts our own tasks.
    limit = SandboxConfig().max_processes + 1 if os.geteuid() == 0 else 10000
    assert 0 < int(v.tests[0].output) < limit


def test_double_forked_daemon_is_reaped(sandbox):
    marker = sleeper_marker()
    code = f"""
import posix
if posix.fork() == 0:
    posix.setsid()
    if posix.fork() == 0:
        posix.execv("/usr/bin/sleep", ["sleep", "{marker}"])
    posix._exit(0)
posix.waitpid(-1, 0)
print(42)
"""
    v = sandbox.run(code, stdin_tests(("\n", "42\n")), prelude="none")
    assert v.passed, v  # it did its job, harmlessly...
    assert wait_gone(marker) == []  # ...and its daemon did not outlive it


def test_output_flood_is_capped(sandbox):
    with open_sandbox(SandboxConfig(isolation=sandbox.name, timeout_s=3.0, max_output_bytes=1 << 20)) as sb:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        flood = "import sys\nfor _ in range(2000):\n    sys.stdout.write('x' * 100000 + '\\n')"  # 200 MB
        v = sb.run(flood, stdin_tests(("\n", "x\n")))
        assert v.status in ("wrong_answer", "time_limit", "memory_limit"), v
        for fd_flood in (
            "import posix\nwhile True:\n    posix.write(1, b'y' * 65536)",
            "import posix\nwhile True:\n    posix.write(2, b'z' * 65536)",
        ):
            v = sb.run(fd_flood, stdin_tests(("\n", "1\n")), prelude="none")
            assert not v.passed
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert grown_mb < 150, f"the grader grew by {grown_mb:.0f} MiB"
        assert_healthy(sb)


def test_writing_garbage_to_every_descriptor(sandbox):
    code = """
import posix
for fd in range(3, 64):
    try:
        posix.write(fd, b'\\xff' * 70000 + b'{"ev": "end"}\\n')
    except OSError:
        pass
print(42)
"""
    v = sandbox.run(code, stdin_tests(("\n", "42\n"), ("\n", "42\n")), prelude="none")
    assert v.status != "passed" or v.tests_passed == 2  # either caught as a protocol error or harmless
    assert_healthy(sandbox)


def test_closing_descriptors_does_not_pass(sandbox):
    code = "import posix\nfor fd in range(0, 64):\n    try:\n        posix.close(fd)\n    except OSError:\n        pass\n"
    v = sandbox.run(code, stdin_tests(("\n", "42\n")), prelude="none")
    assert not v.passed
    assert_healthy(sandbox)


@pytest.mark.parametrize(
    "attack",
    [
        "import posix, signal\nposix.kill(posix.getppid(), signal.SIGKILL)",
        "import posix, signal\nposix.killpg(0, signal.SIGKILL)",
        "import posix, signal\nposix.kill(-1, signal.SIGKILL)",
        "import posix, signal\nposix.kill(1, signal.SIGKILL)\nposix.kill(posix.getpid(), signal.SIGKILL)",
        "import posix, signal\nposix.kill(posix.getpid(), signal.SIGSEGV)",
    ],
)
def test_killing_the_parent_or_itself(sandbox, attack):
    v = sandbox.run(attack + "\nprint(42)", stdin_tests(("\n", "42\n")), prelude="none")
    assert v.status in ("runtime_error", "passed"), v  # a kill that failed lets it print 42, harmlessly
    assert_healthy(sandbox)


def test_no_network_even_to_loopback(sandbox):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = f"""
import socket, os
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("connected")
except OSError as e:
    print("blocked", type(e).__name__)
print(sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else "no-sysfs")
"""
        v = sandbox.run(code, stdin_tests(("\n", None)), prelude="none")
        assert v.passed, v
        assert "blocked" in v.tests[0].output and "connected" not in v.tests[0].output
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):
            server.accept()  # nothing ever reached the listener


def test_secrets_of_the_parent_are_not_visible(sandbox, monkeypatch, tmp_path):
    token = "memdoor-secret-" + uuid.uuid4().hex
    monkeypatch.setenv("MEMDOOR_TEST_SECRET_KEY", token)
    monkeypatch.setenv("OPENAI_API_KEY", token)
    code = r"""
import os
found = []
for k, v in os.environ.items():
    found.append(k + "=" + v)
for pid in os.listdir("/proc"):
    for what in ("environ", "cmdline"):
        try:
            with open("/proc/%s/%s" % (pid, what), "rb") as f:
                found.append(f.read().decode("latin-1"))
        except OSError:
            pass
print(sorted(os.environ))
print("\n".join(found))
"""
    v = sandbox.run(code, stdin_tests(("\n", None)), prelude="none")
    assert v.passed, v
    out = v.tests[0].output
    assert token not in out
    names = eval(out.splitlines()[0])  # the candidate's environment: nothing inherited
    assert "MEMDOOR_TEST_SECRET_KEY" not in names and "OPENAI_API_KEY" not in names
    assert set(names) <= {
        "PATH",
        "HOME",
        "LC_CTYPE",
        "PWD",
        "LANG",
        "OMP_NUM_THREADS",
        "TMPDIR",
        "SHLVL",
        "_",
    }


def test_host_files_cannot_be_read_written_or_deleted(sandbox, tmp_path):
    victim_dir = tmp_path / "open-to-all"
    victim_dir.mkdir()
    victim_dir.chmod(0o777)
    victim = victim_dir / "victim.txt"
    victim.write_text("precious")
    victim.chmod(0o666)
    secret = "memdoor-file-secret-" + uuid.uuid4().hex
    readable = tmp_path / "readable.txt"
    readable.write_text(secret)
    readable.chmod(0o644)
    tmp_path.chmod(0o755)
    repo_file = Path(__file__)
    repo_text = repo_file.read_text()
    code = f"""
import os, shutil
report = []
for path in ({str(victim)!r}, {str(repo_file)!r}):
    try:
        os.remove(path)
        report.append("removed " + path)
    except OSError as e:
        report.append("keep " + type(e).__name__)
    try:
        with open(path, "w") as f:
            f.write("pwned")
        report.append("wrote " + path)
    except OSError as e:
        report.append("nowrite " + type(e).__name__)
for path in ({str(victim_dir / "new.txt")!r}, "/usr/memdoor-pwned", "/memdoor-pwned"):
    try:
        open(path, "w").write("x")
        report.append("created " + path)
    except OSError as e:
        report.append("nocreate " + type(e).__name__)
try:
    report.append(open({str(readable)!r}).read())
except OSError as e:
    report.append("noread " + type(e).__name__)
open("/tmp/own-file.txt", "w").write("fine")  # its own temporary directory is writable
report.append(open("/tmp/own-file.txt").read())
print("\\n".join(report))
"""
    v = sandbox.run(code, stdin_tests(("\n", None)), prelude="none")
    assert v.passed, v
    assert victim.read_text() == "precious"
    assert sorted(p.name for p in victim_dir.iterdir()) == ["victim.txt"]
    assert repo_file.read_text() == repo_text
    assert not Path("/usr/memdoor-pwned").exists() and not Path("/memdoor-pwned").exists()
    assert "fine" in v.tests[0].output
    assert secret not in v.tests[0].output  # host files are not even visible


def test_runs_as_an_unprivileged_user(sandbox):
    code = "import os\nprint(os.getuid(), os.geteuid(), os.getgid())"
    v = sandbox.run(code, stdin_tests(("\n", None)), prelude="none")
    assert v.passed, v
    uid, euid, gid = map(int, v.tests[0].output.split())
    assert uid != 0 and euid != 0 and gid != 0


def test_big_files_and_full_disks_are_refused(sandbox):
    code = """
import os
try:
    with open("/tmp/big", "wb") as f:
        for _ in range(1024):
            f.write(b"x" * (1 << 20))
    print("wrote 1 GiB")
except OSError as e:
    print("refused", type(e).__name__)
"""
    v = sandbox.run(code, stdin_tests(("\n", None)), prelude="none")
    assert v.status in ("passed", "runtime_error"), v
    if v.passed:
        assert "refused" in v.tests[0].output
    assert_healthy(sandbox)


def test_hostile_candidates_do_not_stop_grading_of_the_next_ones(quick_sandbox):
    from memdoor.core.problem import Problem
    from memdoor.judging.programs import grade_many

    problem = Problem(
        id="mul",
        statement="multiply",
        public_tests=stdin_tests(("6 7\n", "42\n")),
        hidden_tests=stdin_tests(("2 3\n", "6\n")),
        prelude="livecodebench",
    )
    good = "a, b = map(int, input().split())\nprint(a * b)"
    hostile = [
        "import posix, signal\nposix.kill(posix.getppid(), signal.SIGKILL)",
        "import posix\nwhile True:\n    try:\n        posix.fork()\n    except OSError:\n        pass",
        "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)",
        "import posix\nfor fd in range(64):\n    try:\n        posix.close(fd)\n    except OSError:\n        pass",
    ]
    jobs = []
    for bad in hostile:
        jobs += [(problem, bad), (problem, good)]
    verdicts = list(grade_many(jobs, quick_sandbox, workers=2))
    assert [v.passed for v in verdicts] == [False, True] * len(hostile)
