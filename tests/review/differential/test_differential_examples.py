"""Calls of a changed function found in the base: doctests and test files, read with ast, never run."""

from __future__ import annotations

import ast
import os

from memdoor.review.diff import FileDiff
from memdoor.review.differential.examples import BaseTests, arguments, base_inputs, mined_calls
from memdoor.review.differential.functions import ChangedFunction, Param
from memdoor.review.differential.inputs import MAX_MINED

OLD = '''def spread(xs, scale=1):
    """The largest value minus the smallest.

    >>> spread([1, 5, 2])
    4
    """
    return (max(xs) - min(xs)) * scale
'''
MODULE = (
    OLD
    + '''

def twice(xs):
    """Twice the spread.

    >>> spread([7, 7], 3)  # the module's other doctests
    0
    """
    return spread(xs) * 2
'''
)


def fn(params=None, kind="function", name="spread") -> ChangedFunction:
    params = params or [
        Param(name="xs", kind="positional"),
        Param(name="scale", kind="positional", default="1"),
    ]
    return ChangedFunction(file="pkg/stats.py", old_file="pkg/stats.py", module="pkg.stats", import_root="",
                           name=name, kind=kind, params=params, old_source=OLD, new_source=OLD, line=1,
                           end_line=7)  # fmt: skip


def call(text: str) -> ast.Call:
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.Call)
    return node


def test_literal_arguments_are_read_and_keywords_put_in_place_by_the_signature():
    f = fn()
    assert arguments(call("spread([1, 2], 3)"), f) == [[1, 2], 3]
    assert arguments(call("spread(scale=2, xs=[1])"), f) == [[1], 2]
    assert arguments(call("spread([1])"), f) == [[1]]
    assert arguments(call("spread(xs, 2)"), f) is None  # not a literal
    assert arguments(call("spread([1], 2, 3)"), f) is None  # more arguments than the signature takes
    assert arguments(call("spread()"), f) is None  # a required argument missing
    assert arguments(call("spread([1], [2], xs=[3])"), f) is None  # one given twice
    assert arguments(call("spread(*args)"), f) is None and arguments(call("spread(**kw)"), f) is None
    gap = fn([Param(name="xs", kind="positional"), Param(name="lo", kind="positional", default="0"),
              Param(name="hi", kind="positional", default="9")])  # fmt: skip
    assert arguments(call("spread([1], hi=5)"), gap) == [[1], 0, 5]  # the default fills the gap
    kw_only = fn([Param(name="xs", kind="positional"), Param(name="k", kind="keyword_only")])
    assert arguments(call("spread([1], k=2)"), kw_only) is None  # positional inputs cannot pass it


def test_the_old_docstring_comes_first_then_the_module_then_the_tests(tmp_path):
    base = tmp_path / "base"
    (base / "tests").mkdir(parents=True)
    (base / "tests" / "test_stats.py").write_text(
        "from pkg import stats\nfrom pkg.stats import spread\n\n"
        "def test_spread(self):\n"
        "    assert spread([3, 1]) == 2\n"
        "    self.assertEqual(stats.spread(xs=[4, 0], scale=2), 8)\n"
        "    assert spread(some_list) == 0\n"
        "    assert other.thing.spread([9]) == 0  # not a module function's call\n"
    )
    files = [FileDiff(path="pkg/stats.py", old_path="pkg/stats.py")]
    tests = BaseTests(base, tmp_path / "none", files, ["pkg/stats.py"], {"spread"})
    assert mined_calls(fn(), MODULE, tests) == [[[1, 5, 2]], [[7, 7], 3], [[3, 1]], [[4, 0], 2]]


def test_methods_are_found_as_attribute_calls(tmp_path):
    (tmp_path / "test_box.py").write_text(
        "def test_box():\n    assert Box().fill([1, 2]) == 3\n    fill([5])\n"
    )
    method = fn([Param(name="items", kind="positional")], kind="method", name="Box.fill")
    tests = BaseTests(tmp_path, tmp_path, [], [], {"fill"})
    assert mined_calls(method, None, tests) == [[[1, 2]]]  # a bare fill(...) is no call of the method


def test_the_base_version_of_a_changed_test_file_is_read_and_an_added_one_is_not(tmp_path):
    changed, base = tmp_path / "changed", tmp_path / "base"
    for root in (changed, base):
        (root / "tests").mkdir(parents=True)
    (changed / "tests" / "test_a.py").write_text("assert spread([100, 0]) == 100\n")  # the change's version
    (base / "tests" / "test_a.py").write_text("assert spread([1, 0]) == 1\n")  # the base's
    (changed / "tests" / "test_new.py").write_text("assert spread([50, 0]) == 50\n")  # added by the change
    (changed / "tests" / "test_old.py").write_text("assert spread([2, 0]) == 2\n")  # untouched
    files = [FileDiff(path="tests/test_a.py", old_path="tests/test_a.py"), FileDiff(path="tests/test_new.py")]
    tests = BaseTests(changed, base, files, [], {"spread"})
    assert mined_calls(fn(), None, tests)[1:] == [[[1, 0]], [[2, 0]]]  # after the old docstring's


def test_nothing_is_run_links_are_not_followed_and_the_count_is_capped(tmp_path):
    marker = tmp_path / "pwned"
    outside = tmp_path / "outside.py"
    outside.write_text("assert spread([8, 8]) == 0\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside, repo / "test_link.py")
    (repo / "test_evil.py").write_text(
        f"spread(__import__('os').system('touch {marker}'))\n"
        + "".join(f"assert spread([{k}]) == 0\n" for k in range(MAX_MINED + 5))
    )
    got = mined_calls(fn(), None, BaseTests(repo, repo, [], [], {"spread"}))
    assert not marker.exists() and [[8, 8]] not in got
    assert got == [[[1, 5, 2]], *([[k]] for k in range(MAX_MINED - 1))]


def test_base_inputs_put_the_mined_calls_first(tmp_path):
    changed, base = tmp_path / "changed", tmp_path / "base"
    (changed / "pkg").mkdir(parents=True)
    (base / "pkg").mkdir(parents=True)
    (base / "pkg" / "stats.py").write_text(MODULE)
    (changed / "test_stats.py").write_text("assert spread([3, 1]) == 2\n")
    files = [FileDiff(path="pkg/stats.py", old_path="pkg/stats.py")]
    (own,) = base_inputs([fn()], files, changed, base)
    texts = [c.text for c in own]
    assert texts[:3] == ["[[1, 5, 2]]", "[[7, 7], 3]", "[[3, 1]]"]
    assert texts[3:5] == ["[[]]", "[1]"]  # then a variation and a signature input in turn
    assert "[[5, 2]]" in texts and "[[7, 7], 4]" in texts and "[{}]" in texts
