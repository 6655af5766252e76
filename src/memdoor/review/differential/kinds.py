"""The kinds of targets the stage compares, in one place: which changed files hold them, our own inputs
for the ones that are not Python functions, and how the agents are asked for inputs and their answers read.

=====================  ==========================================  =======================================
target                 found by                                    inputs (ours; the agents')
=====================  ==========================================  =======================================
Python function        :mod:`.functions` (syntax trees)            :mod:`.inputs` (Python literals)
JS function, method    :mod:`.jsfunctions` (tokens), .jsclasses    :mod:`.json_inputs` (JSON arguments)
stdin program (3)      :mod:`.programs`                            :mod:`.stdin_inputs` (JSON strings)
Rust function          :mod:`.rustfunctions` (masked text)         :mod:`.rustfunctions` by type (JSON)
=====================  ==========================================  =======================================

TypeScript, and what a kind cannot call (a generic Rust function), are listed as not compared
(``skipped``), with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from memdoor.core.messages import Message
from memdoor.prompts import render
from memdoor.review.context import Skipped
from memdoor.review.diff import FileDiff
from memdoor.review.differential.functions import ChangedFunction, compare_files, is_test_file, module_name
from memdoor.review.differential.inputs import Call, Read, read_inputs
from memdoor.review.differential.jsfunctions import compare_javascript
from memdoor.review.differential.json_inputs import MAX_MINED, mined_calls, own_json, read_json_answer
from memdoor.review.differential.node import module_syntax
from memdoor.review.differential.programs import JS_SUFFIXES, RUST_MOD, is_js_test, is_rust_test, program_of
from memdoor.review.differential.rust_inputs import refused, rust_pool
from memdoor.review.differential.rustfunctions import compare_rust
from memdoor.review.differential.sources import base_texts, is_regular
from memdoor.review.differential.stdin_inputs import mined_stdin, own_stdin, read_stdin_answer
from memdoor.review.differential.targets import FENCE_TAG, Changed, JsKind, Target
from memdoor.review.differential.trees import touched_paths
from memdoor.review.fence import fence, inline
from memdoor.review.files import inspect

NOT_YET = {".ts": "TypeScript is not compared (it would need compiling)"}
LANGUAGE_NAME = {"python": "Python", "javascript": "JavaScript", "rust": "Rust"}
# f, X.method, or X.prototype.m (an instance method beside a static one of its name)
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.prototype)?\.[A-Za-z_$][\w$]*)?$")


def _python(
    f: FileDiff, old: str, new: str, changed: Path, in_base: Callable[[str], bool]
) -> tuple[list[Target], list[Skipped]]:
    """A Python file's changed program and functions (``in_base``: whether a file is in the base). A renamed
    file's base runs under its old path and module name (``old_file``, ``old_module``), the change under
    its new ones."""
    found: list[Target] = []
    old_path = f.old_path or f.path
    program = program_of(f.path, old, new)
    if isinstance(program, Changed):
        found.append(program.model_copy(update={"old_file": old_path}))
    named = module_name(f.path, lambda rel: is_regular(changed / rel))
    old_named = module_name(old_path, in_base) if old_path != f.path else named
    if named is None or old_named is None:
        return found, [Skipped(file=f.path, reason="not an importable module name")] if not found else []
    same = old_named == named
    try:
        found += compare_files(
            old, new, file=f.path, old_file=old_path, module=named[0], import_root=named[1],
            old_module=None if same else old_named[0], old_import_root=None if same else old_named[1],
        )  # fmt: skip
    except (SyntaxError, ValueError, RecursionError) as e:
        return [], [Skipped(file=f.path, reason=f"does not parse on one side: {type(e).__name__}")]
    return found, []


def _javascript(f: FileDiff, old: str, new: str) -> tuple[list[Target], list[Skipped]]:
    program = program_of(f.path, old, new)
    if isinstance(program, Changed):
        return [program], []  # its top-level code reads standard input: compared as a program
    found, skipped = compare_javascript(old, new, file=f.path)
    module = (module_syntax(new) or module_syntax(old)) if found else None
    if module is not None:  # the Node driver cannot evaluate it: every call would fail to load
        return [], [Skipped(file=f.path, reason=f"{module} ({', '.join(c.name for c in found)})"), *skipped]
    bad = [c.name for c in found if not _IDENTIFIER.match(c.name)]
    return [c for c in found if c.name not in bad], [
        *skipped,
        *(Skipped(file=f.path, reason=f"{n}: not a plain name") for n in bad),
    ]


def _rust(f: FileDiff, old: str, new: str) -> tuple[list[Target], list[Skipped]]:
    program = program_of(f.path, old, new)
    if isinstance(program, Changed):
        return [program], []
    if isinstance(program, Skipped):
        return [], [program]
    if RUST_MOD.search(new) or RUST_MOD.search(old):
        return [], [
            Skipped(file=f.path, reason="a Rust file that declares modules (mod name;): not compared")
        ]
    found, skipped = compare_rust(old, new, file=f.path)
    return list(found), skipped


def find_targets(
    files: list[FileDiff], changed: Path, base_dir: Path, limit: int
) -> tuple[list[ChangedFunction], list[Changed], list[Skipped]]:
    """The diff's changed targets (at most ``limit`` in all): the Python functions, the others, and what
    was not compared."""
    targets: list[Target] = []
    skipped: list[Skipped] = []
    touched = touched_paths(files)

    def in_base(rel: str) -> bool:
        return is_regular((base_dir if rel in touched else changed) / rel)

    for f in files:
        suffix = Path(f.path).suffix
        if suffix in NOT_YET:
            skipped.append(Skipped(file=f.path, reason=NOT_YET[suffix]))
            continue
        if suffix not in (".py", ".rs", *JS_SUFFIXES) or f.deleted or not f.hunks or f.old_path is None:
            continue
        if is_test_file(f.path) or is_js_test(f.path) or is_rust_test(f.path):
            continue  # the tests are not the change's behaviour
        if f.old_path != f.path and (f.copied or suffix != ".py"):
            how = "copied" if f.copied else "renamed"
            skipped.append(Skipped(file=f.path, reason=f"{how} from {f.old_path}: not compared"))
            continue
        if Path(f.old_path).suffix != suffix:  # the base's program carries its Python files only
            why = f"renamed from {f.old_path}, which is no Python file: not compared"
            skipped.append(Skipped(file=f.path, reason=why))
            continue
        old, new = inspect(base_dir, f.old_path).text, inspect(changed, f.path).text
        if old is None or new is None:
            skipped.append(Skipped(file=f.path, reason="not readable as text on both sides"))
            continue
        try:
            if suffix == ".py":
                found, why = _python(f, old, new, changed, in_base)
            elif suffix == ".rs":
                found, why = _rust(f, old, new)
            else:
                found, why = _javascript(f, old, new)
        except (RecursionError, ValueError) as e:  # one hostile file is not compared; the others are
            skipped.append(Skipped(file=f.path, reason=f"could not be read: {type(e).__name__}"))
            continue
        targets += found
        skipped += why
    for t in targets[limit:]:
        skipped.append(
            Skipped(file=t.file, reason=f"{t.name}: over the limit of {limit} functions and programs")
        )
    kept = targets[:limit]
    fns = [t for t in kept if isinstance(t, ChangedFunction)]
    return fns, [t for t in kept if isinstance(t, Changed)], skipped


def own_for(others: list[Changed], changed: Path, base_dir: Path, files: list[FileDiff]) -> list[list[Call]]:
    """Our own inputs for each target that is not a Python function (the base's examples and tests mined
    once)."""
    programs = [t.file for t in others if t.target == "program"]
    try:
        mined = mined_stdin(changed, base_dir, files, programs) if programs else {}
    except (RecursionError, ValueError):
        mined = {}
    js_names = [t.name for t in others if t.target == "function" and t.language == "javascript"]
    tests = list(base_texts(changed, base_dir, files, is_js_test).values()) if js_names else []
    out = []
    for t in others:
        try:
            if t.target == "program":
                out.append(own_stdin(mined.get(t.file, []), t.literals))
            elif t.language == "rust":
                out.append(own_json(t, [], pool_of=rust_pool))
            else:
                out.append(own_json(t, _mined_js(tests, t.name, t.kind)))
        except (RecursionError, ValueError):
            out.append([])  # the agents' inputs only
    return out


def _mined_js(tests: list[str], name: str, kind: JsKind) -> list[Call]:
    """The calls of ``name`` in the base's JavaScript tests, read file by file: a test file that cannot be
    read gives none, the others still do. A method ``X.m``'s are ``X.m(...)`` for a static one,
    ``new X(...)`` for the constructor, else ``.m(...)`` on anything in the files that name ``X``."""
    cls, _, method = name.rpartition(".")
    cls = cls.removesuffix(".prototype")  # an instance method named apart from a static one of its name
    out: list[Call] = []
    for text in tests:
        if (cls or name) not in text:
            continue
        try:
            if not cls:
                found = mined_calls([text], name)
            elif kind == "constructor":
                found = mined_calls([text], cls)
            else:
                found = mined_calls([text], method, receiver=cls if kind == "staticmethod" else "*")
        except (RecursionError, ValueError):
            continue
        out += [c for c in found if c.text not in {o.text for o in out}]
    return out[:MAX_MINED]


def input_messages(t: Target, count: int) -> list[Message]:
    """The question for one target's inputs: the code before and after, fenced, then the task."""
    old, new = t.excerpts()
    if isinstance(t, ChangedFunction):
        user = render(
            "code_review_inputs", function=inline(t.name), old=fence(old, "python"), new=fence(new, "python"),
            count=count, signature=fence(t.signature, "python"),  # annotations and defaults: the PR's text
        )  # fmt: skip
    elif t.target == "program":
        user = render(
            "code_review_stdin_inputs", language=LANGUAGE_NAME[t.language], program=inline(t.name),
            old=fence(old, FENCE_TAG[t.language]), new=fence(new, FENCE_TAG[t.language]), count=count,
        )  # fmt: skip
    else:
        user = render(
            "code_review_json_inputs", language=LANGUAGE_NAME[t.language], function=inline(t.name),
            old=fence(old, FENCE_TAG[t.language]), new=fence(new, FENCE_TAG[t.language]), count=count,
            signature=fence(t.signature, FENCE_TAG[t.language]),
        )  # fmt: skip
    return [
        {"role": "system", "content": render("code_review_exec_system")},
        {"role": "user", "content": user},
    ]


def read_answer(t: Target, text: str, agent: str, limit: int) -> Read:
    """One agent's inputs for ``t``, read as its kind's inputs are."""
    if isinstance(t, ChangedFunction):
        return read_inputs(text, t.name, agent, limit=limit)
    if t.target == "program":
        return read_stdin_answer(text, agent, limit)
    read = read_json_answer(text, agent, limit)
    return refused(t, read) if t.language == "rust" else read
