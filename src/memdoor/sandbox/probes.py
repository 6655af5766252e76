"""Checking the sandbox's isolation by running probe programs in it (what ``memdoor doctor`` reports).

Every property is checked by a candidate program that tries to break it, not by reading the configuration:
the uid it runs as, its environment (against a canary variable set in the grader's own environment), the
network (a listener the probe opens on 127.0.0.1 — the only address ever used), the host file system,
the rlimits it actually has, and that memory, process and wall-clock limits are enforced and that nothing
the program started survives it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memdoor.core.errors import SandboxError
from memdoor.core.problem import TestCase
from memdoor.core.protocols import Sandbox
from memdoor.core.verdict import Verdict
from memdoor.sandbox import check_probes, resource_probes
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.open import open_sandbox
from memdoor.sandbox.probe_kit import Check, DoctorReport, json_line, record

_CANARY = "MEMDOOR_DOCTOR_CANARY_KEY"
_ENV_ALLOWED = {"PATH", "HOME", "PWD", "LC_CTYPE", "LANG", "TMPDIR", "OMP_NUM_THREADS", "SHLVL", "_"}


@contextlib.contextmanager
def _canary_env() -> Iterator[str]:
    """A secret-looking variable in the grader's own environment for the duration of the probe."""
    name, value = _CANARY, "canary-" + secrets.token_hex(16)
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield value
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _host_ids(sb: Sandbox, config: SandboxConfig) -> tuple[list[int], Verdict] | None:
    """(real, effective uid) of a candidate process as the HOST sees them, and the probe's verdict.

    A uid inside user namespaces (bwrap nests two) says nothing about the host, so the probe starts a
    ``sleep`` with a unique argument and waits for it; the grader finds it in the host's /proc, reads its
    owner, then ends that sleeper (by pid) so the probe finishes."""
    marker = f"{900000 + secrets.randbelow(99999)}.{secrets.randbelow(10**6):06d}"
    code = f"""
import posix
pid = posix.fork()
if pid == 0:
    posix.execv("/usr/bin/sleep", ["sleep", "{marker}"])
posix.waitpid(pid, 0)
print("done")
"""
    found: list[int] | None = None
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(record, sb, code)
        deadline = time.monotonic() + config.timeout_s + 30
        while found is None and not future.done() and time.monotonic() < deadline:
            for pid in _processes_with(marker):
                with contextlib.suppress(OSError, ValueError, IndexError):
                    with open(f"/proc/{pid}/status") as f:
                        line = next(x for x in f if x.startswith("Uid:"))
                    found = [int(x) for x in line.split()[1:3]]
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        verdict, _ = future.result()
    return (found, verdict) if found is not None else None


def check_uid(sb: Sandbox, config: SandboxConfig) -> Check:
    code = """
import os, json
caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff:")]
print(json.dumps({"ids": [os.getuid(), os.geteuid(), os.getgid()], "caps": int(caps[0], 16) if caps else -1}))
"""
    v, out = record(sb, code)
    got = json_line(out)
    host = _host_ids(sb, config)
    if not got or host is None:
        return Check(name="unprivileged uid", status="fail", detail=f"probe failed: {v.status}")
    uid = got["ids"][0]
    host_uid = host[0][1]
    where = f"uid {uid}" if host_uid == uid else f"uid {uid} in its user namespace, host uid {host_uid}"
    reasons = []
    if 0 in host[0]:
        reasons.append("runs as root on the host")
    if got.get("caps") != 0:
        reasons.append("has capabilities")
    if reasons:
        return Check(name="unprivileged uid", status="fail", detail=f"{where}: {' and '.join(reasons)}")
    if os.geteuid() != 0:
        return Check(
            name="unprivileged uid",
            status="warn",
            detail=f"{where}, no capabilities; it is the grader's own uid (Memdoor is not root), so candidates "
            "share its process count",
        )
    return Check(
        name="unprivileged uid",
        status="ok",
        detail=f"{where}, no capabilities; one uid per running candidate",
    )


def check_environment(sb: Sandbox, config: SandboxConfig) -> Check:
    # The probe looks for the canary's NAME (not secret) in every environment and command line it can read.
    code = f"""
import os, json
hits = [k for k in os.environ if k == {_CANARY!r}]
for pid in os.listdir("/proc"):
    for what in ("environ", "cmdline"):
        try:
            with open("/proc/%s/%s" % (pid, what), "rb") as f:
                if {_CANARY!r}.encode() in f.read():
                    hits.append(pid + "/" + what)
        except OSError:
            pass
print(json.dumps({{"names": sorted(os.environ), "hits": hits}}))
"""
    with _canary_env() as canary:
        v, out = record(sb, code)
    got = json_line(out)
    if not got:
        return Check(name="clean environment", status="fail", detail=f"probe failed: {v.status}")
    if got.get("hits") or canary in out:
        return Check(name="clean environment", status="fail", detail="a variable of the grader is visible")
    extra = sorted(set(got.get("names", [])) - _ENV_ALLOWED)
    if extra:
        return Check(
            name="clean environment", status="warn", detail=f"unexpected variables: {', '.join(extra)}"
        )
    return Check(name="clean environment", status="ok", detail=f"only {', '.join(got['names']) or 'nothing'}")


def check_network(sb: Sandbox, config: SandboxConfig) -> Check:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.2)
        port = server.getsockname()[1]
        code = f"""
import socket, os, json
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    reached = True
except OSError:
    reached = False
try:  # /proc/net/dev shows the interfaces of the reader's network namespace (/sys may be the host's)
    nets = sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:])
except OSError:
    nets = []
print(json.dumps({{"reached": reached, "interfaces": nets}}))
"""
        v, out = record(sb, code)
        accepted = False
        with contextlib.suppress(TimeoutError, OSError):
            server.accept()[0].close()
            accepted = True
    got = json_line(out)
    if not got:
        return Check(name="no network", status="fail", detail=f"probe failed: {v.status}")
    if got.get("reached") or accepted:
        return Check(name="no network", status="fail", detail="reached a listener of the host on 127.0.0.1")
    other = [n for n in got.get("interfaces", []) if n != "lo"]
    if other:
        return Check(
            name="no network", status="fail", detail=f"network interfaces visible: {', '.join(other)}"
        )
    return Check(
        name="no network", status="ok", detail="host loopback unreachable; only 'lo' in the namespace"
    )


def check_files(sb: Sandbox, config: SandboxConfig) -> Check:
    with tempfile.TemporaryDirectory(prefix="memdoor-doctor-") as tmp:
        base = Path(tmp)
        base.chmod(0o755)
        open_dir = base / "world-writable"
        open_dir.mkdir()
        open_dir.chmod(0o777)
        readable = base / "readable.txt"
        canary = "canary-" + secrets.token_hex(16)
        usr_probe = Path(f"/usr/memdoor-doctor-probe-{secrets.token_hex(8)}")
        readable.write_text(canary)
        readable.chmod(0o644)
        code = f"""
import json
r = {{}}
for name, path in (("host_dir", {str(open_dir / "x")!r}), ("usr", {str(usr_probe)!r})):
    try:
        open(path, "w").write("x")
        r[name] = "written"
    except OSError as e:
        r[name] = type(e).__name__
try:
    r["read"] = open({str(readable)!r}).read()
except OSError as e:
    r["read"] = type(e).__name__
try:
    r["etc"] = len(open("/etc/passwd").read()) > 0
except OSError:
    r["etc"] = False
open("/tmp/own", "w").write("ok")
r["own_tmp"] = open("/tmp/own").read()
print(json.dumps(r))
"""
        v, out = record(sb, code)
        written = any(open_dir.iterdir()) or usr_probe.exists()
        if usr_probe.exists():  # a sandbox that let it through: leave nothing behind
            usr_probe.unlink()
    got = json_line(out)
    if not got:
        return Check(name="file system", status="fail", detail=f"probe failed: {v.status}")
    if written:
        return Check(name="file system", status="fail", detail="wrote into a host directory")
    if got.get("own_tmp") != "ok":
        return Check(name="file system", status="fail", detail="its own temporary directory is not writable")
    if got.get("read") == canary:
        return Check(
            name="file system", status="fail", detail="read a file the grader created in its temp dir"
        )
    if got.get("etc"):
        return Check(
            name="file system",
            status="warn",
            detail="host files readable by every user (e.g. /etc/passwd) are readable by candidates; "
            "writes are blocked and temp directories hidden",
        )
    return Check(name="file system", status="ok", detail="host files invisible; private writable /tmp")


def _limits(text: str) -> dict[str, str]:
    """Soft limits from /proc/self/limits, by name (``Max address space`` -> ``2147483648``)."""
    found = {}
    for line in text.splitlines()[1:]:
        name, rest = line[:26].strip(), line[26:].split()
        if rest:
            found[name] = rest[0]
    return found


def check_limits(sb: Sandbox, config: SandboxConfig) -> Check:
    v, out = record(sb, "print(open('/proc/self/limits').read())")
    limits = _limits(out)
    if not limits:
        return Check(name="rlimits", status="fail", detail=f"probe failed: {v.status}")
    want = {
        "Max address space": str(config.memory_mb << 20),
        "Max file size": str(config.max_file_mb << 20),
        "Max processes": str(config.max_processes),
    }
    wrong = [f"{k} is {limits.get(k)} (want {w})" for k, w in want.items() if limits.get(k) != w]
    if limits.get("Max cpu time") in (None, "unlimited"):
        wrong.append("no CPU time limit")
    if wrong:
        nproc_only = len(wrong) == 1 and wrong[0].startswith("Max processes") and os.geteuid() != 0
        return Check(name="rlimits", status="warn" if nproc_only else "fail", detail="; ".join(wrong))
    shown = ", ".join(f"{k.removeprefix('Max ')} {limits[k]}" for k in [*want, "Max cpu time"])
    return Check(name="rlimits", status="ok", detail=shown)


def check_memory(sb: Sandbox, config: SandboxConfig) -> Check:
    v = sb.run(
        f"x = bytearray({(config.memory_mb + 256) << 20})\nprint(len(x))",
        [TestCase(kind="stdin", input="\n", output="0")],
        prelude="none",
    )
    if v.status == "memory_limit":
        return Check(
            name="memory limit", status="ok", detail=f"{config.memory_mb + 256} MiB refused: memory_limit"
        )
    return Check(name="memory limit", status="fail", detail=f"allocating over the limit gave {v.status}")


def check_processes(sb: Sandbox, config: SandboxConfig) -> Check:
    code = """
import posix, time, json
n = 0
try:
    for _ in range(5000):
        if posix.fork() == 0:
            time.sleep(20)
            posix._exit(0)
        n += 1
except OSError:
    pass
print(json.dumps({"forked": n}))
"""
    v, out = record(sb, code)
    forked = json_line(out).get("forked")
    if forked is None:
        return Check(name="process limit", status="fail", detail=f"probe failed: {v.status}")
    if forked >= 5000:
        return Check(name="process limit", status="fail", detail="forked 5000 processes unhindered")
    return Check(name="process limit", status="ok", detail=f"fork refused after {forked} processes")


def _processes_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
    return found


def check_kill(sb: Sandbox, config: SandboxConfig) -> Check:
    """An endless program that left a double-forked daemon: time_limit, and no process survives."""
    marker = f"{900000 + secrets.randbelow(99999)}.{secrets.randbelow(10**6):06d}"
    code = f"""
import posix
if posix.fork() == 0:
    posix.setsid()
    if posix.fork() == 0:
        posix.execv("/usr/bin/sleep", ["sleep", "{marker}"])
    posix._exit(0)
while True:
    pass
"""
    quick_config = config.model_copy(update={"timeout_s": 1.0, "isolation": sb.name, "prestart": False})
    with open_sandbox(quick_config) as quick:
        v = quick.run(code, [TestCase(kind="stdin", input="\n", output="0")], prelude="none")
    deadline = time.monotonic() + 10
    while (left := _processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if left:
        return Check(name="wall-clock kill", status="fail", detail=f"a daemon survived (host pids {left})")
    if v.status != "time_limit":
        return Check(name="wall-clock kill", status="fail", detail=f"an endless program got {v.status}")
    return Check(name="wall-clock kill", status="ok", detail="endless program stopped; its daemon reaped")


PROBES: list[Callable[[Sandbox, SandboxConfig], Check]] = [
    check_uid,
    check_environment,
    check_network,
    check_files,
    check_limits,
    check_memory,
    check_processes,
    check_kill,
]


def diagnose(config: SandboxConfig | None = None) -> DoctorReport:
    """Open the sandbox ``config`` describes and run every probe in it. Never raises for a weak sandbox:
    a tool that does not work at all is a failed ``isolation`` check."""
    config = config or SandboxConfig()
    report = DoctorReport(isolation="none", python=config.python, grader_is_root=os.geteuid() == 0)
    try:
        sb = open_sandbox(config)
    except SandboxError as e:
        report.checks.append(Check(name="isolation", status="fail", detail=str(e)))
        return report
    with sb:
        _probe_all(sb, config, report)
    return report


def _probe_all(sb: Sandbox, config: SandboxConfig, report: DoctorReport) -> None:
    report.isolation = sb.name
    tools = {
        "bwrap": "bubblewrap: user, pid, network, ipc, uts and mount namespaces; only /usr visible",
        "unshare": "unshare (no bubblewrap): pid, network, ipc, uts and mount namespaces; chroot to a minimal root",
    }
    report.checks.append(Check(name="isolation", status="ok", detail=tools.get(sb.name, sb.name)))
    report.limits = resource_probes.enforcement(sb, config)
    for probe in [*PROBES, *resource_probes.PROBES, *check_probes.PROBES]:
        try:
            report.checks.append(probe(sb, config))
        except SandboxError as e:
            report.checks.append(
                Check(name=probe.__name__.removeprefix("check_"), status="fail", detail=str(e))
            )
