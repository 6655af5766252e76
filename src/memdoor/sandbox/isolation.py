"""The isolation tools: how to start the harness inside bubblewrap or inside ``unshare`` namespaces.

Both run the harness as pid 1 of a fresh pid namespace (when it exits or is killed, the kernel kills
every process the candidate started, double-forked daemons included), with no network, an empty
environment, a private /tmp as working directory, rlimits (set by the harness before any candidate
code runs) and, when Memdoor runs as root, an unprivileged uid leased per running candidate.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil

from memdoor.core.errors import SandboxError
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.supervisor import TOOL_PATH as _TOOL_PATH
from memdoor.sandbox.supervisor import Supervisor
from memdoor.sandbox.uids import private_dir

# The few non-secret files of /etc that shared libraries need (numpy finds BLAS through alternatives).
_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


# The only devices (as unshare's root has); /dev/shm is a link to /tmp, so shared memory is in the one
# bounded writable place.
_DEVICES = ("null", "zero", "full", "random", "urandom")
_DEV_LINKS = (
    ("/proc/self/fd", "fd"),
    ("fd/0", "stdin"),
    ("fd/1", "stdout"),
    ("fd/2", "stderr"),
    ("/tmp", "shm"),
)


def _etc_binds() -> list[str]:
    return [arg for path in _ETC for arg in ("--ro-bind-try", path, path)]


def _dev_binds() -> list[str]:
    devices = [arg for d in _DEVICES for arg in ("--dev-bind", f"/dev/{d}", f"/dev/{d}")]
    return [*devices, *(arg for target, name in _DEV_LINKS for arg in ("--symlink", target, f"/dev/{name}"))]


def _drop_privileges(uid: int | None) -> list[str]:
    if uid is None:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


class BwrapSandbox(Supervisor):
    """bubblewrap: new user, pid, network, ipc, uts and mount namespaces; only /usr visible (read-only); the
    root (bwrap's own tmpfs, /dev included) read-only, so the private /tmp is the only writable place."""

    name = "bwrap"

    def check_tools(self) -> None:
        if shutil.which("bwrap", path=_TOOL_PATH) is None:
            raise SandboxError(
                "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
            )
        if self.run_as_root and shutil.which("setpriv", path=_TOOL_PATH) is None:
            raise SandboxError("setpriv (util-linux) is not installed")

    def command(self, uid: int | None, args: list[str]) -> list[str]:
        return [*self._base(uid), *self._program(args)]

    def exec_command(self, uid: int | None, argv: list[str], ro_paths: tuple[str, ...] = ()) -> list[str]:
        """``argv`` run directly in the same isolation (no harness), with the host directories ``ro_paths``
        visible read-only at the same place (a toolchain outside /usr): other languages' runners."""
        binds = [arg for path in ro_paths for arg in ("--ro-bind", path, path)]
        return [*self._base(uid), *binds, "--remount-ro", "/", *argv]

    def _base(self, uid: int | None) -> list[str]:
        c = self.config
        return [
            *_drop_privileges(uid),
            "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1",
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            *_etc_binds(),
            "--proc", "/proc", "--perms", "0755", "--dir", "/dev", *_dev_binds(),
            "--size", str(c.tmp_mb << 20), "--tmpfs", "/tmp",
            "--chdir", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/tmp",
        ]  # fmt: skip

    def _program(self, args: list[str]) -> list[str]:
        ro_root = ["--remount-ro", "/"]  # after every mount point is made: / and /dev stay as they are
        if self.harness_file:
            return ["--ro-bind", self.harness_file, "/memdoor.pyc", *ro_root,
                    self.config.python, "-I", "-S", "/memdoor.pyc", *args]  # fmt: skip
        return [*ro_root, self.config.python, "-I", "-S", "-c", self.harness, *args]


class UnshareSandbox(Supervisor):
    """``unshare`` + ``chroot``: new pid, network, mount, ipc and uts namespaces (plus a user namespace when
    not root), and a root file system built like bubblewrap's: a read-only tmpfs holding /usr (read-only),
    a private /tmp, a fresh /proc, the harmless devices and the few /etc files shared libraries need."""

    name = "unshare"

    def check_tools(self) -> None:
        for tool in ("unshare", "setpriv", "mount", "chroot", "env"):
            if shutil.which(tool, path=_TOOL_PATH) is None:
                raise SandboxError(f"{tool} is not installed (util-linux / coreutils)")
        if self.root_dir is None:
            raise SandboxError("no private directory to build the sandbox's root file system in")

    @functools.cached_property
    def root_dir(self) -> str | None:
        """An empty directory owned by us: each sandbox mounts its own root there, in its own mount namespace."""
        folder = private_dir(self.config.lock_dir, "root")
        return str(folder) if folder is not None else None

    def command(self, uid: int | None, args: list[str]) -> list[str]:
        return self._command(uid, args, None, ())

    def exec_command(self, uid: int | None, argv: list[str], ro_paths: tuple[str, ...] = ()) -> list[str]:
        """``argv`` run directly in the same isolation (no harness), with the host directories ``ro_paths``
        visible read-only at the same place: other languages' runners."""
        return self._command(uid, [], argv, ro_paths)

    def _command(
        self, uid: int | None, args: list[str], argv: list[str] | None, ro_paths: tuple[str, ...]
    ) -> list[str]:
        c = self.config
        steps = [
            "set -e",
            'mount -t tmpfs -o size=1m,mode=755 tmpfs "$R"',
            'cd "$R"',
            "mkdir usr tmp proc dev etc",
            "mount -o bind,ro /usr usr",
            "ln -s usr/lib lib; ln -s usr/lib64 lib64; ln -s usr/bin bin; ln -s usr/sbin sbin",
            f"mount -t tmpfs -o size={c.tmp_mb}m,mode=1777,nosuid,nodev tmpfs tmp",
            "mount -t proc -o nosuid,nodev,noexec proc proc",
            f"for d in {' '.join(_DEVICES)}; do touch dev/$d; mount -o bind /dev/$d dev/$d; done",
            *(f"ln -s {target} dev/{name}" for target, name in _DEV_LINKS),
            *(
                f"if [ -d {e} ]; then mkdir -p .{e}; mount -o bind,ro {e} .{e}; "
                f"elif [ -f {e} ]; then touch .{e}; mount -o bind,ro {e} .{e}; fi"
                for e in _ETC
            ),
        ]
        steps += [f"mkdir -p .{p}; mount -o bind,ro {shlex.quote(p)} .{shlex.quote(p)}" for p in ro_paths]
        if argv is not None:
            run = ""
        elif self.harness_file:
            steps.append('touch memdoor.pyc; mount -o bind,ro "$H" memdoor.pyc')
            run = "/memdoor.pyc"
        else:
            run = '-c "$H"'
        # Read-only root (per-mount flag; a user namespace may refuse the superblock remount: 1 MiB tmpfs).
        steps.append(
            'mount -o remount,bind,ro "$R" 2>/dev/null || mount -o remount,ro "$R" 2>/dev/null || true'
        )
        drop = (
            f"/usr/bin/setpriv --reuid={uid} --regid={uid} --clear-groups"
            if uid is not None
            else "/usr/bin/setpriv"
        )
        program = f"{c.python} -I -S {run}" if argv is None else shlex.join(argv)
        steps.append(
            f'exec chroot "$R" {drop} --inh-caps=-all --bounding-set=-all --no-new-privs '
            f'/usr/bin/env -i -C /tmp PATH=/usr/bin HOME=/tmp {program} "$@"'
        )
        ns = ["unshare", "--pid", "--net", "--mount", "--ipc", "--uts", "--fork", "--kill-child"]
        if not self.run_as_root:
            ns.insert(1, "--map-root-user")
        env_script = f'R={shlex.quote(self.root_dir or "")}; H="$0"; ' + "; ".join(steps[1:])
        return [*ns, "--", "/bin/sh", "-ec", env_script, self.harness_file or self.harness, *args]


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
