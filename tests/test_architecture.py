"""The package's imports follow docs/architecture.md: no cycle, nothing upwards, no private names.

Every module under src/memdoor is parsed (not imported); every import counts, type-only ones and
those inside functions included. The layer table is read from docs/architecture.md, so the map a
newcomer reads and the rule the code obeys are the same text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
DOC = REPO / "docs" / "architecture.md"


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    names: tuple[str, ...] = ()


def modules() -> dict[str, Path]:
    """Dotted name → file of every module of the package (a package is its ``__init__``)."""
    out = {}
    for path in sorted((SRC / "memdoor").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(name: str, known: dict[str, Path]) -> str | None:
    """The module ``name`` lives in (``memdoor.a.b.Thing`` → ``memdoor.a.b``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, known: dict[str, Path]) -> list[Import]:
    """Every import of another memdoor module in ``path``, wherever it stands in the file."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _owner(alias.name, known)
                if alias.name.split(".")[0] == "memdoor" and target:
                    found.append(Import(module, target, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "memdoor":
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                target = submodule if submodule in known else _owner(source, known)
                names = () if submodule in known else (alias.name,)
                if target:
                    found.append(Import(module, target, node.lineno, names))
    return [i for i in found if i.imported != module]


def layer_table() -> list[tuple[int, str, list[str]]]:
    """(rank, name, module prefixes) of each row of the layer table in docs/architecture.md."""
    rows = []
    for line in DOC.read_text().splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*([\w-]+)\s*\|(.*)\|\s*$", line)
        if m:
            rows.append((int(m[1]), m[2], re.findall(r"`([\w.]+)`", m[3])))
    return rows


def layer_of(module: str, table: list[tuple[int, str, list[str]]]) -> tuple[int, str] | None:
    """The layer of the longest prefix in the table that covers ``module``."""
    best: tuple[int, int, str] | None = None
    for rank, name, prefixes in table:
        for p in prefixes:
            covers = module == p or (p != "memdoor" and module.startswith(p + "."))  # the root: itself only
            if covers and (best is None or len(p) > best[0]):
                best = (len(p), rank, name)
    return None if best is None else (best[1], best[2])


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    known = modules()
    return {m: imports_of(m, p, known) for m, p in known.items()}


@pytest.fixture(scope="module")
def table():
    rows = layer_table()
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1)), "layers are numbered 1, 2, ... in order"
    return rows


def test_every_module_has_a_layer(graph, table):
    unplaced = sorted(m for m in graph if layer_of(m, table) is None)
    assert not unplaced, f"place these modules in a layer of docs/architecture.md: {unplaced}"


def test_no_import_goes_upwards(graph, table):
    upwards = []
    for module, imports in graph.items():
        mine = layer_of(module, table)
        for i in imports:
            theirs = layer_of(i.imported, table)
            if mine and theirs and theirs[0] > mine[0]:
                upwards.append(f"{module}:{i.line} ({mine[1]}) imports {i.imported} ({theirs[1]})")
    assert not upwards, "imports against the layer order:\n" + "\n".join(sorted(upwards))


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_find_cycles_finds_a_circle_and_nothing_else():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles(graph):
    edges = {m: {i.imported for i in imports} for m, imports in graph.items()}
    cycles = find_cycles(edges)
    assert not cycles, f"import cycles: {cycles}"


def test_no_private_names_imported_from_another_module(graph):
    private = [
        f"{module}:{i.line} imports {name} from {i.imported}"
        for module, imports in graph.items()
        for i in imports
        for name in i.names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert not private, "\n".join(private)


def test_the_reader_sees_type_only_and_function_level_imports():
    """The graph is made of every import: under TYPE_CHECKING and inside functions as well."""
    known = modules()
    env = {i.imported for i in imports_of("memdoor.run.env", known["memdoor.run.env"], known)}
    assert {"memdoor.memory", "memdoor.models.prices"} <= env  # imported inside functions
    vote = {i.imported for i in imports_of("memdoor.select.vote", known["memdoor.select.vote"], known)}
    assert "memdoor.core.protocols" in vote  # imported under TYPE_CHECKING only


def registered(kind: str) -> dict[str, str]:
    """The ``kind`` table of the registry (short name → ``"module:Class"``), read from its source."""
    tree = ast.parse((SRC / "memdoor" / "core" / "registry.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            table = ast.literal_eval(node.value)
            if kind in table:
                return table[kind]
    raise AssertionError(f"no {kind!r} table in the registry")


def test_every_registered_strategy_is_in_the_architecture_doc():
    """A newcomer finds every strategy the registry knows in docs/architecture.md's strategy table."""
    documented = set(re.findall(r"^\|\s*`([\w-]+)`\s*\|", DOC.read_text(), re.MULTILINE))
    strategies = registered("strategy")
    assert len(strategies) >= 8, "the registry's strategy table was not read"
    missing = sorted(set(strategies) - documented)
    assert not missing, f"registered strategies missing from docs/architecture.md's strategy table: {missing}"
