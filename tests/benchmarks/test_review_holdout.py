"""The review benchmark's holdout (``--holdout``): cases from the functions the seed's selection did not
choose, with the same quotas where the data allows. The selection is tested with a stand-in for the
sandbox's decisions (no case is built)."""

from __future__ import annotations

import argparse
import json

import pytest
import review_bench
from review_cases import build as build_module
from review_cases.build import BuildConfig, build_cases, seeded_order
from review_cases.records import KINDS, ReviewCase, Source

from memdoor.core.problem import Problem

QUOTA = {"missed": 3, "caught": 1, "refactor": 2, "intended": 2, "mixed": 0}


def source(n: int) -> Source:
    problem = Problem(id=f"Demo/{n}", statement="f", func_name="f")
    return Source(problem_id=f"Demo/{n}", entry="f", code="def f(x):\n    return x\n", problem=problem,
                  examples=[], seeds=[])  # fmt: skip


def case(src: Source, kind: str) -> ReviewCase:
    return ReviewCase(id=f"{src.problem_id}:{kind}", problem_id=src.problem_id, entry="f", kind=kind,  # type: ignore[arg-type]
                      transform="t", description="d", before=src.code, after=src.code, tests_before="",
                      tests_after="", changed=[1], public_fails=False)  # fmt: skip


class Decided:
    """Stands in for FunctionCases: every function gives a case of each kind it is asked for, except the
    odd-numbered ones, which give no missed bug (as a function whose mutants the public tests catch)."""

    def __init__(self, src: Source, runner, config) -> None:
        self.src = src

    def cases(self, needed: dict[str, int]) -> list[ReviewCase]:
        odd = int(self.src.problem_id.split("/")[1]) % 2
        return [case(self.src, k) for k in KINDS if needed.get(k, 0) > 0 and not (k == "missed" and odd)]


@pytest.fixture
def decided(monkeypatch):
    monkeypatch.setattr(build_module, "FunctionCases", Decided)


def test_the_holdout_keeps_the_seeded_order_of_the_functions_left():
    sources = [source(n) for n in range(30)]
    full = [s.problem_id for s in seeded_order(sources, 0)]
    left = [s.problem_id for s in seeded_order(sources, 0, exclude=full[:10])]
    assert left == full[10:]
    assert full != sorted(full, key=lambda p: int(p.split("/")[1]))  # shuffled by the seed


def test_the_holdout_chooses_other_functions_with_the_same_quotas(decided):
    sources = [source(n) for n in range(30)]
    config = BuildConfig(seed=0, quota=QUOTA)
    default = build_cases(sources, None, config)  # type: ignore[arg-type]
    chosen = review_bench.chosen(default)
    held = build_cases(sources, None, config, exclude=chosen)  # type: ignore[arg-type]
    assert chosen and not set(chosen) & {c.problem_id for c in held}
    for cases in (default, held):
        assert {k: sum(c.kind == k for c in cases) for k in KINDS} == QUOTA


def test_where_the_data_runs_out_the_holdout_has_fewer_cases(decided):
    sources = [source(n) for n in range(6)]
    config = BuildConfig(seed=0, quota=QUOTA)
    default = build_cases(sources, None, config)  # type: ignore[arg-type]
    held = build_cases(sources, None, config, exclude=review_bench.chosen(default))  # type: ignore[arg-type]
    assert 0 < len(held) < sum(QUOTA.values()) == len(default)


def test_holdout_cases_are_kept_beside_the_selection_and_reused(decided, monkeypatch, tmp_path):
    sources = [source(n) for n in range(30)]
    monkeypatch.setattr(review_bench, "built_cases", None)  # nothing may be built: both are kept
    config = BuildConfig(seed=0, quota=QUOTA)
    default = build_cases(sources, None, config)  # type: ignore[arg-type]
    chosen = review_bench.chosen(default)
    held = build_cases(sources, None, config, exclude=chosen)  # type: ignore[arg-type]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"config": config.model_dump(), "cases": [c.model_dump() for c in default]}))
    holdout = review_bench.holdout_path(path)
    assert holdout == tmp_path / "cases.holdout.json"
    holdout.write_text(json.dumps({"config": config.model_dump(), "exclude": chosen,
                                   "cases": [c.model_dump() for c in held]}))  # fmt: skip
    args = argparse.Namespace(seed=0, quota="missed=3,caught=1,refactor=2,intended=2,mixed=0", workers=2,
                              timeout=10.0, cases=path, holdout=True)  # fmt: skip
    got = review_bench.get_cases(args, log=lambda m: None)
    assert [c.id for c in got] == [c.id for c in held]
    assert [c.id for c in review_bench.get_cases(argparse.Namespace(**{**vars(args), "holdout": False}),
                                                 log=lambda m: None)] == [c.id for c in default]  # fmt: skip
    assert review_bench.kept_cases(holdout, config, chosen[1:]) is None  # another selection: built again
