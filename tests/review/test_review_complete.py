"""A review that could not be completed says so in every format, and only then (issue 45 item 3)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from review_helpers import answer, finding, report

from memdoor.core.errors import ModelUnavailable
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.review.formats import to_json, to_markdown
from memdoor.review.sarif import to_sarif
from memdoor.review.session import ReviewConfig, prepare, run_review
from memdoor.run.env import RunEnv


async def _review(sandbox, repo, diff, tmp_path, answers):
    pool = ModelPool()
    for i, a in enumerate(answers):
        pool.add(f"scripted:{i}", ScriptedModel([a], spec=f"scripted:{i}"))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path)
    cfg = ReviewConfig(agents=len(answers), models=[f"scripted:{i}" for i in range(len(answers))])
    with tempfile.TemporaryDirectory(prefix="memdoor-review-test-") as work:
        return await run_review(prepare(diff, repo, cfg, Path(work)), cfg, env)


async def test_every_model_call_failing_is_incomplete_one_failing_is_not(sandbox, repo, bug_diff, tmp_path):
    down = await _review(
        sandbox, repo, bug_diff, tmp_path, [ModelUnavailable("down"), ModelUnavailable("down")]
    )
    assert not down.complete and down.incomplete_reason == "every model call failed"
    some = await _review(sandbox, repo, bug_diff, tmp_path, [ModelUnavailable("down"), answer(finding())])
    assert some.complete and some.incomplete_reason is None and some.findings


def test_every_format_says_it_first():
    r = report(complete=False, incomplete_reason="no sandbox for the tests: bwrap is not installed")
    assert to_markdown(r).splitlines()[0] == (
        "**Review not completed:** no sandbox for the tests: bwrap is not installed"
    )
    out = to_json(r)
    assert out["complete"] is False and "bwrap" in out["incomplete_reason"]
    assert list(out)[:2] == ["complete", "incomplete_reason"]
    inv = to_sarif(r)["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "bwrap" in inv["toolExecutionNotifications"][0]["message"]["text"]
    done = report()
    assert to_sarif(done)["runs"][0]["invocations"] == [{"executionSuccessful": True}]
    assert not to_markdown(done).startswith("**Review not completed")
