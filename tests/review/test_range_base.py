"""The test stage of a git range (``--base`` with or without ``--head``) against changes that attack the
review itself (security review): the base is built from the base commit, never from the diff
reversed, so the change's own ``.gitattributes`` can neither hide a file from the diff (``-diff``,
``binary``) and keep its head version in the base run, nor make the base impossible to rebuild
(``eol=crlf``); a ``node_modules`` link the change commits never shows a host directory. Real git,
real bubblewrap, no model (the test stage needs none)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from review_helpers import git

from memdoor.agents.calls import CallContext
from memdoor.core.budget import Budget, BudgetTracker
from memdoor.core.ledger import Ledger
from memdoor.core.trace import Trace
from memdoor.memory.inproc import InProcMemory
from memdoor.review.differential.trees import touched_paths
from memdoor.review.gitrange import export_tree, read_range, restore_base
from memdoor.review.session import ReviewConfig, base_tree, prepare
from memdoor.review.session import test_stage as run_test_stage
from memdoor.review.teststage import TestStage

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the test stage needs bubblewrap")

TEST = "python3 -m unittest -q"
CALC = "def add(a, b):\n    return a + b\n"
TESTS = "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 2), 4)\n"  # fmt: skip
HEAD_MODES = [pytest.param("HEAD", id="head-commit"), pytest.param(None, id="working-tree")]


@pytest.fixture
def place():
    """A directory the test command's unprivileged uid can reach (pytest's tmp_path is private)."""
    with tempfile.TemporaryDirectory(prefix="memdoor-range-base-") as tmp:
        os.chmod(tmp, 0o711)
        yield Path(tmp)


def commit(repo: Path, files: dict[str, str | bytes], message: str, links: dict[str, str] | None = None):
    for name, content in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (repo / name).write_bytes(content)
        else:
            (repo / name).write_text(content)
    for name, target in (links or {}).items():
        (repo / name).symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def base_repo(place: Path, files: dict[str, str | bytes] | None = None) -> Path:
    repo = place / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    commit(repo, {"calc.py": CALC, "test_calc.py": TESTS, **(files or {})}, "base")
    return repo


async def stage_of(repo: Path, head: str | None, place: Path) -> tuple[TestStage, list[str]]:
    """The test stage of ``HEAD~1`` against ``head`` (None: the working tree), as ``memdoor review
    --base HEAD~1 [--head HEAD]`` runs it; and the files the range leaves out as binary."""
    found = read_range(repo, "HEAD~1", head, 1_000_000)
    work = place / "work"
    work.mkdir(exist_ok=True)
    tree = export_tree(repo, found.head_commit, work / "head") if found.head_commit else repo
    config = ReviewConfig(test=TEST, stages=["tests"], models=["scripted:none"])
    prepared = prepare(found.diff, tree, config, work, found)
    ctx = CallContext(memory=InProcMemory(), budget=BudgetTracker(Budget()), ledger=Ledger(), trace=Trace())
    return await run_test_stage(prepared, config, ctx), found.binary


@pytest.mark.parametrize("head", HEAD_MODES)
async def test_attributes_calling_a_changed_file_binary_never_make_a_regression_pre_existing(place, head):
    """Repro r2: ``calc.py -diff`` left calc.py out of the diff, so the base kept its head version and
    the broken test counted as failing on the base already: no finding, exit 0."""
    repo = base_repo(place)
    commit(repo, {".gitattributes": "calc.py -diff\n", "calc.py": CALC.replace("a + b", "a - b")}, "head")
    stage, binary = await stage_of(repo, head, place)
    assert binary == []  # text by content, whatever the change's attributes say
    assert stage.unusable is None and stage.base is not None and stage.base.passed, stage.base
    assert stage.pre_existing == [] and [g.test for g in stage.findings] == ["test_calc.T.test_add"]


@pytest.mark.parametrize("head", HEAD_MODES)
async def test_a_changed_binary_file_is_the_base_commits_in_the_base_run(place, head):
    """A file binary by content stays out of the diff, and the base run still sees its base version."""
    data = "import unittest\n\n\nclass D(unittest.TestCase):\n    def test_data(self):\n        self.assertEqual(open('data.bin', 'rb').read(), b'\\0one')\n"  # fmt: skip
    repo = base_repo(place, {"data.bin": b"\0one", "test_data.py": data})
    commit(repo, {"data.bin": b"\0two", "calc.py": CALC + "\n# touched\n"}, "head")
    stage, binary = await stage_of(repo, head, place)
    assert binary == ["data.bin"]
    assert stage.base is not None and stage.base.passed, stage.base.output
    assert stage.pre_existing == [] and [g.test for g in stage.findings] == ["test_data.D.test_data"]


@pytest.mark.parametrize("head", HEAD_MODES)
async def test_crlf_attributes_of_the_change_never_stop_the_base_from_being_built(place, head):
    """Repro r3: ``*.py text eol=crlf`` made ``git apply -R`` of the LF diff fail on the CRLF copy:
    "the base cannot be rebuilt from the changed copy", exit 3."""
    repo = base_repo(place)
    commit(
        repo, {".gitattributes": "*.py text eol=crlf\n", "calc.py": CALC.replace("a + b", "a - b")}, "head"
    )
    if head is None:  # the working tree as git checks the change out there: CRLF
        for name in ("calc.py", "test_calc.py"):
            (repo / name).unlink()
        git(repo, "checkout", "--", "calc.py", "test_calc.py")
        assert b"\r\n" in (repo / "calc.py").read_bytes()
    stage, _ = await stage_of(repo, head, place)
    assert stage.unusable is None and stage.base is not None and stage.base.passed, stage.base.output
    assert [g.test for g in stage.findings] == ["test_calc.T.test_add"]


@pytest.mark.parametrize("target", ["absolute", "relative"])
@pytest.mark.parametrize("head", HEAD_MODES)
async def test_a_node_modules_link_of_the_change_never_shows_a_host_directory(place, head, target):
    """Repro r4: the change commits ``node_modules -> /host/secret`` and a test listing node_modules
    (hidden from the review by ``test_leak.py binary``); the base run printed the host's secret."""
    secret = place / "secret"
    for where in (secret, place / "work" / "secret"):  # ../secret of the checkout, and of the exported head
        where.mkdir(parents=True)
        (where / "s.txt").write_text("TOPSECRET")
    leak = "import os\nfor n in os.listdir('node_modules'):\n    print('LEAK', n, open(os.path.join('node_modules', n)).read())\n"  # fmt: skip
    repo = base_repo(place)
    link = str(secret) if target == "absolute" else "../secret"
    commit(
        repo,
        {".gitattributes": "test_leak.py binary\n", "test_leak.py": leak},
        "leak",
        {"node_modules": link},
    )
    stage, binary = await stage_of(repo, head, place)
    assert binary == []  # test_leak.py is reviewed
    runs = [r for r in (stage.base, stage.head) if r is not None]
    assert len(runs) == 2
    for run in runs:
        assert "TOPSECRET" not in run.output and not any("secret" in s for s in run.sees), run


async def test_against_the_working_tree_the_base_keeps_its_untracked_files(place):
    """Against the working tree, the base is the working tree's copy with the range's paths put back as
    the base commit has them: an untracked module the tests import is in both runs."""
    repo = base_repo(place)
    (repo / "test_calc.py").write_text(
        TESTS.replace("from calc import add", "from calc import add\nimport local_settings")
    )
    git(repo, "commit", "-qam", "tests use local settings")
    (repo / "local_settings.py").write_text("DEBUG = True\n")  # untracked, not ignored
    (repo / "calc.py").write_text(CALC.replace("a + b", "a - b"))
    stage, _ = await stage_of(repo, None, place)
    assert stage.unusable is None and stage.base is not None and stage.base.passed, stage.base.output
    assert [g.test for g in stage.findings] == ["test_calc.T.test_add"]


def test_restoring_the_base_never_writes_or_removes_through_a_link(place):
    """The working tree replaced the directory ``lib`` by a link to a host directory: the base's
    ``lib/x.py`` is written into the copy, never through the link; the host directory is untouched."""
    outside = place / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("HOST\n")
    (outside / "y.py").write_text("HOST\n")
    repo = base_repo(place, {"lib/x.py": "BASE\n", "doc.txt": "base\n"})
    shutil.rmtree(repo / "lib")
    (repo / "lib").symlink_to(outside)
    (repo / "new.py").write_text("added\n")
    git(repo, "add", "-A")
    (repo / "doc.txt").unlink()
    copy = place / "copy"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    restore_base(repo, git(repo, "rev-parse", "HEAD").strip(), copy, place / "scratch")
    assert not (copy / "lib").is_symlink() and (copy / "lib" / "x.py").read_text() == "BASE\n"
    assert (copy / "doc.txt").read_text() == "base\n" and not (copy / "new.py").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["x.py", "y.py"]
    assert (outside / "x.py").read_text() == "HOST\n"


def files_under(top: Path) -> dict[str, bytes]:
    """Every file or link under ``top`` (``.git`` aside), by path: its bytes or its link's target."""
    out = {}
    for path in sorted(top.rglob("*")):
        rel = path.relative_to(top).as_posix()
        if rel == ".git" or rel.startswith(".git/") or (path.is_dir() and not path.is_symlink()):
            continue
        out[rel] = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
    return out


@pytest.mark.parametrize("head", HEAD_MODES)
def test_a_base_of_the_diffs_paths_only_is_the_whole_bases_at_those_paths(place, head):
    """The differential stage's base (``paths``): the base commit's versions of the diff's paths and
    nothing else, neither an untouched large file nor the working tree's untracked one; at each of those
    paths, what the tests' whole base has there."""
    repo = base_repo(place, {"big.txt": "x" * 1_000_000, "old.py": "OLD = 1\n" * 20, "gone.py": "G = 1\n"})
    (repo / "old.py").rename(repo / "new.py")
    (repo / "gone.py").unlink()
    commit(repo, {"calc.py": CALC.replace("a + b", "a - b"), "new.py": "OLD = 1\n" * 19 + "OLD = 2\n",
                  "added.py": "A = 1\n"}, "head")  # fmt: skip
    (repo / "local.py").write_text("LOCAL = 1\n")  # untracked: in the working tree's whole base only
    found = read_range(repo, "HEAD~1", head, 1_000_000)
    work = place / "work"
    work.mkdir()
    tree = export_tree(repo, found.head_commit, work / "head") if found.head_commit else repo
    prepared = prepare(found.diff, tree, ReviewConfig(stages=["reading"]), work, found)
    paths = sorted(touched_paths(prepared.files))
    assert paths == ["added.py", "calc.py", "gone.py", "new.py", "old.py"]
    some = files_under(base_tree(prepared, work / "differential-base", paths))
    whole = files_under(base_tree(prepared, work / "base"))
    assert sorted(some) == ["calc.py", "gone.py", "old.py"]
    assert some == {p: whole[p] for p in paths if p in whole}
    assert "big.txt" in whole and ("local.py" in whole) == (head is None)
    assert files_under(work / "differential-base-tree").keys() == some.keys()  # git wrote those alone


def test_the_base_puts_back_a_file_the_checkouts_ident_hid(place):
    """``*.py ident`` made git read the working tree's ``$Id: anything $`` as the base's ``$Id$``: the
    path was not put back, and the tests' base ran the change too."""
    base = 'VERSION = f"$Id$"\n' + CALC
    repo = base_repo(place, {".gitattributes": "*.py ident\n", "calc.py": base})
    (repo / "calc.py").write_text("VERSION = f\"$Id: {print('BACKDOOR RAN')} $\"\n" + CALC)
    copy = place / "copy"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    restore_base(repo, git(repo, "rev-parse", "HEAD").strip(), copy, place / "scratch")
    restored = (copy / "calc.py").read_text()  # the base's blob, $Id$ not expanded (what the review shows)
    assert "BACKDOOR" not in restored and restored == base


@pytest.mark.parametrize("head", HEAD_MODES)
async def test_a_utf16_file_is_what_a_checkout_holds_in_both_runs(place, head):
    """Review finding: a UTF-16 file (``working-tree-encoding``) was read as its bytes and exported as its
    blob: against the working tree the tests' base got it as UTF-8 while the head kept UTF-16, with
    ``--head`` both runs did, so a test reading it failed on the base (a break of the head then counts as
    pre-existing). Both runs now hold what a checkout holds, and the file the change leaves is no change."""
    res = "import pathlib, unittest\n\n\nclass R(unittest.TestCase):\n    def test_res(self):\n        self.assertEqual(pathlib.Path('res.txt').read_bytes().decode('utf-16-le'), 'caf\\u00e9\\r\\n')\n"  # fmt: skip
    utf16 = {".gitattributes": "*.txt text working-tree-encoding=UTF-16LE eol=crlf\n", "test_res.py": res}
    repo = base_repo(place, {**utf16, "res.txt": "caf\u00e9\r\n".encode("utf-16-le")})
    commit(repo, {"calc.py": CALC.replace("a + b", "a - b")}, "head")
    stage, binary = await stage_of(repo, head, place)
    assert binary == [] and stage.unusable is None
    assert stage.base is not None and stage.base.passed, stage.base.output
    assert stage.pre_existing == [] and [g.test for g in stage.findings] == ["test_calc.T.test_add"]


@pytest.mark.parametrize("head", HEAD_MODES)
async def test_a_virtualenv_link_of_the_change_never_shows_a_host_directory(place, head, monkeypatch):
    """The change commits ``.venv -> /host/dir`` and the user's VIRTUAL_ENV is the checkout's .venv: with
    ``--head`` the test command's view was worked out from the exported tree, where no link is tracked
    by the user's git, so the host directory was bound and a test read it."""
    secret = place / "secret"
    secret.mkdir()
    (secret / "s.txt").write_text("TOPSECRET")
    leak = f"print('LEAK', open({str(secret / 's.txt')!r}).read())\n"
    repo = base_repo(place)
    commit(repo, {"test_leak.py": leak}, "leak", {".venv": str(secret)})
    monkeypatch.setenv("VIRTUAL_ENV", str(repo / ".venv"))
    stage, _ = await stage_of(repo, head, place)
    runs = [r for r in (stage.base, stage.head) if r is not None]
    assert len(runs) == 2
    for run in runs:
        assert "TOPSECRET" not in run.output and not any("secret" in s for s in run.sees), run
        assert any("VIRTUAL_ENV" in h and "leads out of the checkout" in h for h in run.hidden), run.hidden
