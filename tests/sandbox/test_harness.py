"""The harness program is its parts joined in the order its package documents, and it is one sound program.

The harness runs inside the sandbox as one program text (memdoor.sandbox.harness); its source is kept in
parts, fragments that use each other's names and are never imported, so the linter cannot see a name one
part uses and no part defines: these tests check the joined program instead.
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from importlib import resources

import pytest

from memdoor.sandbox import harness


def part_files() -> dict[str, str]:
    folder = resources.files(harness.__name__)
    return {
        f.name.removesuffix(".py"): f.read_text(encoding="utf-8")
        for f in folder.iterdir()
        if f.name.endswith(".py") and f.name != "__init__.py"
    }


def test_every_part_is_joined_once_in_the_documented_order():
    """The numbered list of the package's docstring, PARTS and the part files name the same parts, in the
    same order; each part's own description says its place; the program holds each part's text once, in that
    order."""
    documented = re.findall(r"^(\d+)\. ``(\w+)``", harness.__doc__, re.MULTILINE)
    assert [int(k) for k, _ in documented] == list(range(1, len(documented) + 1))
    assert tuple(name for _, name in documented) == harness.PARTS
    files = part_files()
    assert sorted(files) == sorted(harness.PARTS), "a part file is missing from PARTS, or PARTS names no file"
    for k, name in enumerate(harness.PARTS, 1):
        assert f"Harness part {k}, " in files[name].partition(harness.PART_START)[0], name
    program = harness.program_text()
    texts = [harness.part_text(n, files[n]) for n in harness.PARTS]
    assert all(program.count(text) == 1 for text in texts)
    places = [program.index(text) for text in texts]
    assert places == sorted(places)


def test_the_program_compiles_opens_with_its_docstring_and_ends_by_running_main():
    program = harness.program_text()
    tree = ast.parse(program)
    compile(program, "<harness>", "exec")
    assert ast.get_docstring(tree).startswith("The trusted harness that runs INSIDE the sandbox")
    last = tree.body[-1]
    assert isinstance(last, ast.If) and ast.unparse(last) == "if __name__ == '__main__':\n    main()"
    assert all(n.module is None or n.level == 0 for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "memdoor" not in imported  # the sandbox has the standard library only


def test_each_name_is_defined_once_and_every_name_used_is_defined():
    """What a linter checks in one file, checked on the joined program: no top-level name defined by two
    parts, and every global name a function or the module reads is defined at the top level or a builtin."""
    program = harness.program_text()
    top = [
        t.id if isinstance(t, ast.Name) else t.name
        for node in ast.parse(program).body
        for t in (
            [node]
            if isinstance(node, ast.FunctionDef | ast.ClassDef)
            else [x for x in getattr(node, "targets", []) if isinstance(x, ast.Name)]
        )
    ]
    assert sorted(n for n in set(top) if top.count(n) > 1) == []
    module = symtable.symtable(program, "<harness>", "exec")
    defined = {s.get_name() for s in module.get_symbols() if s.is_assigned() or s.is_imported()}
    missing = set()
    tables = [module]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for s in table.get_symbols():
            reads_global = s.is_referenced() and (table is module or s.is_global())
            if reads_global and s.get_name() not in defined and not hasattr(builtins, s.get_name()):
                missing.add(s.get_name())
    assert missing == set(), f"names no part defines: {sorted(missing)}"


def test_a_part_without_its_start_line_is_refused():
    with pytest.raises(harness.HarnessPartError, match="'wire' must have exactly one line"):
        harness.part_text("wire", '"""A part."""\n\nx = 1\n')
    with pytest.raises(harness.HarnessPartError):
        harness.part_text("wire", f"{harness.PART_START}\nx = 1\n{harness.PART_START}\n")
    assert harness.part_text("wire", f"# about it\n{harness.PART_START}\n\n\nx = 1\n\n") == "x = 1"
