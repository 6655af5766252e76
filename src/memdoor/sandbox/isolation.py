"""The isolation tools: how to start the harness inside bubblewrap or inside ``unshare`` namespaces.

Both run the harness as pid 1 of a fresh pid namespace (when it exits or is killed, the kernel kills
every process the candidate started, double-forked daemons included), with no network, an empty
environment, a private /tmp as working directory, rlimits (set by the harness before any candidate
code runs) and, when Memdoor runs as root, an unprivileged uid leased per running candidate.
"""

from __future__ import annotations

import os
import shutil

from memdoor.errors import SandboxError
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.supervisor import Supervisor

# Directories that are world-writable on a usual Linux: hidden behind private tmpfs mounts (unshare).
_WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock")


def _hidden_by_tmpfs(path: str | None) -> bool:
    return path is None or any(path.startswith(d + "/") for d in _WORLD_WRITABLE)


# The few non-secret files of /etc that shared libraries need (numpy finds BLAS through alternatives).
_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


def _etc_binds() -> list[str]:
    return [arg for path in _ETC for arg in ("--ro-bind-try", path, path)]


def _drop_privileges(uid: int | None) -> list[str]:
    if uid is None:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


class BwrapSandbox(Supervisor):
    """bubblewrap: new user, pid, network, ipc, uts and mount namespaces; only /usr visible (read-only)."""

    name = "bwrap"

    def check_tools(self) -> None:
        if shutil.which("bwrap") is None:
            raise SandboxError(
                "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
            )
        if self.run_as_root and shutil.which("setpriv") is None:
            raise SandboxError("setpriv (util-linux) is not installed")

    def command(self, uid: int | None, fd: int) -> list[str]:
        c = self.config
        return [
            *_drop_privileges(uid),
            "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1",
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            *_etc_binds(),
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(c.tmp_mb << 20), "--tmpfs", "/tmp",
            "--chdir", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/tmp",
            *self._program(fd),
        ]  # fmt: skip

    def _program(self, fd: int) -> list[str]:
        if self.harness_file:
            return ["--ro-bind", self.harness_file, "/memdoor.pyc",
                    self.config.python, "-I", "-S", "/memdoor.pyc", str(fd)]  # fmt: skip
        return [self.config.python, "-I", "-S", "-c", self.harness, str(fd)]


class UnshareSandbox(Supervisor):
    """``unshare``: new pid, network, mount, ipc and uts namespaces (plus a user namespace when not root);
    private tmpfs over the world-writable directories; the rest of the file system is visible read-only
    by permissions only (the uid owns nothing there)."""

    name = "unshare"

    def check_tools(self) -> None:
        for tool in ("unshare", "setpriv", "mount"):
            if shutil.which(tool) is None:
                raise SandboxError(f"{tool} (util-linux) is not installed")

    def command(self, uid: int | None, fd: int) -> list[str]:
        c = self.config
        mounts = " && ".join(
            f"{{ [ ! -d {d} ] || [ -L {d} ] || mount -t tmpfs -o size={c.tmp_mb}m,mode=1777 tmpfs {d}; }}"
            for d in _WORLD_WRITABLE
        )
        drop = (
            f"setpriv --reuid={uid} --regid={uid} --clear-groups --inh-caps=-all --bounding-set=-all "
            "--no-new-privs"
            if uid is not None
            else "setpriv --inh-caps=-all --bounding-set=-all --no-new-privs"
        )
        if _hidden_by_tmpfs(self.harness_file):
            run, program = '-c "$0"', self.harness
        else:
            run, program = '"$0"', self.harness_file
        script = (
            f'{mounts} && cd /tmp && exec {drop} env -i PATH=/usr/bin HOME=/tmp {c.python} -I -S {run} "$@"'
        )
        ns = [
            "unshare",
            "--pid",
            "--net",
            "--mount",
            "--ipc",
            "--uts",
            "--fork",
            "--kill-child",
            "--mount-proc",
        ]
        if not self.run_as_root:
            ns.insert(1, "--map-root-user")
        return [*ns, "--", "/bin/sh", "-c", script, program, str(fd)]


def interpreter_ok(python: str) -> None:
    """The configured interpreter exists and is world-executable (the sandbox uid must run it)."""
    try:
        st = os.stat(python)
    except OSError as e:
        raise SandboxError(f"sandbox interpreter {python} not found") from e
    if not st.st_mode & 0o001:
        raise SandboxError(f"sandbox interpreter {python} is not executable by other users")


def make(config: SandboxConfig, kind: str) -> Supervisor:
    cls = {"bwrap": BwrapSandbox, "unshare": UnshareSandbox}[kind]
    return cls(config)
