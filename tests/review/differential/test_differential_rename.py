"""A change that renames a Python file and edits it: the differential stage runs each version of the file
under its own path and module name (the base's old one, the change's new one), so a renamed function or
program is compared like any other (a real git repository, the real sandbox, a scripted agent)."""

from __future__ import annotations

import shutil
from pathlib import Path

from differential_helpers import commit, review_diff
from review_helpers import git, make_repo

from memdoor.review.diff import parse_diff

HELPERS = "".join(f"def step{i}(x):\n    return x + {i}\n\n\n" for i in range(8))
TOTAL = HELPERS + "def total(xs):\n    return sum(xs)\n"
PROGRAM = "".join(f"# line {i} of the tool's notes\n" for i in range(12)) + (
    "import sys\n\nxs = [int(x) for x in sys.stdin.read().split()]\nprint(max(xs, default=0))\n"
)


def respond(messages) -> str:
    return "```json\n[]\n```"  # no inputs of its own: ours find the difference


async def review_rename(sandbox, tmp_path: Path, old: tuple[str, str], new: tuple[str, str]):
    """The review of the change that moves the file ``old`` (path, text) to ``new`` (path, text), nothing
    skipped."""
    report = await review_move(sandbox, tmp_path, old, new)
    assert report.differential is not None and report.differential.skipped == []
    return report


async def review_move(sandbox, tmp_path: Path, old: tuple[str, str], new: tuple[str, str]):
    """The review of the change that moves the file ``old`` (path, text) to ``new`` (path, text): git's diff
    of it, renames detected, made in a copy of the repository so that the repository stays the base."""
    root = make_repo(tmp_path / "repo")
    commit(root, "lib/__init__.py", "")
    commit(root, *old)
    work = tmp_path / "rename-work"
    shutil.copytree(root, work)
    (work / new[0]).parent.mkdir(parents=True, exist_ok=True)
    git(work, "mv", old[0], new[0])
    (work / new[0]).write_text(new[1])
    git(work, "add", new[0])
    diff = git(work, "diff", "--cached", "-M", "HEAD")
    (f,) = parse_diff(diff)
    assert (f.old_path, f.path) == (old[0], new[0]) and f.hunks  # a rename with an edit
    report, _ = await review_diff(sandbox, root, diff, tmp_path, respond)
    return report


def compared(report) -> list[tuple[str, str, str]]:
    return [(f.file, f.name, f.outcome) for f in report.differential.functions]


async def test_a_renamed_module_whose_function_changed_behaviour_is_a_finding(sandbox, tmp_path):
    changed = TOTAL.replace("sum(xs)", "sum(xs) + 1")
    report = await review_rename(sandbox, tmp_path, ("calc_util.py", TOTAL), ("lib/stats.py", changed))
    assert compared(report) == [("lib/stats.py", "total", "reported")]
    (g,) = report.findings
    assert g.file == "lib/stats.py" and g.counterexample is not None
    assert g.counterexample.old != g.counterexample.new


async def test_a_renamed_module_whose_function_was_only_rewritten_has_no_finding(sandbox, tmp_path):
    rewritten = TOTAL.replace("return sum(xs)", "out = 0\n    for x in xs:\n        out += x\n    return out")
    report = await review_rename(sandbox, tmp_path, ("lib/calc_util.py", TOTAL), ("tally.py", rewritten))
    assert compared(report) == [("tally.py", "total", "no difference")]
    assert report.findings == []


async def test_a_renamed_program_whose_output_changed_is_a_finding(sandbox, tmp_path):
    changed = PROGRAM.replace("max(xs, default=0)", "min(xs, default=0)")
    report = await review_rename(sandbox, tmp_path, ("tools/top.py", PROGRAM), ("tools/best.py", changed))
    assert compared(report) == [("tools/best.py", "tools/best.py", "reported")]
    (g,) = report.findings
    assert g.counterexample is not None and g.counterexample.old != g.counterexample.new


CLASSES = """class ParseError(ValueError):
    pass


class Point:
    def __init__(self, x):
        self.x = x


def parse(text):
    if not text:
        raise ParseError("empty")
    return Point(len(text))
"""


async def test_a_renamed_module_s_own_classes_are_named_alike_on_both_versions(sandbox, tmp_path):
    edited = CLASSES.replace("    pass\n", "    # an empty text\n    pass\n", 1)
    edited = edited.replace("return Point(len(text))", "size = len(text)\n    return Point(size)")
    report = await review_rename(sandbox, tmp_path, ("calc_util.py", CLASSES), ("lib/stats.py", edited))
    assert compared(report) == [("lib/stats.py", "parse", "no difference")]
    assert report.findings == []


async def test_a_script_renamed_to_a_python_file_is_skipped_not_a_finding(sandbox, tmp_path):
    changed = PROGRAM.replace("max(xs, default=0)", "max(xs, default=-1)")
    report = await review_move(sandbox, tmp_path, ("bin/tool", PROGRAM), ("bin/tool.py", changed))
    assert [(s.file, s.reason) for s in report.differential.skipped] == [
        ("bin/tool.py", "renamed from bin/tool, which is no Python file: not compared")
    ]
    assert compared(report) == [] and report.findings == []
