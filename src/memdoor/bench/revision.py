"""A row's revision: what decides its behaviour beyond its settings (strategy code, prompts, selector),
recorded when a run starts and checked when it resumes, as the settings are.

A revision must change when behaviour does and stay when code is only moved, renamed or reformatted, so
it is not a hash of source files. It is:

- ``strategy``: the strategy's name and its revision number in :data:`STRATEGY_REVISIONS`,
- ``strategies``: :data:`COMMON_REVISION`, the code every strategy shares (the run skeleton, the team's
  calls, drafting and voting, the messages, test generation, the referee: every module of
  ``memdoor.strategies`` that defines no registered strategy; the team's agents in ``memdoor.agents``;
  the per-language prompt wording in ``memdoor.prompts.languages``),
- ``selector``: the selector's name and its number in :data:`SELECTOR_REVISIONS` (the calibration, which
  only estimates, left out),
- ``prompts``: a digest of the texts of the prompt templates the strategies can render (the templates
  their code names; their file names left out, so a renamed template keeps it; any edit to a text
  changes it, also for rows that never render that template).

A developer bumps a number when a change alters what a strategy, the shared code or a selector does. A
guard test (``tests/bench/test_bench_revision.py``) keeps them honest: it records, beside each number, a
fingerprint of the code it stands for (:func:`fingerprint`: the syntax tree without docstrings, comments,
imports or layout) and fails when the code changed and the number did not, asking to bump it (behaviour
changed) or to record the new fingerprint (a pure refactor).

Code outside the strategies, the selector and the prompts (the sandbox, the extraction of code from an
answer, the model backends) is not part of a revision; the run's ``versions`` record covers the packages.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from collections.abc import Collection, Iterable
from importlib import resources
from pathlib import Path

from memdoor.bench.config import RowSpec, settings_diff
from memdoor.core.errors import ResultsStoreError
from memdoor.core.registry import REGISTRY

STRATEGY_REVISIONS: dict[str, int] = {
    "single": 1,
    "parallel": 1,
    "sequential": 1,
    "shared": 1,
    "hybrid": 1,
    "sstar": 1,
    "cascade": 1,
    "adaptive": 1,
}
"""Revision of each strategy's own code: bump it when what the strategy does changes."""
COMMON_REVISION = 1
"""Revision of the code the strategies share (``memdoor.strategies`` modules defining no strategy)."""
SELECTOR_REVISIONS: dict[str, int] = {"vote": 1}
"""Revision of each selector (``memdoor.select``): bump it when how it chooses changes."""


def _module_of(kind: str, name: str) -> str:
    return REGISTRY[kind][name].partition(":")[0]


def strategy_modules(name: str) -> list[str]:
    """The module whose code a strategy's revision number stands for."""
    return [_module_of("strategy", name)]


SHARED_ELSEWHERE = ("memdoor.prompts.languages",)
"""Modules outside ``memdoor.strategies`` whose code decides every strategy's behaviour and that the
shared revision stands for too (beside the ``memdoor.agents`` package): the prompt wording per language
(JavaScript, Rust) is Python code, not a template, so the prompt digest does not see it."""
SELECTOR_ESTIMATES = ("memdoor.select.calibration",)
"""Modules of ``memdoor.select`` that only estimate (a calibration fitted on results) and choose nothing:
left out of the selectors' revision."""


def common_modules() -> list[str]:
    """The code every strategy shares: the modules of ``memdoor.strategies`` that define no registered
    strategy, the team's agents (``memdoor.agents``: asking a model, each agent's seed and prompt variant,
    the call context) and :data:`SHARED_ELSEWHERE`."""
    own = {_module_of("strategy", n) for n in REGISTRY["strategy"]}
    shared = [m for m in _package_modules("memdoor.strategies") if m not in own]
    return sorted([*shared, *_package_modules("memdoor.agents"), *SHARED_ELSEWHERE])


def selector_modules(name: str) -> list[str]:
    """The modules a selector's revision number stands for: the ``memdoor.select`` package but for
    :data:`SELECTOR_ESTIMATES`."""
    return [m for m in _package_modules("memdoor.select") if m not in SELECTOR_ESTIMATES]


def _package_sources(package: str) -> list[Path]:
    return sorted(Path(str(p)) for p in resources.files(package).iterdir() if str(p).endswith(".py"))


def _package_modules(package: str) -> list[str]:
    """The package's modules by name (its ``__init__`` as the package itself)."""
    stems = (p.stem for p in _package_sources(package))
    return sorted(package if s == "__init__" else f"{package}.{s}" for s in stems)


def _source(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(module)
    return Path(spec.origin).read_text(encoding="utf-8")


class _Normalise(ast.NodeTransformer):
    """Drops docstrings and imports (where a name comes from is a refactor, not behaviour)."""

    def visit_Import(self, node: ast.AST) -> None:
        return None

    def visit_ImportFrom(self, node: ast.AST) -> None:
        return None

    def generic_visit(self, node: ast.AST) -> ast.AST:
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
        return super().generic_visit(node)


def normalised(source: str) -> str:
    """Python source as its syntax tree without positions, docstrings and imports: what moving, renaming
    the file, reformatting and comments leave alone."""
    return ast.dump(_Normalise().visit(ast.parse(source)))


def digest(texts: Iterable[str]) -> str:
    """A short digest of ``texts`` in any order."""
    h = hashlib.sha256()
    for text in sorted(texts):
        h.update(text.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def fingerprint(modules: Iterable[str]) -> str:
    """A digest of the modules' :func:`normalised` code."""
    return digest(normalised(_source(m)) for m in modules)


def _named(tree: ast.AST) -> tuple[set[str], set[str]]:
    """String constants of a module, and the constant heads of its f-strings (``f"repair_{x}"``)."""
    whole, heads = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            heads.add(str(node.values[0].value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            whole.add(node.value)
    return whole, {h for h in heads if h}


def strategy_prompts() -> list[str]:
    """The prompt templates the strategies' code names (by a string, or an f-string's head)."""
    whole, heads = set(), set()
    for path in _package_sources("memdoor.strategies"):
        w, h = _named(ast.parse(path.read_text(encoding="utf-8")))
        whole, heads = whole | w, heads | h
    names = sorted(
        Path(str(p)).stem for p in resources.files("memdoor.prompts").iterdir() if str(p).endswith(".txt")
    )
    return [n for n in names if n in whole or any(n.startswith(h) for h in heads)]


def prompts_digest() -> str:
    """A digest of the texts of :func:`strategy_prompts` (names left out: a renamed template keeps it)."""
    folder = resources.files("memdoor.prompts")
    return digest((folder / f"{n}.txt").read_text(encoding="utf-8") for n in strategy_prompts())


def row_revision(strategy: str, selector: str) -> dict[str, str]:
    """The revision of a row running ``strategy`` (its name, e.g. ``hybrid``) with ``selector``."""
    return {
        "strategy": f"{strategy} {STRATEGY_REVISIONS.get(strategy, 0)}",
        "strategies": str(COMMON_REVISION),
        "selector": f"{selector} {SELECTOR_REVISIONS.get(selector, 0)}",
        "prompts": prompts_digest(),
    }


def check_rules(
    held: dict[str, RowSpec],
    wanted: Iterable[RowSpec],
    directory: object,
    *,
    redo: Collection[str] = (),
    accept: Collection[str] = (),
) -> None:
    """ResultsStoreError (one line naming the row and what changed) when a stored row resumes with other
    settings, or under another revision unless that is accepted; a redone row may change both. A row
    stored before its settings or revision were recorded has none and resumes (it records them from then
    on)."""
    for r in wanted:
        old = held.get(r.name)
        if old is None or r.name in redo:
            continue
        if old.settings and r.settings and old.settings != r.settings:
            raise ResultsStoreError(
                f"{directory}: row {r.name} now runs with other settings than its stored results were made "
                f"with ({settings_diff(old.settings, r.settings)}); add --redo {r.name} to drop its results "
                "and run it again, or use another --out"
            )
        if old.revision and r.revision and old.revision != r.revision and r.name not in accept:
            raise ResultsStoreError(
                f"{directory}: row {r.name} now runs other code or prompts than its stored results were made "
                f"with ({settings_diff(old.revision, r.revision)}); add --accept-revision {r.name} to keep "
                f"its results and go on knowingly, --redo {r.name} to run it again, or use another --out"
            )


def adopt(
    old: RowSpec, new: RowSpec | None, *, redo: Collection[str] = (), accept: Collection[str] = ()
) -> RowSpec:
    """The stored row ``old`` as it continues under ``new`` (None: not run now): it takes the new settings
    where it had none or is redone, and the new revision where it had none, is redone or it was accepted."""
    if new is None:
        return old
    update = {}
    if new.settings and (not old.settings or old.name in redo):
        update["settings"] = new.settings
    if new.revision and (not old.revision or old.name in redo or old.name in accept):
        update["revision"] = new.revision
    return old.model_copy(update=update) if update else old
