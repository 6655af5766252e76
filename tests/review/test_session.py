"""One review run end to end with scripted models (control flow) and real parts: a real git repository,
real `git apply`, the real sandbox and the test command in bubblewrap."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from review_helpers import FIX, answer, diff_of, finding

from memdoor.core.budget import Budget
from memdoor.core.errors import ModelUnavailable, ReviewInputError
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.review.findings import parse_review
from memdoor.review.formats import to_json, to_markdown
from memdoor.review.session import ReviewConfig, prepare, run_review
from memdoor.run.env import RunEnv
from memdoor.run.tracestore import load_trace

TEST = "python3 -m unittest -q"


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="memdoor-review-test-") as tmp:
        yield Path(tmp)


def env_for(sandbox, trace_dir: Path, *answers) -> RunEnv:
    """A team whose agent i replays ``answers[i]`` (a text or an exception)."""
    pool = ModelPool()
    for i, a in enumerate(answers):
        pool.add(f"scripted:{i}", ScriptedModel([a], spec=f"scripted:{i}", logprob=-0.2))
    return RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=trace_dir)


def config(n: int, **kw) -> ReviewConfig:
    """The tests and the reading review (the differential stage's own tests: test_differential_stage.py)."""
    kw.setdefault("stages", ["tests", "reading"])
    return ReviewConfig(agents=n, models=[f"scripted:{i}" for i in range(n)], **kw)


async def review(sandbox, repo, diff, workdir, trace_dir, answers, **kw):
    cfg = config(len(answers), **kw)
    env = env_for(sandbox, trace_dir, *answers)
    return await run_review(prepare(diff, repo, cfg, workdir), cfg, env), env


async def test_consensus_patch_tested_and_everything_recorded(sandbox, repo, bug_diff, workdir, tmp_path):
    fixing = answer(finding(suggestion=FIX))
    same = answer(finding(message="off by one: the mean divides by len(xs) - 1", severity="critical"))
    lone = answer(finding(line=1, end_line=1, kind="style", severity="low", message="add type hints"))
    report, env = await review(
        sandbox,
        repo,
        bug_diff,
        workdir,
        tmp_path / "traces",
        [fixing, same, lone, "no JSON at all"],
        test=TEST,
    )
    assert report.error is None and report.quorum == 2 and report.complete
    # the test stage's (test_mean passes on base, fails after), then the agents' consensus on the one
    # changed line the failing test shows: critical, more than the test's high, so not merged into it
    t, c = report.findings
    assert t.agents == [] and t.severity == "high" and "test_calc.T.test_mean" in t.message
    assert "3.0 != 2" in t.message and "calc.py:6" in t.message  # failure text and changed lines
    assert [f.name for f in report.pre_existing] == ["test_calc.T.test_empty"]  # fails on base already
    assert t.also_read == [] and (c.source, c.verified) == ("agents", False)
    assert (c.line, c.agents, c.severity) == (6, ["agent0", "agent1"], "critical")
    assert [m.agents for m in report.minority] == [["agent2"]]  # a style remark elsewhere: its own
    assert report.minority[0].confidence == pytest.approx(0.8187, abs=1e-3)  # exp(-0.2): logprobs first
    assert [u.agent for u in report.unusable] == ["agent3"]
    assert report.tests is not None and not report.tests.passed  # the change breaks the tests
    assert report.patch is not None and FIX in report.patch.diff
    assert report.patch.tests is not None and report.patch.tests.passed, report.patch.tests.output
    assert t.verified and not report.minority[0].verified  # the failing test reproduces; a style remark not
    assert report.fails()  # the test stage's verified finding is high >= the default fail-on high
    t = report.ledger.totals()
    assert t.calls == 5 and t.failed_calls == 0 and t.prompt_tokens > 0  # agent3 was asked for the JSON again
    # every agent saw the diff, the numbered code and the test result
    prompt = env.pool.get("scripted:0").calls[0][1]["content"]
    assert "+    return total / (len(xs) - 1)" in prompt and "6 | " in prompt and "failed (exit 1)" in prompt
    saved = load_trace(tmp_path / "traces", report.trace_id)
    kinds = [e.kind for e in saved.trace.events]
    assert kinds[0] == "start" and {"tests", "review", "consensus", "patch_tests"} <= set(kinds)
    reviewed = {e.agent: e.data for e in saved.trace.events if e.kind == "review"}
    assert [reviewed[f"agent{i}"]["ok"] for i in range(4)] == [False, False, False, None]  # agent3: no JSON
    assert reviewed["agent3"]["text"] == "no JSON at all"  # what each agent said stays in the trace
    assert saved.final["config"]["agents"] == 4 and saved.final["ledger"]["calls"] == 5
    assert len(saved.final["calls"]) == 5
    assert (await env.memory.get_final(report.trace_id))["findings"][0]["line"] == 6


async def test_an_answer_without_json_is_asked_once_for_the_block(sandbox, repo, bug_diff, workdir, tmp_path):
    """A small model that describes the bug and never writes the block gets one follow-up asking for the
    JSON alone (its own answer in the conversation); the block it then writes counts."""
    pool = ModelPool()
    prose = "The change divides by len(xs) - 1, which is wrong for every list."
    pool.add("scripted:0", ScriptedModel([prose, answer(finding())], spec="scripted:0", logprob=-0.2))
    pool.add("scripted:1", ScriptedModel([answer(finding())], spec="scripted:1", logprob=-0.2))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path)
    cfg = config(2)
    report = await run_review(prepare(bug_diff, repo, cfg, workdir), cfg, env)
    assert [g.agents for g in report.findings] == [["agent0", "agent1"]] and report.unusable == []
    follow_up = pool.get("scripted:0").calls[1]
    assert follow_up[-2] == {"role": "assistant", "content": prose}
    assert "no JSON block" in follow_up[-1]["content"] and "calc.py" in follow_up[-1]["content"]
    roles = [c.role for c in report.ledger.calls]
    assert sorted(roles) == ["review", "review", "review-format"]
    cfg0 = config(2, format_retries=0)  # off: the prose answer is unusable, as before
    pool0 = ModelPool()
    pool0.add("scripted:0", ScriptedModel([prose, answer(finding())], spec="scripted:0"))
    pool0.add("scripted:1", ScriptedModel([answer(finding())], spec="scripted:1"))
    env0 = RunEnv(pool=pool0, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path)
    (workdir / "off").mkdir()
    off = await run_review(prepare(bug_diff, repo, cfg0, workdir / "off"), cfg0, env0)
    assert [u.agent for u in off.unusable] == ["agent0"] and off.ledger.totals().calls == 2
    assert off.unusable[0].reason == "unreadable"


def test_a_finding_that_copies_the_prompts_example_is_dropped():
    copied = answer(finding(message="what is wrong and why", suggestion="replacement lines"))
    review = parse_review(copied, agent="a", part="calc.py")
    assert review.findings == [] and review.dropped == ["finding 0: it copies the prompt's example"]
    shouted = parse_review(answer(finding(message="WHAT IS WRONG AND WHY")), agent="a", part="calc.py")
    assert shouted.findings == []  # the prompts write the placeholders in capitals
    kept = parse_review(answer(finding(suggestion="REPLACEMENT LINES")), agent="a", part="calc.py")
    assert len(kept.findings) == 1 and kept.findings[0].suggestion is None


async def test_a_failing_agent_is_recorded_and_the_others_decide(sandbox, repo, bug_diff, workdir, tmp_path):
    ok = answer(finding())
    report, _ = await review(sandbox, repo, bug_diff, workdir, tmp_path, [ok, ModelUnavailable("down"), ok])
    assert [g.agents for g in report.findings] == [["agent0", "agent2"]]
    assert report.unusable[0].agent == "agent1" and "ModelUnavailable" in report.unusable[0].error
    assert report.unusable[0].reason == "model"
    assert report.ledger.totals().failed_calls == 1
    assert report.tests is None and report.patch is None  # no suggestion, no --test


async def test_a_patch_that_breaks_the_tests_is_offered_with_its_failure(
    sandbox, repo, bug_diff, workdir, tmp_path
):
    wrong = answer(finding(suggestion="    return total"))
    report, _ = await review(sandbox, repo, bug_diff, workdir, tmp_path, [wrong, wrong, wrong], test=TEST)
    assert report.patch.diff and report.patch.tests is not None and not report.patch.tests.passed
    assert "FAILED" in report.patch.tests.output


async def test_without_a_test_command_the_patch_is_untested(sandbox, repo, bug_diff, workdir, tmp_path):
    fixing = answer(finding(suggestion=FIX))
    report, _ = await review(sandbox, repo, bug_diff, workdir, tmp_path, [fixing])
    assert report.patch.diff and report.patch.tests is None


async def test_the_budget_stops_the_review_and_says_so(sandbox, repo, bug_diff, workdir, tmp_path):
    ok = answer(finding())
    report, _ = await review(
        sandbox, repo, bug_diff, workdir, tmp_path, [ok, ok, ok], budget=Budget(tokens=1)
    )
    assert report.stopped == "budget" and len(report.unusable) == 3 and report.findings == []
    assert not report.complete and "budget" in report.incomplete_reason  # no stage ran: exit 3, not 0
    assert {u.reason for u in report.unusable} == {"budget"}


async def test_a_differential_stage_that_compared_no_function_is_not_a_stage_that_ran(
    sandbox, repo, workdir, tmp_path
):
    """The diff adds a text file: the differential stage finds no function to compare, and the budget
    refuses every reading answer. Nothing was executed, so the review is not complete (exit 3)."""
    notes = diff_of(repo, "notes.txt", "a note\n")
    ok = answer(finding(file="notes.txt", line=1, end_line=1))
    report, _ = await review(
        sandbox,
        repo,
        notes,
        workdir,
        tmp_path,
        [ok],
        budget=Budget(tokens=1),
        stages=["differential", "reading"],
    )
    assert report.differential is not None and report.differential.functions == []
    assert report.stages_run == ["differential", "reading"] and report.stopped == "budget"
    assert not report.complete and "before any stage ran" in report.incomplete_reason


async def test_compute_is_counted_from_the_models_sizes(sandbox, repo, bug_diff, workdir, tmp_path):
    ok = answer(finding())
    unknown, _ = await review(sandbox, repo, bug_diff, workdir, tmp_path, [ok])
    assert unknown.ledger.totals().compute is None  # a model of unknown size: no compute, not zero
    sized, _ = await review(sandbox, repo, bug_diff, workdir, tmp_path, [ok], params={"scripted:0": 1e9})
    t = sized.ledger.totals()
    assert t.tokens > 0 and t.compute == pytest.approx(2e9 * t.tokens)
    assert to_json(sized)["ledger"]["compute"] == t.compute and "TFLOP" in to_markdown(sized)


@pytest.mark.parametrize(
    ("fail_on", "fails"), [("medium", True), ("high", True), ("critical", False), ("never", False)]
)
async def test_fail_on(sandbox, repo, bug_diff, workdir, tmp_path, fail_on, fails):
    """The reading review's finding (high, unverified) counts only with fail_on_unverified."""
    report, _ = await review(
        sandbox,
        repo,
        bug_diff,
        workdir,
        tmp_path,
        [answer(finding())],
        fail_on=fail_on,
        fail_on_unverified=True,
    )
    assert report.fails() is fails
    assert [g.verified for g in report.findings] == [False]
    report.config = report.config.model_copy(update={"fail_on_unverified": False})
    assert not report.fails()  # by default --fail-on counts verified findings only
    report.findings[0].verified = True
    assert report.fails() is fails


def test_prepare_refuses_bad_input_before_any_model(repo, workdir):
    cfg = config(1)
    with pytest.raises(ReviewInputError, match="not a unified diff"):
        prepare("just words", repo, cfg, workdir)
    with pytest.raises(ReviewInputError, match="does not apply"):
        prepare("--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-nothing like this\n+x\n", repo, cfg, workdir)
    gone = diff_of(repo, "calc.py", "")
    gone = gone[gone.index("--- ") :].replace(
        "+++ b/calc.py", "+++ /dev/null"
    )  # git's deletion, no git header
    with pytest.raises(ReviewInputError, match="nothing in the diff can be reviewed"):
        prepare(gone, repo, cfg, workdir)
    assert os.path.exists(repo / "calc.py")


def test_a_diff_file_changing_a_mode_alone_says_nothing_in_it_can_be_reviewed(repo, workdir):
    """A mode change alone applies both ways, so it was refused as a diff whose direction cannot be told
    rather than as one with nothing to review."""
    mode = "diff --git a/calc.py b/calc.py\nold mode 100644\nnew mode 100755\n"
    with pytest.raises(ReviewInputError) as e:
        prepare(mode, repo, config(1), workdir)
    assert str(e.value) == (
        "nothing in the diff can be reviewed (calc.py: mode changed from 100644 to 100755, content unchanged)"
    )


def test_config_is_recorded_as_json():
    assert json.loads(config(2, test=TEST).model_dump_json())["test"] == TEST


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid is leased only when Memdoor runs as root")
def test_prepare_refuses_a_workdir_the_test_sandbox_cannot_reach(repo, bug_diff, tmp_path):
    from memdoor.core.errors import SandboxError

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "work").mkdir()
    with pytest.raises(SandboxError, match="not searchable"):
        prepare(bug_diff, repo, config(1, test=TEST), private / "work")
    assert prepare(bug_diff, repo, config(1), private / "work").parts  # no test command: no sandbox


def test_a_binary_range_s_finding_points_at_a_binary_file_the_change_keeps(tmp_path):
    """Not a deleted file, nor a rename's old name; a name that is not UTF-8 only as a report can hold it."""
    from memdoor.review.session import binary_location

    (tmp_path / "kept.bin").write_bytes(b"\x00")
    bad = os.fsdecode(b"d\xff.bin")
    (tmp_path / bad).write_bytes(b"\x00")
    assert binary_location(["a-deleted.bin", "kept.bin"], tmp_path) == "kept.bin"
    assert binary_location([bad, "kept.bin"], tmp_path) == "kept.bin"
    assert binary_location([bad], tmp_path) == "d\\xff.bin"
    assert binary_location(["gone.bin"], tmp_path) == "gone.bin"
    assert binary_location([], tmp_path) == "-"
