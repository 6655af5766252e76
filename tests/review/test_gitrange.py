"""A git range as the review's input, with the real git: the diff of base..head (or base against the
working tree), bounded, binary files left out, commit messages, the head's tree exported; and git never
runs a program the repository names (filters, hooks)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from review_helpers import BUGGY, CALC, git

from memdoor.core.errors import ReviewInputError
from memdoor.review import gitrange
from memdoor.review.diff import parse_diff
from memdoor.review.gitrange import changed_paths, export_tree, read_range, restore_base
from memdoor.review.session import ReviewConfig, prepare


@pytest.fixture
def ranged(repo):
    """``repo`` with a second commit making the bug and adding a binary file."""
    (repo / "calc.py").write_text(BUGGY)
    (repo / "logo.png").write_bytes(b"\x89PNG\x00\x01\x02")
    git(repo, "add", "calc.py", "logo.png")
    git(repo, "commit", "-qm", "mean: divide by n - 1\n\nSample variance style.")
    return repo


def test_base_against_the_working_tree(repo):
    (repo / "calc.py").write_text(BUGGY)
    found = read_range(repo, "HEAD", None, 1_000_000)
    (f,) = parse_diff(found.diff)
    assert f.path == "calc.py" and f.added_lines == 1 and "len(xs) - 1" in found.diff
    assert found.head_commit is None and found.messages == "" and found.binary == []


def test_base_to_head_with_messages_and_binary_files_left_out(ranged):
    (ranged / "calc.py").write_text("# the working tree holds something else\n")
    found = read_range(ranged, "HEAD~1", "HEAD", 1_000_000)
    assert [f.path for f in parse_diff(found.diff)] == ["calc.py"]  # parse_diff refuses binary diffs
    assert "something else" not in found.diff and "len(xs) - 1" in found.diff
    assert found.binary == ["logo.png"]
    assert found.messages == "mean: divide by n - 1\n\nSample variance style."
    assert found.name == "HEAD~1..HEAD"


def test_binary_is_decided_by_content_never_by_the_ranges_own_attributes(ranged):
    """Security review: ``calc.py -diff`` (or ``binary``) in the change's .gitattributes hid a text file
    from the review; ``logo.png diff`` cannot make a file with NUL bytes text either. The working tree's
    side, which git has not hashed, is read from the file."""
    (ranged / ".gitattributes").write_text("calc.py binary\nlogo.png diff\n")
    git(ranged, "add", ".gitattributes")
    (ranged / "calc.py").write_text(BUGGY + "# more\n")
    (ranged / "logo.png").write_bytes(b"\x89PNG\x00\x07")
    found = read_range(ranged, "HEAD", None, 1_000_000)
    assert found.binary == ["logo.png"]
    assert [f.path for f in parse_diff(found.diff)] == [".gitattributes", "calc.py"]
    assert "+# more" in found.diff


def test_only_binary_changes_and_no_change_are_refused_unless_tests_run(ranged):
    (ranged / "logo.png").write_bytes(b"\x89PNG\x00\x09")
    git(ranged, "commit", "-qam", "new logo")
    with pytest.raises(ReviewInputError, match="only binary files change"):
        read_range(ranged, "HEAD~1", "HEAD", 1_000_000)
    for_tests = read_range(ranged, "HEAD~1", "HEAD", 1_000_000, for_tests=True)  # a test can read it
    assert (for_tests.diff, for_tests.binary) == ("", ["logo.png"])
    with pytest.raises(ReviewInputError, match="nothing changes between HEAD and the working tree"):
        read_range(ranged, "HEAD", None, 1_000_000)


@pytest.mark.parametrize(
    ("base", "head", "says"),
    [
        ("no-such-branch", None, "--base no-such-branch: no such commit"),
        ("HEAD", "no-such-ref", "--head no-such-ref: no such commit"),
        ("--output=/tmp/x", None, "not a git revision"),
        ("HEAD --", None, "not a git revision"),
        (os.fsdecode(b"\xffb"), None, r"--base \\xffb: not a git revision \(not UTF-8\)"),
        ("HEAD", os.fsdecode(b"b\xfe"), r"--head b\\xfe: not a git revision \(not UTF-8\)"),
        ("HEAD~1", "HEAD", "larger than 100 bytes"),
    ],
)
def test_bad_refs_and_a_large_diff_are_one_line_of_bad_input(ranged, base, head, says):
    with pytest.raises(ReviewInputError, match=says) as e:
        read_range(ranged, base, head, 100)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("bound", [50, 103])  # cut in the first entry's object ids, or in its path
def test_a_list_of_changed_files_too_long_to_read_whole_is_refused_in_one_line(ranged, monkeypatch, bound):
    """git's list of the range's files (``--raw``), cut at its bound, made the binary check raise an
    IndexError, or read a path cut short."""
    monkeypatch.setattr(gitrange, "MAX_LIST_BYTES", bound)
    with pytest.raises(
        ReviewInputError, match=f"the files the range changes is larger than {bound} bytes"
    ) as e:
        read_range(ranged, "HEAD~1", "HEAD", 1_000_000)
    assert "\n" not in str(e.value)


def test_the_paths_to_restore_are_never_a_list_cut_short(ranged, monkeypatch):
    """The base's paths to put back (``--name-only``: ``calc.py``, ``logo.png``, 18 bytes) were cut at the
    bound without a word, leaving the base silently incomplete."""
    monkeypatch.setattr(gitrange, "MAX_LIST_BYTES", 18)
    assert changed_paths(ranged, ["HEAD~1", "HEAD"]) == ["calc.py", "logo.png"]
    monkeypatch.setattr(gitrange, "MAX_LIST_BYTES", 10)
    with pytest.raises(ReviewInputError, match="larger than 10 bytes; review it in parts"):
        changed_paths(ranged, ["HEAD~1", "HEAD"])


def test_no_filter_or_hook_of_the_repository_runs(repo, tmp_path):
    """A .gitattributes filter whose driver the configuration defines runs on `git diff` of a
    modified working tree file; the range's git does not run it."""
    marker = tmp_path / "ran"
    (repo / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(repo, "config", "filter.evil.process", f"touch {marker}")
    git(repo, "config", "diff.evil.command", f"touch {marker}")
    git(repo, "config", "diff.evil.textconv", f"touch {marker}; cat")
    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    (repo / "calc.py").write_text(BUGGY)
    found = read_range(repo, "HEAD~1", None, 1_000_000)
    assert "len(xs) - 1" in found.diff
    assert not marker.exists()


def test_the_head_tree_is_exported_and_reviewed_not_the_working_tree(ranged, tmp_path):
    (ranged / "calc.py").write_text(CALC + "# uncommitted\n")
    found = read_range(ranged, "HEAD~1", "HEAD", 1_000_000)
    tree = export_tree(ranged, found.head_commit, tmp_path / "work" / "head")
    assert (tree / "calc.py").read_text() == BUGGY and (tree / "logo.png").exists()
    prepared = prepare(found.diff, tree, ReviewConfig(), tmp_path / "work")
    assert (prepared.changed / "calc.py").read_text() == BUGGY
    assert (ranged / "calc.py").read_text() == CALC + "# uncommitted\n"  # the user's tree untouched
    assert git(ranged, "worktree", "list").count("\n") == 1  # no worktree added to the checkout


MEAN = "def mean(xs):\n    return sum(xs) / len(xs)\n"
DOUBLED = MEAN + "\n" * 10 + "# end\n"
WRAPPED = MEAN + "\n" * 3 + "mean = (lambda f: lambda xs: -f(xs))(mean)\n" + "\n" * 7 + "# end\n"


@pytest.mark.parametrize("head", ["HEAD", None], ids=["head", "working-tree"])
def test_the_changed_tree_is_the_head_never_the_diff_applied_again(repo, tmp_path, head):
    """The head inserts a line among blank lines: its diff still applies to the head (its context is
    there), and was applied a second time, so the tests ran on a tree where the change cancels out."""
    (repo / "calc.py").write_text(DOUBLED)
    git(repo, "commit", "-qam", "blank lines")
    (repo / "calc.py").write_text(WRAPPED)
    git(repo, "commit", "-qam", "tidy")
    found = read_range(repo, "HEAD~1", head, 1_000_000)
    (tmp_path / "work").mkdir()
    tree = repo if head is None else export_tree(repo, found.head_commit, tmp_path / "work" / "head")
    again = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=tree, input=found.diff, text=True, check=False
    )
    assert again.returncode == 0  # the diff applies to the head once more
    prepared = prepare(found.diff, tree, ReviewConfig(), tmp_path / "work", found)
    assert (prepared.changed / "calc.py").read_bytes() == WRAPPED.encode()


HIDDEN = "VERSION = f\"$Id: {print('BACKDOOR RAN')} $\"\n"
"""A line git's ``ident`` reads as ``VERSION = f"$Id$"`` through the checkout (and never rewrites on
checkout: it has spaces)."""


@pytest.mark.parametrize("how", ["uncommitted", "committed"])
def test_a_change_the_checkouts_ident_hides_is_reviewed(repo, tmp_path, how):
    """``*.py ident`` makes git read ``$Id: anything $`` in a working tree file as ``$Id$``: the change
    was left out of `git diff BASE`, so the tests ran it and no reviewer read it. Uncommitted, or
    committed as its bytes (``hash-object --no-filters``) and checked out in a fresh clone (CI)."""
    (repo / ".gitattributes").write_text("*.py ident\n")
    (repo / "calc.py").write_text('VERSION = f"$Id$"\n' + CALC)
    git(repo, "add", ".gitattributes", "calc.py")
    git(repo, "commit", "-qm", "version")
    (repo / "calc.py").write_text(HIDDEN + CALC)
    if how == "committed":
        blob = git(repo, "hash-object", "-w", "--no-filters", "calc.py").strip()
        git(repo, "update-index", "--cacheinfo", f"100644,{blob},calc.py")
        git(repo, "commit", "-qm", "helper")
        git(tmp_path, "clone", "-q", str(repo), "clone")
        repo = tmp_path / "clone"
        assert (repo / "calc.py").read_text() == HIDDEN + CALC and not git(repo, "diff", "HEAD~1")
    found = read_range(repo, "HEAD~1" if how == "committed" else "HEAD", None, 1_000_000)
    (f,) = parse_diff(found.diff)
    assert f.path == "calc.py" and f"+{HIDDEN}" in found.diff


def test_the_working_tree_as_git_checked_it_out_is_no_change(repo):
    """Files exactly as git writes them (``$Id$`` expanded, CRLF for ``eol=crlf``) are their blobs, as
    with ``--head``: only what was changed is in the diff."""
    (repo / ".gitattributes").write_text("*.py ident\n*.txt text eol=crlf\n")
    (repo / "calc.py").write_text('VERSION = "$Id$"\n' + CALC)
    (repo / "notes.txt").write_text("one\ntwo\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "attributes")
    for name in ("calc.py", "notes.txt"):
        (repo / name).unlink()
    git(repo, "checkout", "--", ".")
    assert b"$Id: " in (repo / "calc.py").read_bytes() and b"\r\n" in (repo / "notes.txt").read_bytes()
    (repo / "test_calc.py").write_text("# no tests\n")
    found = read_range(repo, "HEAD", None, 1_000_000)
    assert [f.path for f in parse_diff(found.diff)] == ["test_calc.py"]


def test_the_working_tree_diff_is_gits_own_without_attributes(repo):
    """Without attributes the diff is ``git diff BASE``'s, byte for byte: a change, a deletion, a file
    added with ``git add -N``, an execute bit, a link, a file under a new directory."""
    (repo / "lib").mkdir()
    (repo / "lib" / "a.py").write_text("A = 1\n")
    (repo / "run.sh").write_text("echo hi\n")
    os.symlink("calc.py", repo / "link.py")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "more")
    (repo / "calc.py").write_text(BUGGY)
    (repo / "lib" / "a.py").unlink()
    (repo / "run.sh").chmod(0o755)
    (repo / "link.py").unlink()
    os.symlink("test_calc.py", repo / "link.py")
    (repo / "lib" / "b.py").write_text("B = 2\n")
    git(repo, "add", "-N", "lib/b.py")
    (repo / "untracked.py").write_text("not in the diff\n")
    found = read_range(repo, "HEAD", None, 1_000_000)
    assert found.diff == git(repo, "diff", *gitrange.DIFF_OPTIONS, "HEAD", "--", ".")
    assert [f.path for f in parse_diff(found.diff)] == [
        "calc.py",
        "lib/a.py",
        "lib/b.py",
        "link.py",
        "run.sh",
    ]


def test_a_partial_clone_with_a_sparse_checkout_is_reviewed(repo, tmp_path):
    """A blobless clone (``--filter=blob:none``) with a sparse checkout has no blob of the paths outside
    it: writing the working tree's tree refused them ("git write-tree: error: invalid object"), exit 2."""
    for name, text in (("a/calc.py", CALC), ("b/other.py", "OTHER = 1\n")):
        (repo / name).parent.mkdir()
        (repo / name).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "two directories")
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--sparse", f"file://{repo}", "clone")
    clone = tmp_path / "clone"
    git(clone, "sparse-checkout", "set", "a")
    missing = git(clone, "rev-list", "--objects", "--missing=print", "HEAD").split()
    assert "?" + git(clone, "rev-parse", "HEAD:b/other.py").strip() in missing  # outside: no blob
    (clone / "a" / "calc.py").write_text(BUGGY)
    found = read_range(clone, "HEAD", None, 1_000_000)
    (f,) = parse_diff(found.diff)
    assert f.path == "a/calc.py" and "len(xs) - 1" in found.diff


def test_files_a_filter_stores_are_their_blobs_unless_edited(repo, tmp_path):
    """``*.dat filter=fake`` (the shape of git-lfs: the index holds what the filter made of the file): each
    such file was read as its bytes, so all of them changed while only calc.py was edited (binary ones
    filled the skipped list, past MAX_BINARY the review was refused) and the tests' base got their
    indexed form."""
    git(repo, "config", "filter.fake.clean", "sed s/^DATA/PTR/")
    git(repo, "config", "filter.fake.smudge", "sed s/^PTR/DATA/")
    (repo / ".gitattributes").write_text("*.dat filter=fake\n")
    for n in range(3):
        (repo / f"d{n}.dat").write_text(f"DATA {n}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "data")
    assert git(repo, "show", "HEAD:d0.dat") == "PTR 0\n" and (repo / "d0.dat").read_text() == "DATA 0\n"
    for n in range(3):  # written a while before the index: not racily clean (git would compare them)
        os.utime(repo / f"d{n}.dat", (1_000_000_000, 1_000_000_000))
    git(repo, "update-index", "-q", "--refresh")  # the stat cache up to date, as after a checkout
    (repo / "calc.py").write_text(BUGGY)
    found = read_range(repo, "HEAD", None, 1_000_000)
    assert [f.path for f in parse_diff(found.diff)] == ["calc.py"] and found.binary == []
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    restore_base(repo, found.base_commit, copy, tmp_path / "scratch")
    assert (copy / "calc.py").read_text() == CALC and (copy / "d0.dat").read_text() == "DATA 0\n"


def test_a_file_a_filter_stores_that_the_range_changes_is_read_as_it_runs(repo, tmp_path):
    """The change stores calc.py through a filter (git-lfs: a pointer in the commit, the code in the
    checkout): its indexed blob is the pointer, the tests run the file, so the file is what is reviewed."""
    (tmp_path / "real.py").write_text(BUGGY)
    git(repo, "config", "filter.fake.clean", "cat >/dev/null; echo POINTER")
    git(repo, "config", "filter.fake.smudge", f"cat >/dev/null; cat {tmp_path / 'real.py'}")
    (repo / ".gitattributes").write_text("calc.py filter=fake\n")
    (repo / "calc.py").write_text(BUGGY)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "stored elsewhere")
    (repo / "calc.py").unlink()
    git(repo, "checkout", "--", "calc.py")
    git(repo, "status", "--porcelain")
    assert git(repo, "show", "HEAD:calc.py") == "POINTER\n" and (repo / "calc.py").read_text() == BUGGY
    found = read_range(repo, "HEAD~1", None, 1_000_000)
    assert "+    return total / (len(xs) - 1)" in found.diff and "POINTER" not in found.diff


@pytest.mark.parametrize("how", ["attribute", "autocrlf", "crlf-blob"])
def test_an_edit_of_a_crlf_checkout_is_that_edit_alone(repo, how):
    """A file git checks out with CRLF (``eol=crlf``, ``core.autocrlf``) was read as its bytes: one line
    added showed as every line rewritten. A blob that holds CRLF itself is read as ``git add`` reads it
    (not converted), as git diff shows it."""
    lines = "".join(f"set F={n}\n" for n in range(6))
    if how == "attribute":
        (repo / ".gitattributes").write_text("*.cmd text eol=crlf\n")
    (repo / "run.cmd").write_text(lines.replace("\n", "\r\n") if how == "crlf-blob" else lines)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "script")
    if how != "attribute":
        git(repo, "config", "core.autocrlf", "true")
    (repo / "run.cmd").unlink()
    git(repo, "checkout", "--", "run.cmd")
    assert (repo / "run.cmd").read_bytes().count(b"\r\n") == 6
    with (repo / "run.cmd").open("ab") as f:
        f.write(b"set F=6\r\n")
    found = read_range(repo, "HEAD", None, 1_000_000)
    (f,) = parse_diff(found.diff)
    assert (f.path, f.added_lines, f.deleted_lines) == ("run.cmd", 1, 0)
    own = subprocess.run(
        ["git", "diff", *gitrange.DIFF_OPTIONS, "HEAD"], cwd=repo, capture_output=True, check=True
    )
    assert found.diff == own.stdout.decode()  # bytes: a CR git keeps is kept


def test_with_core_symlinks_false_a_link_stays_a_link(repo):
    """With ``core.symlinks=false`` git checks a link out as a file holding its target, and reads it back
    as the link the index holds: every link showed as a link deleted and a file added."""
    os.symlink("calc.py", repo / "link.py")
    os.symlink("calc.py", repo / "other.py")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "links")
    git(repo, "config", "core.symlinks", "false")
    for name in ("link.py", "other.py"):
        (repo / name).unlink()
    git(repo, "checkout", "--", ".")
    assert (repo / "link.py").read_text() == "calc.py" and not (repo / "link.py").is_symlink()
    (repo / "calc.py").write_text(BUGGY)
    (repo / "other.py").write_text("test_calc.py")  # the link pointed elsewhere, as git reads it
    found = read_range(repo, "HEAD", None, 1_000_000)
    assert [f.path for f in parse_diff(found.diff)] == ["calc.py", "other.py"]
    assert "new file mode" not in found.diff and "deleted file mode" not in found.diff
    assert found.diff == git(repo, "diff", *gitrange.DIFF_OPTIONS, "HEAD", "--", ".")


def test_only_the_files_git_does_not_vouch_for_are_read(repo, monkeypatch):
    """Every file of the checkout was read and hashed: on 5,000 files several times git diff's time. Now
    a file git's stat cache calls unchanged is its indexed blob, unread."""
    for n in range(20):
        (repo / f"m{n}.py").write_text(f"M = {n}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "modules")
    (repo / "calc.py").write_text(BUGGY)
    (repo / "m3.py").unlink()
    read: list[str] = []
    real = gitrange._read_files
    monkeypatch.setattr(
        gitrange,
        "_read_files",
        lambda root, d, entries: (read.extend(e.path for e in entries), real(root, d, entries))[1],
    )
    found = read_range(repo, "HEAD", None, 1_000_000)
    assert [f.path for f in parse_diff(found.diff)] == ["calc.py", "m3.py"]
    assert sorted(read) == ["calc.py", "m3.py"]


ADD = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("head", ["HEAD", None], ids=["head", "working-tree"])
@pytest.mark.parametrize("side", ["head", "base"])
def test_an_encoding_that_changes_what_ascii_means_is_refused(repo, tmp_path, head, side):
    """``working-tree-encoding=UTF-7``: git checks ``a + b`` out as ``a +- b`` (in Python, a - b), so the
    tests would run what the review never shows, on the head (the change sets it) or on the base (the
    change drops it: a break of the head fails on the base too, "pre-existing"). A range in which any
    tracked path of either side has an encoding outside UTF-8, UTF-16 and UTF-32 is refused in one line,
    and so is an export of such a commit."""
    (repo / "adder.py").write_text(ADD)
    git(repo, "add", "adder.py")
    git(repo, "commit", "-qm", "adder")
    if side == "base":
        (repo / ".gitattributes").write_text("adder.py working-tree-encoding=UTF-7\n")
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-qm", "encoding")
        git(repo, "rm", "-q", ".gitattributes")
        git(repo, "commit", "-qm", "no encoding")
    else:
        (repo / ".gitattributes").write_text("adder.py working-tree-encoding=UTF-7\n")
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-qm", "encoding")
        (repo / "adder.py").unlink()
        git(repo, "checkout", "--", "adder.py")
        git(repo, "update-index", "-q", "--refresh")
        assert (repo / "adder.py").read_text() == ADD.replace("a + b", "a +- b")
    assert not git(repo, "status", "-s")
    with pytest.raises(ReviewInputError, match=r"^adder\.py: working-tree-encoding UTF-7 ") as caught:
        read_range(repo, "HEAD~1", head, 1_000_000)
    assert "\n" not in str(caught.value)
    with pytest.raises(ReviewInputError, match=r"^adder\.py: working-tree-encoding UTF-7 "):
        export_tree(
            repo, git(repo, "rev-parse", "HEAD~1" if side == "base" else "HEAD").strip(), tmp_path / "x"
        )


UTF16 = "*.txt text working-tree-encoding=UTF-16LE eol=crlf\n"
RES = "caf\u00e9\r\n".encode("utf-16-le")


@pytest.mark.parametrize("head", ["HEAD", None], ids=["head", "working-tree"])
def test_a_utf16_file_is_its_text_in_the_review_and_its_checkout_in_the_tests(repo, tmp_path, head):
    """Review finding: with every ``working-tree-encoding`` read as its bytes, a UTF-16 file nobody
    touched was "binary" and changed against the working tree (a clean tree: "only binary files
    change"), the tests' base got it as UTF-8 while the head kept UTF-16, and an exported head held UTF-8
    where a checkout holds UTF-16. Now an untouched one is its blob, an edited one is read as ``git add``
    reads it (its text), and an export holds what a checkout holds."""
    (repo / ".gitattributes").write_text(UTF16)
    (repo / "res.txt").write_bytes(RES)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "resource")
    assert git(repo, "cat-file", "blob", "HEAD:res.txt") == "caf\u00e9\n"
    if head is None:
        with pytest.raises(ReviewInputError, match="nothing changes between HEAD and the working tree"):
            read_range(repo, "HEAD", None, 1_000_000)
    (repo / "res.txt").write_bytes(RES + "more\r\n".encode("utf-16-le"))
    (repo / "calc.py").write_text(BUGGY)
    if head is not None:
        git(repo, "commit", "-qam", "more")
    found = read_range(repo, "HEAD~1" if head else "HEAD", head, 1_000_000)
    assert found.binary == [] and [f.path for f in parse_diff(found.diff)] == ["calc.py", "res.txt"]
    assert "+more\n" in found.diff  # its text, as git diff shows it
    if head is None:
        copy = tmp_path / "copy"
        shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        restore_base(repo, found.base_commit, copy, tmp_path / "scratch")
        assert (copy / "res.txt").read_bytes() == RES  # the base as a checkout holds it: UTF-16
    else:
        exported = export_tree(repo, found.head_commit, tmp_path / "head")
        assert (exported / "res.txt").read_bytes() == (repo / "res.txt").read_bytes()  # UTF-16
        base = export_tree(repo, found.base_commit, tmp_path / "base", what="--base")
        assert (base / "res.txt").read_bytes() == RES


@pytest.mark.parametrize("how", ["info-attributes", "attributesfile"])
def test_the_checkouts_own_attributes_read_the_working_tree(repo, tmp_path, how):
    """Review finding: the private repository wrote its own ``info/attributes``, so the checkout's
    ``.git/info/attributes`` (``*.py text eol=crlf``) or its ``core.attributesFile`` was not read: a line
    added to a CRLF file showed as the whole file rewritten, where ``git diff`` shows the line."""
    if how == "info-attributes":
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("*.py text eol=crlf\n")
    else:
        (tmp_path / "attrs").write_text("*.py text eol=crlf\n")
        git(repo, "config", "core.attributesFile", str(tmp_path / "attrs"))
    (repo / "calc.py").unlink()
    git(repo, "checkout", "--", "calc.py")
    assert b"\r\n" in (repo / "calc.py").read_bytes()
    with (repo / "calc.py").open("ab") as f:
        f.write(b"d = 1\r\n")
    found = read_range(repo, "HEAD", None, 1_000_000)
    (f,) = parse_diff(found.diff)
    assert (f.path, f.added_lines, f.deleted_lines) == ("calc.py", 1, 0)
    assert found.diff == git(repo, "diff", *gitrange.DIFF_OPTIONS, "HEAD", "--", ".")
