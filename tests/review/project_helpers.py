"""Projects whose tests need what the user installed, for the test stage's end-to-end tests: a Python
repository importing a package only its virtualenv has (real ``venv``, real pip, a wheel built here), a
Node project needing a package in its ignored ``node_modules``, and a Rust crate built offline. Each is
a real git repository with a breaking change and a refactoring of one tested function, as diffs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from review_helpers import diff_of, git

RUST_TOOLCHAIN = Path("/opt/memdoor/rust/toolchain/bin")
"""The sandbox's Rust toolchain (scripts/install_rust.sh): standalone cargo and rustc."""


def shared_dir(base: Path) -> Path:
    """A directory the test command's unprivileged uid can reach (pytest's tmp_path is private)."""
    base.mkdir(mode=0o711, parents=True, exist_ok=True)
    os.chmod(base, 0o711)
    return base


def init_repo(root: Path, files: dict[str, str], ignore: str = "") -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.org")
    git(root, "config", "user.name", "t")
    if ignore:
        files = {**files, ".gitignore": ignore}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", *files)
    git(root, "commit", "-qm", "init")
    return root


def wheel(dest: Path, name: str, module: str) -> Path:
    """A pure-Python wheel of one package ``name`` whose ``__init__`` is ``module`` (pip installs it offline)."""
    path = dest / f"{name}-0.1-py3-none-any.whl"
    info = f"{name}-0.1.dist-info"
    files = {
        f"{name}/__init__.py": module,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: memdoor-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{f},,\n" for f in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as z:
        for f, text in {**files, f"{info}/RECORD": record}.items():
            z.writestr(f, text)
    return path


def base_python() -> str:
    """An interpreter to make the virtualenv from that every uid can reach (the system's, when there is one)."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def make_venv(where: Path) -> Path | None:
    """A virtualenv with pytest (from the configured package index) and ``tinymath`` (a wheel built here,
    installed offline: no other environment has it). None when pytest cannot be installed here."""
    venv = where / "venv"
    subprocess.run([base_python(), "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    got = subprocess.run([*pip, "pytest"], capture_output=True, text=True, timeout=600)
    if got.returncode != 0:
        return None
    whl = wheel(where, "tinymath", "def double(x):\n    return 2 * x\n")
    subprocess.run([*pip, "--no-index", "--no-deps", str(whl)], check=True, capture_output=True, timeout=300)
    return venv


PY_CALC = "from tinymath import double\n\n\ndef scale(xs):\n    return [double(x) for x in xs]\n"
PY_TESTS = (
    "from calc import scale\n\n\ndef test_scale():\n    assert scale([1, 2]) == [2, 4]\n\n\n"
    "def test_empty():\n    assert scale([]) == []\n"
)
PY_BROKEN = PY_CALC.replace("[double(x) for x in xs]", "[double(x) + 1 for x in xs]")
PY_REFACTORED = PY_CALC.replace("[double(x) for x in xs]", "list(map(double, xs))")

JS_CALC = "const { double } = require('tinylib');\n\nfunction scale(xs) {\n  return xs.map(double);\n}\n\nmodule.exports = { scale };\n"
JS_TESTS = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { scale } = require('../calc.js');\n\n"
    "test('scale doubles', () => { assert.deepStrictEqual(scale([1, 2]), [2, 4]); });\n"
    "test('scale of nothing', () => { assert.deepStrictEqual(scale([]), []); });\n"
)
JS_BROKEN = JS_CALC.replace("xs.map(double)", "xs.map((x) => double(x) + 1)")
JS_REFACTORED = JS_CALC.replace("xs.map(double)", "xs.map((x) => double(x))")

RS_LIB = (
    "pub fn scale(xs: &[i64]) -> Vec<i64> {\n    xs.iter().map(|x| x * 2).collect()\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
    "    #[test]\n    fn scales() {\n        assert_eq!(scale(&[1, 2]), vec![2, 4]);\n    }\n\n"
    "    #[test]\n    fn empty() {\n        assert_eq!(scale(&[]), Vec::<i64>::new());\n    }\n}\n"
)
RS_BROKEN = RS_LIB.replace("xs.iter().map(|x| x * 2)", "xs.iter().map(|x| x * 2 + 1)")
RS_REFACTORED = RS_LIB.replace("xs.iter().map(|x| x * 2)", "xs.iter().map(|x| x + x)")
RS_CARGO = '[package]\nname = "scaler"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'


def python_project(where: Path) -> tuple[Path, dict[str, str]]:
    repo = init_repo(where / "pyrepo", {"calc.py": PY_CALC, "test_calc.py": PY_TESTS}, ".venv/\n")
    return repo, {
        "broken": diff_of(repo, "calc.py", PY_BROKEN),
        "refactor": diff_of(repo, "calc.py", PY_REFACTORED),
    }


def node_project(where: Path) -> tuple[Path, dict[str, str]]:
    files = {"calc.js": JS_CALC, "test/calc.test.js": JS_TESTS,
             "package.json": json.dumps({"name": "scaler", "version": "1.0.0", "private": True})}  # fmt: skip
    repo = init_repo(where / "jsrepo", files, "node_modules/\n")
    lib = repo / "node_modules" / "tinylib"
    lib.mkdir(parents=True)
    (lib / "package.json").write_text(json.dumps({"name": "tinylib", "version": "1.0.0", "main": "index.js"}))
    (lib / "index.js").write_text("module.exports = { double: (x) => 2 * x };\n")
    return repo, {
        "broken": diff_of(repo, "calc.js", JS_BROKEN),
        "refactor": diff_of(repo, "calc.js", JS_REFACTORED),
    }


def rust_project(where: Path) -> tuple[Path, dict[str, str]]:
    repo = init_repo(where / "rsrepo", {"Cargo.toml": RS_CARGO, "src/lib.rs": RS_LIB}, "target/\n")
    done = subprocess.run(
        [str(RUST_TOOLCHAIN / "cargo"), "generate-lockfile", "--offline"],
        cwd=repo, capture_output=True, text=True, env={**os.environ, "CARGO_HOME": str(where / "cargo-home")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    git(repo, "add", "Cargo.lock")
    git(repo, "commit", "-qm", "lock")
    return repo, {
        "broken": diff_of(repo, "src/lib.rs", RS_BROKEN),
        "refactor": diff_of(repo, "src/lib.rs", RS_REFACTORED),
    }


def have_rust() -> bool:
    return (RUST_TOOLCHAIN / "cargo").exists() and shutil.which("cc") is not None
