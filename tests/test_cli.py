"""``memdoor --version`` and the packaging metadata it reads (issue 17 item 7)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import memdoor
from memdoor.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_version_flag_prints_the_installed_version():
    installed = importlib.metadata.version("memdoor")
    memdoor_script = Path(sys.executable).with_name("memdoor")
    out = subprocess.run([str(memdoor_script), "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"memdoor {installed}\n"
    assert out.stderr == ""


def test_version_flag_returns_zero_from_main(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"memdoor {importlib.metadata.version('memdoor')}"


def test_one_version_source_and_an_spdx_licence():
    """The metadata's version is the package's ``__version__`` (pyproject reads it), and the licence is
    an SPDX expression (a TOML table makes setuptools >= 77 warn at every install), which needs
    setuptools >= 77 to build."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert importlib.metadata.version("memdoor") == memdoor.__version__
    assert meta["project"]["dynamic"] == ["version"]
    assert meta["project"]["license"] == "MIT"
    assert "setuptools>=77" in meta["build-system"]["requires"][0]
    assert importlib.metadata.metadata("memdoor")["License-Expression"] == "MIT"
