"""How each language runs what the stage found: the :class:`~.targets.Batch` es of one review.

- Python: one driver program per version (:mod:`.driver`) carrying the version's Python files; it calls
  the functions and runs the standard-input programs (their input in the request), a renamed file's under
  the base's own module name and path in the base's program.
- JavaScript: one Node driver per version (:mod:`.node`) for the functions, and one per program (the
  program's input is the test's standard input), each carrying the version's JavaScript files.
- Rust: one wrapped program per version of each program, and one harness per version of each file of
  changed functions with every input baked in (:mod:`.rust_driver`), compiled once per run; each carries
  both versions of its file (:mod:`.rust_pair`), so a version that does not compile is a note, not a
  difference. When the harness's own code for one function does not compile, the file's functions run
  again in one harness each: the others are compared, that one keeps the note. Other inputs of the file's
  functions (a shrinking round's) run in a harness of their own (``Batch.rebuild``).

A language whose tool the sandbox does not have here (``node``, the Rust toolchain) runs nothing: its
targets get the reason as their note.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path, PurePosixPath

from memdoor.core.problem import TestCase
from memdoor.core.verdict import TestResult
from memdoor.review.diff import FileDiff
from memdoor.review.differential.driver import CallOutcome, outcome, program, program_request, request
from memdoor.review.differential.functions import ChangedFunction
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import js_call_request, js_program, read_js, stdin_request
from memdoor.review.differential.rust_driver import (
    function_harness,
    harness_failed,
    read_rust,
    read_rust_call,
    wrap_program,
)
from memdoor.review.differential.rust_pair import layout
from memdoor.review.differential.sources import version_texts
from memdoor.review.differential.stdin_inputs import stdin_of
from memdoor.review.differential.targets import Batch, Changed, Target, kind_of, language_of
from memdoor.review.differential.trees import version_files
from memdoor.review.files import inspect

Work = list[tuple[int, Target, list[Call]]]


def _python_request(t: Target, call: Call, _k: int) -> TestCase:
    if isinstance(t, ChangedFunction):
        return request(t, call)
    return program_request(t.file, stdin_of(call))


def _js_call(t: Target, call: Call, _k: int) -> TestCase:
    return js_call_request(t.file, t.name, call, t.kind)


def _stdin(_t: Target, call: Call, _k: int) -> TestCase:
    return stdin_request(call)


def is_js_file(path: str) -> bool:
    """A file a JavaScript version carries: sources, and the ``package.json`` files that say their kind."""
    return path.endswith((".js", ".mjs", ".cjs")) or PurePosixPath(path).name == "package.json"


def python_batch(work: Work, changed: Path, base_dir: Path, files: list[FileDiff]) -> Batch:
    targets = [t for _, t, _ in work]
    old_files, new_files = version_files(
        changed, base_dir, files, [t.file for t in targets], [t.old_file for t in targets]
    )
    fns = [t for t in targets if isinstance(t, ChangedFunction)]
    roots = ["", *(t.import_root for t in fns)]
    old_roots = ["", *(t.import_root if t.old_import_root is None else t.old_import_root for t in fns)]
    modules = {t.module: t.old_module for t in fns if t.old_module is not None}
    paths = {t.file: t.old_file for t in targets if t.old_file != t.file}
    old = program(old_files, old_roots, modules, paths)
    return Batch("python", old, program(new_files, roots), work, _python_request, outcome)


def javascript_batches(work: Work, changed: Path, base_dir: Path, files: list[FileDiff]) -> list[Batch]:
    wanted = sorted({t.file for _, t, _ in work})
    old_files, new_files = version_texts(changed, base_dir, files, is_js_file, wanted)
    functions = [w for w in work if kind_of(w[1]) == "function"]
    out = []
    if functions:
        out.append(
            Batch("javascript", js_program(old_files), js_program(new_files), functions, _js_call, read_js)
        )
    for w in work:
        if kind_of(w[1]) == "program":
            t = w[1]
            old, new = js_program(old_files, t.file), js_program(new_files, t.file)
            out.append(Batch("javascript", old, new, [w], _stdin, read_js))
    return out


def _index(_t: Target, _call: Call, k: int) -> TestCase:
    return TestCase(kind="stdin", input=str(k), output=None)


def _harnesses(old: str, new: str, pairs: list[tuple[Target, Call]]) -> tuple[str, str]:
    """Both versions' harnesses of one file's functions, call ``k`` the ``k``-th of ``pairs``."""
    calls = [(t.name, [ty for _, ty in t.params], c) for t, c in pairs if isinstance(t, Changed)]
    baked = [(k, name, types, json.loads(c.text)) for k, (name, types, c) in enumerate(calls)]
    return function_harness(old, new, "old", baked), function_harness(old, new, "new", baked)


def _functions(old: str, new: str, part: Work) -> Batch:
    """The batch of one file's changed functions (``old``, ``new``: the file's versions)."""
    harness = _harnesses(old, new, [(t, c) for _, t, cs in part for c in cs])
    split = partial(_one_each, old, new, part) if len(part) > 1 else None
    read = partial(read_rust_call, where=layout(old, new))
    return Batch("rust", *harness, part, _index, read, split, partial(_rebaked, old, new, part, read))


def _baked_at(at: dict[tuple[str, str], int], t: Target, call: Call, _k: int) -> TestCase:
    return _index(t, call, at[t.name, call.text])


def _rebaked(
    old: str,
    new: str,
    part: Work,
    read: Callable[[TestResult, str], CallOutcome],
    pairs: list[tuple[Target, Call]],
) -> Batch:
    """The batch of the file's functions that runs ``pairs`` instead of their inputs (a shrinking round's):
    a harness of its own per version, each distinct call baked in once, read as the file's own batch is."""
    distinct = {(t.name, c.text): (t, c) for t, c in pairs}
    at = {key: k for k, key in enumerate(distinct)}
    harness = _harnesses(old, new, list(distinct.values()))
    return Batch("rust", *harness, part, partial(_baked_at, at), read)


def _one_each(old: str, new: str, part: Work, outcomes: list[CallOutcome]) -> list[Batch]:
    """One batch per function when the file's harness did not compile for its own code (the calls made for
    one of them): the others are still compared. None (``[]``) when the file itself did not compile."""
    if not any(harness_failed(o) for o in outcomes):
        return []
    return [_functions(old, new, [w]) for w in part]


def rust_batches(work: Work, changed: Path, base_dir: Path) -> list[Batch]:
    """One batch per program, and one per file of functions (every input baked into its harness)."""
    out = []
    by_file: dict[str, Work] = {}
    for w in work:
        t = w[1]
        if isinstance(t, Changed) and t.target == "program":
            old, new = t.old_source, t.new_source
            programs = wrap_program(old, new, "old"), wrap_program(old, new, "new")
            out.append(Batch("rust", *programs, [w], _stdin, partial(read_rust, where=layout(old, new))))
        else:
            by_file.setdefault(t.file, []).append(w)
    for file, part in by_file.items():
        out.append(_functions(inspect(base_dir, file).text or "", inspect(changed, file).text or "", part))
    return out


def tool_problem(language: str) -> str | None:
    """Why ``language`` cannot run in the sandbox here (None when it can); looked up once per process."""
    if language == "python":
        return None
    from memdoor.sandbox.lang.run import tool_for

    tool = tool_for(language)
    return None if tool.usable else f"{language} cannot run in the sandbox here: {tool.problem}"


def plan(
    work: Work, changed: Path, base_dir: Path, files: list[FileDiff]
) -> tuple[list[Batch], dict[int, str]]:
    """The batches that run ``work`` (each target in one), and the notes of the targets that cannot run."""
    by: dict[str, Work] = {"python": [], "javascript": [], "rust": []}
    for w in work:
        by[language_of(w[1])].append(w)
    notes: dict[int, str] = {}
    batches: list[Batch] = []
    for language, part in by.items():
        if not part:
            continue
        problem = tool_problem(language)
        if problem is not None:
            notes.update({i: problem for i, _, _ in part})
        elif language == "python":
            batches.append(python_batch(part, changed, base_dir, files))
        elif language == "javascript":
            batches += javascript_batches(part, changed, base_dir, files)
        else:
            batches += rust_batches(part, changed, base_dir)
    return batches, notes
