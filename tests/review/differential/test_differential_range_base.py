"""The differential stage of a git range (``--base`` with or without ``--head``) builds its base the one
way the review does for the tests, from the base commit: a change whose own ``.gitattributes`` asks for
CRLF line endings (repro r3) made the reversed diff fail to apply, and the stage compared nothing ("the
base cannot be rebuilt"). Real git, the real sandbox, a scripted agent; the test stage runs too, so both
stages build a base in the same review."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from review_helpers import BUGGY, git, make_repo

from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.review import session
from memdoor.review.gitrange import export_tree, read_range
from memdoor.review.session import ReviewConfig, ReviewReport, prepare, run_review
from memdoor.run.env import RunEnv

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the test stage needs bubblewrap")

TEST = "python3 -m unittest -q"
INPUTS = '```json\n[["[2, 4]"]]\n```'


@pytest.fixture
def place():
    """A directory the test command's unprivileged uid can reach (pytest's tmp_path is private)."""
    with tempfile.TemporaryDirectory(prefix="memdoor-differential-range-") as tmp:
        os.chmod(tmp, 0o711)
        yield Path(tmp)


def crlf_change(repo: Path, *, checked_out: bool) -> None:
    """review_helpers' repository with a head commit that adds ``*.py text eol=crlf`` and the mean's bug;
    with ``checked_out``, the working tree as git checks the change out under its attributes (CRLF)."""
    make_repo(repo)
    (repo / ".gitattributes").write_text("*.py text eol=crlf\n")
    (repo / "calc.py").write_text(BUGGY)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mean: tidy")
    if checked_out:
        for name in ("calc.py", "test_calc.py"):
            (repo / name).unlink()
        git(repo, "checkout", "--", "calc.py", "test_calc.py")
        assert b"\r\n" in (repo / "calc.py").read_bytes()


async def review_range(sandbox, repo: Path, head: str | None, place: Path) -> ReviewReport:
    """``memdoor review --base HEAD~1 [--head HEAD] --stages tests,differential`` as the command runs it,
    its one agent scripted (inputs when asked for them)."""
    found = read_range(repo, "HEAD~1", head, 1_000_000)
    work = place / "work"
    work.mkdir()
    tree = export_tree(repo, found.head_commit, work / "head") if found.head_commit else repo
    pool = ModelPool()
    pool.add("scripted:0", ScriptedModel(respond=lambda _: INPUTS, spec="scripted:0"))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=place / "traces")
    cfg = ReviewConfig(
        agents=1, models=["scripted:0"], description="refactor, no behaviour change", test=TEST,
        stages=["tests", "differential"],
    )  # fmt: skip
    report = await run_review(prepare(found.diff, tree, cfg, work, found), cfg, env)
    assert report.error is None, report.error
    return report


@pytest.mark.parametrize(
    "head", [pytest.param("HEAD", id="head-commit"), pytest.param(None, id="working-tree")]
)
async def test_crlf_attributes_of_the_change_never_stop_the_differential_stage(sandbox, place, head):
    repo = place / "repo"
    crlf_change(repo, checked_out=head is None)
    report = await review_range(sandbox, repo, head, place)
    stage = report.differential
    assert stage is not None and stage.stopped is None, stage  # "the base cannot be rebuilt" before the fix
    (fn,) = stage.functions
    assert (fn.file, fn.name, fn.outcome) == ("calc.py", "mean", "reported") and fn.unintended >= 1
    shown = {(d.input.text, d.old.text, d.new.text) for d in stage.differences}
    assert ("[[0, 1]]", "0.5", "1.0") in shown and {d.verdict for d in stage.differences} == {"unintended"}
    assert fn.inputs_agents == 1  # the agent's input ran too
    ran = [g for g in report.findings if g.counterexample is not None]
    assert ran and ran[0].counterexample.function == "mean" and ran[0].verified
    # the test stage built its base in the same review, from the same commit: test_empty failed there
    assert [t.name for t in report.pre_existing] == ["test_calc.T.test_empty"]
    assert any(g.source == "tests" and "test_mean" in g.message for g in report.findings)
    assert report.complete and report.stages_run == ["tests", "differential"]
    # its base holds the diff's paths only, as the base commit has them (.gitattributes: absent there);
    # it was a second copy of the whole tree (test_calc.py too), on top of the test stage's two
    base = place / "work" / "differential-base"
    assert (
        sorted(p.name for p in base.iterdir()) == ["calc.py"] and b"\r" not in (base / "calc.py").read_bytes()
    )
    assert (place / "work" / "base" / "test_calc.py").is_file()  # the tests' base is still the whole tree


@pytest.mark.parametrize(
    "head", [pytest.param("HEAD", id="head-commit"), pytest.param(None, id="working-tree")]
)
async def test_a_base_the_file_system_cannot_build_stops_each_stage_with_its_reason(
    sandbox, place, head, monkeypatch
):
    """A rename, removal or copy refused while building a base (OSError) failed the whole review with
    the error's type; each stage now stops with the reason in one line and the review is incomplete."""

    def refused_rename(root, commit, copy, scratch):
        raise PermissionError(13, "Permission denied", str(scratch / "calc.py"), None, str(copy / "calc.py"))

    def full_disk(root, files, dest):
        raise OSError(28, "No space left on device", str(dest / "calc.py"))

    monkeypatch.setattr(session, "restore_base", refused_rename)  # the tests' base, working tree
    monkeypatch.setattr(session, "copy_tree", full_disk)  # the differential's base; the tests' with --head
    repo = place / "repo"
    crlf_change(repo, checked_out=False)
    report = await review_range(sandbox, repo, head, place)  # no report.error: nothing crashed
    why = "base-tree/calc.py -> base/calc.py: Permission denied" if head is None else "base/calc.py: No space"
    assert not report.complete and report.incomplete_reason.startswith(f"the base cannot be built: {why}")
    assert (
        report.base_tests is None and report.tests is None and report.stages_run == ["tests", "differential"]
    )
    stage = report.differential
    assert stage is not None and stage.functions == []
    assert stage.stopped == "the base cannot be built: differential-base/calc.py: No space left on device"
    assert "\n" not in report.incomplete_reason


async def test_a_diff_files_base_the_file_system_cannot_copy_stops_the_stage_with_its_reason(
    sandbox, place, monkeypatch
):
    """A diff file's differential base is the changed copy's files with the diff reversed: a copy the file
    system refused there (OSError) escaped the stage and failed the whole review."""
    from memdoor.review.differential import trees

    def full_disk(root, files, dest):
        raise OSError(28, "No space left on device", str(dest / "calc.py"))

    repo = place / "repo"
    make_repo(repo)
    (repo / "calc.py").write_text(BUGGY)
    diff = git(repo, "diff")
    git(repo, "checkout", "--", "calc.py")  # the checkout at the base, as for a patch file
    monkeypatch.setattr(trees, "copy_tree", full_disk)
    pool = ModelPool()
    pool.add("scripted:0", ScriptedModel(respond=lambda _: INPUTS, spec="scripted:0"))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=place / "traces")
    cfg = ReviewConfig(agents=1, models=["scripted:0"], description="refactor", stages=["differential"])
    work = place / "work"
    work.mkdir()
    report = await run_review(prepare(diff, repo, cfg, work), cfg, env)
    assert report.error is None, report.error  # "OSError" before the fix
    stage = report.differential
    assert stage is not None and stage.functions == []
    assert stage.stopped == "the base cannot be built: differential-base/calc.py: No space left on device"
    assert not report.complete and "\n" not in report.incomplete_reason
