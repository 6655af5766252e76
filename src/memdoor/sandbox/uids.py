"""Leasing unprivileged uids to running candidates, and making sure nothing of a uid survives a run.

RLIMIT_NPROC counts the tasks of a uid system-wide, so each running candidate gets its own uid: a fork
storm in one cannot starve another. Leases are ``flock`` locks on one file per uid, so that several
Memdoor processes on one machine (a bench and a test run) never share a uid either.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from memdoor.core.errors import SandboxError


def lock_dirs(preferred: str) -> tuple[Path, Path]:
    """Where the sandbox keeps its own files (uid locks, the compiled harness, unshare's roots): the
    configured directory, else one in the temp directory."""
    return Path(preferred), Path(tempfile.gettempdir()) / "memdoor-sandbox-locks"


def private_dir(preferred: str, name: str) -> Path | None:
    """``<lock dir>/<name>``, created if missing, owned by us and writable by no one else (nobody can plant
    a file there); the first of :func:`lock_dirs` where that holds, or None."""
    for base in lock_dirs(preferred):
        folder = base / name
        try:
            folder.mkdir(mode=0o755, parents=True, exist_ok=True)
            st = folder.stat()
        except OSError:
            continue
        if st.st_uid == os.geteuid() and not st.st_mode & 0o022:
            return folder
    return None


def _lock_dir(preferred: str) -> Path:
    for candidate in lock_dirs(preferred):
        try:
            candidate.mkdir(mode=0o755, parents=True, exist_ok=True)
            probe = candidate / ".probe"
            probe.touch()
            return candidate
        except OSError:
            continue
    raise SandboxError(f"cannot create a lock directory for sandbox uids ({preferred})")


class Lease:
    """A uid held by one running candidate (or by a sandbox started ahead for the next one). ``clean`` says
    that every process of the uid is known gone, so the next holder can skip the sweep."""

    def __init__(self, uid: int, fd: int):
        self.uid = uid
        self.fd = fd  # the locked lock file; closing it releases the uid
        self.clean = False
        self.residue = False  # a process of the uid survived a sweep during the run


class UidPool:
    """Hands out uids ``base .. base+count-1`` one at a time, exclusive across threads and processes."""

    def __init__(self, base: int, count: int, lock_dir: str):
        self.base, self.count = base, count
        self.dir = _lock_dir(lock_dir)

    def acquire(self) -> Lease:
        """A free uid; blocks (polling) while every uid is busy. Give it back with :meth:`release`.

        The lock file holds ``clean`` when its last holder left no process behind; otherwise (a holder
        that crashed or killed a sandbox) the uid is swept before use.
        """
        delay = 0.005
        while True:
            for uid in range(self.base, self.base + self.count):
                fd = os.open(self.dir / f"uid-{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                try:
                    if os.pread(fd, 8, 0) != b"clean":
                        reap_uid(uid)
                    os.pwrite(fd, b"dirty", 0)
                except BaseException:
                    os.close(fd)
                    raise
                return Lease(uid, fd)
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    @staticmethod
    def release(lease: Lease) -> None:
        """Give the uid back, marked clean when its holder left nothing behind."""
        with contextlib.suppress(OSError):
            os.pwrite(lease.fd, b"clean" if lease.clean else b"dirty", 0)
        with contextlib.suppress(OSError):
            os.close(lease.fd)  # releases the lock

    @contextlib.contextmanager
    def lease(self) -> Iterator[Lease]:
        """A free uid for the duration of the ``with`` block (see :meth:`acquire`)."""
        held = self.acquire()
        try:
            yield held
        finally:
            self.release(held)


def pids_of_uid(uid: int) -> list[int]:
    """Host pids of the processes whose owner is ``uid`` (from /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
            except OSError:
                continue
    return found


def tasks_of_uid(uid: int) -> int:
    """Tasks (threads included, as RLIMIT_NPROC counts them) whose real uid is ``uid``."""
    total = 0
    for pid in pids_of_uid(uid):
        try:
            total += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return total


def reap_uid(uid: int, *, attempts: int = 20) -> bool:
    """Kill every process of ``uid`` (``kill(-1, SIGKILL)`` run as that uid). True when none is left.

    Only ever called for a sandbox uid, never for the uid Memdoor itself runs as.
    """
    if uid == os.geteuid() or uid == 0:
        return not any(_is_alive(pid) for pid in pids_of_uid(uid))
    for _ in range(attempts):
        alive = [pid for pid in pids_of_uid(uid) if _is_alive(pid)]
        if not alive:  # zombies are dead: they only wait for their parent to collect them
            return True
        subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "kill", "-KILL", "-1"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin"},
            check=False,
        )
        time.sleep(0.02)
    return not any(_is_alive(pid) for pid in pids_of_uid(uid))


def _is_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def kill_tree(proc: subprocess.Popen, *, grace_s: float = 5.0) -> None:
    """Kill a sandbox launched as ``proc``: its children first (the namespace's init, taking every process
    of the namespace with it), so that ``proc`` itself reaps them and exits; then ``proc`` if needed."""
    if proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                children = [int(p) for p in f.read().split()]
        except OSError:
            children = []
        for pid in children:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            proc.wait(grace_s if children else 0.05)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.kill()
        proc.wait()
