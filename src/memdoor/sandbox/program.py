"""The harness program as the sandbox gets it: a copy precompiled by the sandbox interpreter."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.uids import private_dir


def compile_harness(config: SandboxConfig, source: str) -> str | None:
    """The harness compiled once by the sandbox interpreter into a world-readable .pyc (saves compiling it
    for every candidate). None when no suitable directory exists: the source is then passed with ``-c``."""
    try:
        st = os.stat(config.python)
        key = f"{config.python}:{st.st_mtime_ns}:{st.st_size}:".encode() + source.encode()
        folder = private_dir(config.lock_dir, "harness")  # nobody else can plant a harness there
        if folder is not None:
            target = folder / f"harness-{hashlib.sha256(key).hexdigest()[:20]}.pyc"
            if target.exists():
                return str(target)
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                src, pyc = Path(tmp) / "harness.py", Path(tmp) / "harness.pyc"
                src.write_text(source, encoding="utf-8")
                subprocess.run(
                    [config.python, "-I", "-S", "-c", "import py_compile, sys; "
                     "py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", str(src), str(pyc)],
                    check=True, capture_output=True, timeout=60, env={"PATH": "/usr/bin:/bin"},
                )  # fmt: skip
                pyc.chmod(0o644)
                os.replace(pyc, target)
            return str(target)
    except (OSError, subprocess.SubprocessError):
        return None
    return None
