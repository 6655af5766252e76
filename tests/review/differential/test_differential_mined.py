"""The differential stage runs the calls its tests make of a changed function, and their variations: a bug
that only a neighbour of real usage shows (the signature's own inputs all fail alike on both versions) is
found, with the agents asked for nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from review_helpers import diff_of, git, make_repo

from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.review.session import ReviewConfig, prepare, run_review
from memdoor.run.env import RunEnv

SHOP = '''def total(items):
    """The price of a basket: (name, unit price, quantity) items."""
    return sum(price * qty for _, price, qty in items)
'''
LAST_TWO = SHOP.replace("in items)", "in list(items)[-2:])")  # drops all but the last two items
TESTS = """from shop import total


def test_total():
    assert total([("apple", 2.5, 2), ("pear", 1.0, 3)]) == 8.0
"""


@pytest.fixture
def repo(tmp_path) -> Path:
    root = make_repo(tmp_path / "repo")
    (root / "shop.py").write_text(SHOP)
    (root / "test_shop.py").write_text(TESTS)
    git(root, "add", "shop.py", "test_shop.py")
    git(root, "commit", "-qm", "shop")
    return root


async def test_a_variation_of_a_tested_call_shows_the_bug(sandbox, repo, tmp_path):
    pool = ModelPool()
    pool.add("scripted:0", ScriptedModel(respond=lambda m: "no", spec="scripted:0"))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path / "traces")
    cfg = ReviewConfig(agents=1, models=["scripted:0"], description="refactor, no behaviour change",
                       stages=["differential"], differential_inputs=0)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="memdoor-differential-test-") as work:
        report = await run_review(
            prepare(diff_of(repo, "shop.py", LAST_TWO), repo, cfg, Path(work)), cfg, env
        )
    assert report.error is None, report.error
    assert report.differential is not None and len(report.ledger.calls) == 0
    (g,) = report.findings
    ce = g.counterexample
    assert ce is not None and ce.function == "total" and g.severity == "high"
    # the tested basket, an item more ([('apple', 2.5, 2), ('pear', 1.0, 3), ('pear', 1.0, 3)]), made
    # smaller (differential.shrink: a name shortened a round, within the runs its re-runs leave)
    assert ce.input == "[('', 2.5, 2), ('', 1.0, 3), ('pear', 1.0, 3)]"
    assert (ce.old, ce.new) == ("returns 11.0", "returns 6.0")
