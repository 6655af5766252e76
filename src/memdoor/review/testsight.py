"""What the review's test command sees besides ``/usr`` and its copy: the user's tools, read-only.

A repository's tests run with what the user installed: the interpreter and environment the command's
first word resolves to on the user's ``PATH`` (an active virtualenv, ``VIRTUAL_ENV``, ``CONDA_PREFIX``,
the interpreter's own prefix and, for a virtualenv, the prefix of the interpreter it was made from),
the user's Python site-packages (``~/.local/lib``), Node's global modules, the cargo home (its ``bin``,
``registry`` and ``git``: what an offline build reads, never its credentials) and rustup's toolchains,
the checkout's own ``node_modules`` (ignored by git, so not in the copy: only a real directory, never
a link, that git does not track), and every ``--test-path DIR``.
Each is bound **read-only at the same path** (so the links inside a virtualenv keep working); ``PATH``
inside is the user's, keeping only the entries that are visible there; the environment holds ``PATH``,
``HOME`` (the private ``/tmp``), ``CARGO_HOME``/``RUSTUP_HOME`` when those are bound (locations, not
secrets) and the variables the user names (``--test-env NAME``), nothing else.

Never bound: ``/`` or the user's home directory as a whole, a directory holding credentials (``SECRETS``:
then only the program's own ``bin`` is), the whole prefix of a program under the home directory
(``~/.local`` of ``pip install --user``, next to ``~/.local/share``: only its ``bin`` and ``lib``/``lib64``
are, unless the prefix is a virtualenv), anything under ``/usr`` (already visible),
``/proc``, ``/sys``, ``/dev``, ``/tmp`` itself, a path that does not exist, or a path in the checkout
that a link git tracks leads out of (the change under review writes those: a ``.venv`` or
``node_modules`` link to a host directory would show that directory; ``node_modules`` is bound only
as a real directory). Binds are opened here
(``O_PATH``) and handed to bubblewrap as file descriptors, so a toolchain under a private home
(``/root``) is visible to the unprivileged uid the command runs as without opening that home.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.review.repo import git

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64")
"""Already visible in the sandbox: their ``PATH`` entries are kept, never bound again."""
_NEVER = ("/proc", "/sys", "/dev")
HOME_INSIDE = "/tmp"
_OUT = "a link the checkout's git tracks leads out of the checkout"
_CARGO_PARTS = ("bin", "registry", "git")
SECRETS = ("credentials", "credentials.toml", ".netrc", ".pypirc", ".npmrc", ".git-credentials", ".ssh", ".aws",
           ".docker", ".gnupg", ".env")  # fmt: skip
"""Names of files that hold credentials: a directory holding one is never bound whole."""


class Bind(BaseModel):
    """One host directory bound read-only into the sandbox."""

    source: str = Field(description="Host path (absolute, links resolved).")
    dest: str = Field(description="Path inside the sandbox (the same path, unless noted).")
    why: str = Field(
        description="What it is: virtualenv, interpreter, node modules, cargo home, --test-path."
    )
    optional: bool = Field(
        default=False,
        description="Offered in case the tests need it (site-packages, Node's globals, the cargo and rustup "
        "homes): when it cannot be shown, nothing is said.",
    )


class Sight(BaseModel):
    """The test command's view: binds, ``PATH`` and environment."""

    binds: list[Bind] = Field(default_factory=list)
    path: str = Field(
        default="/usr/bin:/bin", description="PATH inside: the user's, filtered to what is visible."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Variables besides PATH and HOME.")
    hidden: list[str] = Field(
        default_factory=list, description="What was asked for and is not visible, with the reason."
    )

    def visible(self, path: str) -> bool:
        """Whether ``path`` (absolute) is visible inside at the same path."""
        return _under(path, SYSTEM) or _under(path, [b.dest for b in self.binds if b.dest == b.source])


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def first_word(command: str) -> str | None:
    """The program a shell command starts with (after ``NAME=value`` assignments and ``env``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for w in words:
        if "=" in w.split("/")[0] or w == "env":
            continue
        return w
    return None


def _prefix(program: Path) -> Path | None:
    """``/opt/x`` for ``/opt/x/bin/prog``; None when the program is not in a ``bin`` directory."""
    return program.parent.parent if program.parent.name == "bin" else None


def _venv_home(prefix: Path) -> Path | None:
    """The prefix of the interpreter a virtualenv was made from (its ``pyvenv.cfg`` ``home``)."""
    cfg = prefix / "pyvenv.cfg"
    try:
        lines = cfg.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return _prefix(Path(value.strip()) / "x")
    return None


def _tracked(checkout: Path, rel: str) -> bool:
    """Whether git tracks ``rel`` (or anything under it) in ``checkout``; True when git cannot say."""
    done = git(["ls-files", "-z", "--cached", "--", f":(literal){rel}"], checkout)
    return done.returncode != 0 or bool(done.stdout)


def _leaves(path: str, checkout: Path | None) -> bool:
    """Whether ``path`` is in ``checkout`` and resolves out of it through a link git tracks: one the change
    under review may have written (a link of the user's own, untracked, is theirs to follow)."""
    if checkout is None:
        return False
    top, given = os.path.realpath(checkout), os.path.abspath(path)
    root = next((r for r in (os.path.abspath(checkout), top) if _under(given, [r])), None)
    if root is None or _under(os.path.realpath(given), [top]):
        return False
    at = root
    for part in os.path.relpath(given, root).split(os.sep):
        at = os.path.join(at, part)
        if os.path.islink(at):
            return _tracked(checkout, os.path.relpath(at, root))
    return True  # out of the checkout without a link on the way: never expected, never shown


def checkout_modules(checkout: Path) -> Path | None:
    """The checkout's own ``node_modules`` when it is a real directory (``lstat``: never a link, which
    the change may have written to show a host directory), in the checkout, and not tracked by git (a
    tracked one is in the copy already, and the base's may differ); None otherwise, and when git cannot
    say."""
    modules = checkout / "node_modules"
    try:
        if not stat.S_ISDIR(os.lstat(modules).st_mode):
            return None
    except OSError:
        return None
    inside = _under(os.path.realpath(modules), [os.path.realpath(checkout)])
    return modules if inside and not _tracked(checkout, "node_modules") else None


def _absolute(path: str) -> str:
    """A ``PATH`` with its absolute entries only (a relative one would look in the checkout)."""
    return ":".join(d for d in path.split(":") if d.startswith("/"))


class _Builder:
    def __init__(self, home: str | None, checkout: Path | None = None):
        self.binds: list[Bind] = []
        self.hidden: list[str] = []
        self.home = os.path.realpath(home) if home else None
        self.checkout = checkout

    def add(
        self,
        path: str | Path | None,
        why: str,
        dest: str | None = None,
        *,
        named: bool = False,
        optional: bool = False,
    ) -> bool:
        """Bind ``path`` (read-only). ``named``: the user asked for it, so a refusal is noted."""
        if path is None:
            return False
        real = os.path.realpath(path)
        reason = None
        if not os.path.isdir(real):
            reason = "not a directory"
        elif real == "/" or (self.home is not None and _under(self.home, [real])):
            reason = "the whole home directory (or /) is never shown"
        elif _leaves(str(path), self.checkout):
            reason = _OUT
        elif any(os.path.lexists(os.path.join(real, name)) for name in SECRETS):
            reason = "it holds credentials"
        elif dest is None and _under(real, SYSTEM):
            return False  # already visible
        elif _under(real, _NEVER) or real == "/tmp" or _under(real, ["/tmp/repo"]):
            reason = "a system directory of the sandbox"
        if reason is not None:
            if named:
                self.hidden.append(f"{path} ({why}): {reason}")
            return False
        dest = dest or real
        if any(b.dest == dest or (b.dest == b.source == dest) for b in self.binds):
            return True
        self.binds.append(Bind(source=real, dest=dest, why=why, optional=optional))
        return True

    def program(self, found: str) -> None:
        """The program's prefix, the prefix of what it links to, and a virtualenv's base interpreter.

        Under the home directory a prefix that is not a virtualenv (``~/.local``, ``~/.nvm/versions/…``)
        is shown as its ``bin`` and ``lib``/``lib64`` only: the rest of it is the user's data. Nothing when
        it is reached through a link of the checkout that git tracks (the change's, :func:`_leaves`)."""
        if _leaves(found, self.checkout):
            self.hidden.append(f"{found} (the test command's program): {_OUT}")
            return
        for p in (Path(found), Path(os.path.realpath(found))):
            prefix = _prefix(p)
            if prefix is None:
                self.add(p.parent, "the test command's program")
                continue
            if self._user_prefix(prefix):
                self.add(p.parent, "the test command's program")
                for lib in ("lib", "lib64"):
                    self.add(prefix / lib, "the libraries of the test command's program", optional=True)
            elif not self.add(prefix, "the test command's program"):  # e.g. a cargo home: its bin only
                self.add(p.parent, "the test command's program")
            self.add(_venv_home(prefix), "the interpreter of its virtualenv")

    def _user_prefix(self, prefix: Path) -> bool:
        """Whether ``prefix`` is below the home directory and not a virtualenv (made to be shown whole)."""
        real = os.path.realpath(prefix)
        below = self.home is not None and real != self.home and _under(real, [self.home])
        return below and not (prefix / "pyvenv.cfg").is_file()


def sight_for(
    command: str,
    environ: Mapping[str, str],
    *,
    test_paths: list[Path] | tuple[Path, ...] = (),
    test_env: list[str] | tuple[str, ...] = (),
    checkout: Path | None = None,
    copy: str = "/tmp/repo",
) -> Sight:
    """What ``command`` sees when the user (environment ``environ``) reviews the checkout ``checkout``."""
    user_path = environ.get("PATH", "/usr/bin:/bin")
    b = _Builder(environ.get("HOME"), checkout)
    b.add(environ.get("VIRTUAL_ENV"), "the active virtualenv (VIRTUAL_ENV)", named=True)
    b.add(environ.get("CONDA_PREFIX"), "the active conda environment (CONDA_PREFIX)", named=True)
    word = first_word(command)
    found = None  # a bare name is looked up on the user's PATH; a relative path is a file of the copy
    if word and "/" not in word:
        found = shutil.which(word, path=_absolute(user_path))
    elif word and word.startswith("/"):
        found = word
    if found and os.path.exists(found):
        b.program(found)
    node = shutil.which("node", path=_absolute(user_path))
    if node:
        prefix = _prefix(Path(os.path.realpath(node)))
        if prefix is not None and (prefix / "lib" / "node_modules").is_dir():
            b.add(prefix / "lib" / "node_modules", "Node's global modules", optional=True)
    home = environ.get("HOME")
    site = Path(home) / ".local" / "lib" if home else None
    if site is not None and b.add(site, "the user's Python site-packages", optional=True):
        b.add(site, "the user's Python site-packages", f"{HOME_INSIDE}/.local/lib", optional=True)  # in HOME
    env: dict[str, str] = {}
    cargo = environ.get("CARGO_HOME") or (str(Path(home) / ".cargo") if home else None)
    if cargo and os.path.isdir(cargo):
        parts = [
            b.add(Path(cargo) / p, "the cargo home (offline builds)", optional=True) for p in _CARGO_PARTS
        ]
        if any(parts):
            env["CARGO_HOME"] = os.path.realpath(cargo)
            env["CARGO_NET_OFFLINE"] = "true"
    rustup = environ.get("RUSTUP_HOME") or (str(Path(home) / ".rustup") if home else None)
    if rustup and b.add(rustup, "rustup's toolchains", optional=True):
        env["RUSTUP_HOME"] = os.path.realpath(rustup)
        if environ.get("RUSTUP_TOOLCHAIN"):
            env["RUSTUP_TOOLCHAIN"] = environ["RUSTUP_TOOLCHAIN"]
    modules = checkout_modules(checkout) if checkout is not None else None
    if modules is not None:
        b.add(modules, "the checkout's node_modules", f"{copy}/node_modules")
    for p in test_paths:
        b.add(p, "--test-path", named=True)
    for name in test_env:
        if name in environ:
            env[name] = environ[name]
        else:
            b.hidden.append(f"--test-env {name}: not set")
    sight = Sight(binds=b.binds, env=env, hidden=b.hidden)
    kept = [d for d in user_path.split(":") if d.startswith("/") and sight.visible(os.path.realpath(d))]
    kept += [d for d in ("/usr/bin", "/bin") if d not in kept]
    sight.path = ":".join(dict.fromkeys(kept))
    return sight
