"""Where the other languages' tools are, whether the sandbox's uid can use them, and their versions."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

RUST_ROOT = Path("/opt/memdoor/rust")  # made by scripts/install_rust.sh
RUST_CRATES = ("rand", "regex", "md5")  # HumanEval-X's dependencies, prebuilt in RUST_ROOT/deps
_NODE_PATH = "/usr/local/bin:/usr/bin:/bin:/opt/node/bin"


@dataclass(frozen=True)
class Tool:
    """A language's tool as the sandbox runs it. ``ro_paths``: host directories bound read-only into the
    sandbox (beyond /usr, which it always sees); ``problem``: why it cannot be used here ('' when it can)."""

    language: str
    path: str = ""
    version: str = ""
    ro_paths: tuple[str, ...] = ()
    problem: str = ""
    extern: dict[str, str] = field(default_factory=dict)  # Rust: crate name -> prebuilt rlib

    @property
    def usable(self) -> bool:
        return not self.problem


def _world_usable(path: Path) -> bool:
    """Every directory up to ``path`` is searchable and ``path`` is readable and executable by others."""
    try:
        real = path.resolve(strict=True)
        for parent in real.parents:
            if not os.stat(parent).st_mode & 0o001:
                return False
        return bool(os.stat(real).st_mode & 0o005 == 0o005)
    except OSError:
        return False


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""


def find_node(search_path: str = _NODE_PATH) -> Tool:
    """The machine's ``node`` (the first on ``search_path``); outside /usr its installation directory (the
    parent of its ``bin``) is bound read-only into the sandbox."""
    found = shutil.which("node", path=search_path)
    if found is None:
        return Tool("javascript", problem="node is not installed (Debian/Ubuntu: apt-get install nodejs)")
    real = Path(found).resolve()
    if not _world_usable(real):
        return Tool(
            "javascript", str(real), problem=f"{real} is not usable by the sandbox's unprivileged uid"
        )
    ro = () if real.is_relative_to("/usr") else (str(real.parent.parent),)
    version = _version([str(real), "--version"])
    if not version:
        return Tool("javascript", str(real), problem=f"{real} --version failed")
    return Tool("javascript", str(real), version, ro)


def find_rust(root: Path = RUST_ROOT) -> Tool:
    """The world-readable toolchain and prebuilt crates of scripts/install_rust.sh (rustup's own toolchain
    under /root cannot be read by the sandbox's uid)."""
    hint = "run scripts/install_rust.sh (as root)"
    toolchain = root / "toolchain" if (root / "toolchain").is_dir() else Path("/usr")
    rustc = toolchain / "bin" / "rustc"
    if not rustc.exists():
        return Tool("rust", problem=f"no rustc for the sandbox in {root} or /usr; {hint}")
    if not _world_usable(rustc):
        return Tool("rust", str(rustc), problem=f"{rustc} is not usable by the sandbox's unprivileged uid")
    extern = {}
    for crate in RUST_CRATES:
        rlibs = sorted((root / "deps").glob(f"lib{crate}-*.rlib"))
        if not rlibs:
            return Tool(
                "rust", str(rustc), problem=f"the {crate} crate is not prebuilt in {root}/deps; {hint}"
            )
        extern[crate] = str(rlibs[0])
    version = _version([str(rustc), "--version"])
    if not version:
        return Tool("rust", str(rustc), problem=f"{rustc} --version failed")
    ro = tuple(str(p) for p in ({toolchain, root / "deps"} - {Path("/usr")}))
    if shutil.which("cc", path="/usr/bin") is None:
        return Tool("rust", str(rustc), version, problem="no linker (cc) in /usr/bin: apt-get install gcc")
    return Tool("rust", str(rustc), version, tuple(sorted(ro)), extern=extern)
