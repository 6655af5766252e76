"""``memdoor review`` on a git range (--base/--head), with a description, stages and the verified rule
of --fail-on: a real process, a real git repository, scripted agents; exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import os

import pytest
from test_review_cli import BUGGY, CALC, TEST, git, make_home, memdoor, models

from memdoor.review.consensus import Group
from memdoor.review.sarif import FINGERPRINT, fingerprint

READING = ("--stages", "tests,reading")  # the stages these tests are about (the answers are the agents')


@pytest.fixture
def home(tmp_path):
    return make_home(tmp_path)


@pytest.fixture
def committed(home):
    """``home``'s repository with the bug committed on top of the base (HEAD~1 is the base)."""
    repo = home / "repo"
    (repo / "calc.py").write_text(BUGGY)
    git(repo, "commit", "-qam", "mean: divide by n - 1")
    return home


def test_base_reviews_the_range_with_its_commit_messages(committed):
    home = committed
    (home / "pr.txt").write_text("Refactor the mean, no behaviour change.\n")
    r = memdoor(
        home, "--base", "HEAD~1", "--agents", "1", *models(home, "minor"), "--test", TEST,
        "--description", f"@{home / 'pr.txt'}", "--json", *READING,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr  # test_mean passes on the base, fails after: verified, high
    out = json.loads(r.stdout)
    (t,) = out["findings"]  # the agents' finding on the one changed line is merged into the test's
    assert (t["source"], t["verified"]) == ("tests", True) and "test_calc.T.test_mean" in t["message"]
    assert [(a["agents"], a["severity"]) for a in t["also_read"]] == [(["agent0"], "low")]
    assert out["config"]["description"] == "Refactor the mean, no behaviour change."
    assert out["config"]["commit_messages"] == "Commit messages of HEAD~1..HEAD:\nmean: divide by n - 1"
    assert out["config"]["stages"] == ["tests", "reading"]
    assert (home / "repo" / "calc.py").read_text() == BUGGY  # the user's tree is never changed


def test_head_reviews_the_commit_not_the_working_tree(committed):
    home = committed
    (home / "repo" / "calc.py").write_text(CALC + "# work in progress\n")
    r = memdoor(home, "--base", "HEAD~1", "--head", "HEAD", "--agents", "1", *models(home, "minor"), "--json")
    assert r.returncode == 0, r.stderr  # a low, unverified finding
    out = json.loads(r.stdout)
    assert out["files"] == ["calc.py"] and out["config"]["description"] is None
    assert out["config"]["commit_messages"].endswith("mean: divide by n - 1")
    assert (home / "repo" / "calc.py").read_text().endswith("# work in progress\n")


def test_fail_on_counts_unverified_findings_only_when_asked(home):
    args = ["../change.diff", "--agents", "1", *models(home, "bug"), *READING]
    r = memdoor(home, *args)
    assert r.returncode == 0, r.stderr  # a high finding the agents read, nothing ran: not counted
    assert "(unverified: read by the agents, not run)" in r.stdout
    assert memdoor(home, *args, "--fail-on-unverified").returncode == 1


def test_sarif_results_are_marked_and_fingerprinted_from_the_changed_code(committed):
    home = committed
    r = memdoor(
        home, "--base", "HEAD~1", "--agents", "1", *models(home, "bug"), "--format", "sarif", *READING
    )
    assert r.returncode == 0, r.stderr
    (res,) = json.loads(r.stdout)["runs"][0]["results"]
    assert res["message"]["text"].startswith("[unverified] ") and res["properties"]["verified"] is False
    read = Group(file="calc.py", line=5, end_line=5, severity="high", kind="bug", message="-", agents=["a"])
    assert fingerprint(read, home / "repo") != fingerprint(read)  # the flagged line's text counts
    assert res["partialFingerprints"] == {FINGERPRINT: fingerprint(read, home / "repo")}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["../change.diff", "--base", "HEAD"], "give a DIFF or --base, not both"),
        ([], "nothing to review"),
        (["--head", "HEAD"], "--head needs --base"),
        (["--base", "no-such-branch"], "--base no-such-branch: no such commit"),
        (["--base", "HEAD~1", "--head", "nope"], "--head nope: no such commit"),
        (["--base=-p"], "not a git revision"),
        (["../change.diff", "--description", "@/no/such/file"], "--description @/no/such/file: cannot read"),
        (["../change.diff", "--stages", "tests,linting"], "'linting': not a stage"),
        (["../change.diff", "--stages", ","], "no stage named"),
    ],
)
def test_bad_sources_are_one_line_exit_2(committed, args, says):
    r = memdoor(committed, *args, *models(committed, "bug"))
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert says in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_a_range_with_nothing_to_review_is_exit_0_with_an_empty_report(committed):
    """A CI job or pre-commit hook on a change with nothing to review passes, saying so in one line;
    its SARIF is a log with no result, which code scanning takes (an empty file it would refuse)."""
    r = memdoor(committed, "--base", "HEAD", *models(committed, "bug"), "--format", "sarif")
    assert r.returncode == 0, r.stderr
    (run,) = json.loads(r.stdout)["runs"]
    why = "nothing changes between HEAD and the working tree: nothing to review"
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is True
    assert (
        run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
        == f"nothing to review: {why}"
    )
    assert r.stderr == f"memdoor: {why}\n"
    r = memdoor(committed, "--base", "HEAD", *models(committed, "bug"))
    assert r.returncode == 0 and r.stdout.startswith(f"**Nothing to review:** {why}\n"), r.stdout
    assert "memdoor trace" not in r.stdout  # no run, no trace to name
    r = memdoor(committed, "--base", "HEAD", *models(committed, "bug"), "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["nothing_to_review"] == why and out["findings"] == []


def test_code_the_review_cannot_read_is_still_bad_input(committed, tmp_path):
    """Only a change of no code passes as "nothing to review": a part too long to read (or a diff file
    of deletions, whose direction a mode change alone could not tell) stays exit 2, --test or not."""
    args = ["--agents", "1", *models(committed, "bug")]
    repo = committed / "repo"
    (repo / "calc.py").write_text(BUGGY + "".join(f"# note {i}: {'x' * 40}\n" for i in range(30)))
    git(repo, "commit", "-qam", "notes")
    for extra in ([], ["--test", TEST]):
        r = memdoor(committed, "--base", "HEAD~1", "--part-chars", "1000", *args, *extra)
        assert r.returncode == 2 and "exceeds 1000" in r.stderr and r.stdout == "", r.stderr
    git(repo, "rm", "-q", "calc.py")
    (tmp_path / "gone.diff").write_text(git(repo, "diff", "--cached"))
    git(repo, "reset", "-q", "--hard")
    r = memdoor(committed, str(tmp_path / "gone.diff"), *args, "--test", TEST)
    assert r.returncode == 2 and "nothing in the diff can be reviewed (calc.py: deleted" in r.stderr


def test_a_range_that_only_deletes_runs_the_tests_alone(committed):
    """A deletion has no function or line to read, but can break a test: with --test the tests run on
    the base and the change, and a test it breaks is a verified finding; without, nothing to review."""
    home = committed
    git(home / "repo", "rm", "-q", "calc.py")
    r = memdoor(home, "--base", "HEAD", "--agents", "1", *models(home, "bug"), "--test", TEST, "--json")
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["stages_run"] == ["tests"] and out["files"] == []
    assert {(f["source"], f["severity"], f["verified"]) for f in out["findings"]} == {("tests", "high", True)}
    assert any("No module named 'calc'" in f["message"] for f in out["findings"])
    r = memdoor(home, "--base", "HEAD", "--agents", "1", *models(home, "bug"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["findings"] == []
    assert (
        r.stderr.startswith("memdoor: nothing in the diff can be reviewed (calc.py: ")
        and r.stderr.count("\n") == 1
    )


def test_a_range_of_binary_files_alone_runs_the_tests_alone(home):
    """A binary file is left out of the diff, but a test can read it: with --test a range that changes
    binary files only runs the tests on the base and the change (a test it breaks is a verified finding);
    without --test it stays nothing to review."""
    repo = home / "repo"
    git(repo, "checkout", "-q", "--", ".")  # the working tree at the base commit
    (repo / "data.bin").write_bytes(b"OK\x00")
    (repo / "test_data.py").write_text(
        "import unittest\n\n\nclass D(unittest.TestCase):\n    def test_data(self):\n"
        "        with open('data.bin', 'rb') as f:\n            self.assertEqual(f.read(), b'OK\\x00')\n"
    )
    git(repo, "add", "data.bin", "test_data.py")
    git(repo, "commit", "-qm", "data")
    (repo / "data.bin").write_bytes(b"NO\x00")
    r = memdoor(home, "--base", "HEAD", "--agents", "1", *models(home, "bug"), "--test", TEST, "--json")
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["stages_run"] == ["tests"] and out["files"] == []
    assert [s["file"] for s in out["skipped"]] == ["data.bin"]
    (found,) = out["findings"]
    assert (found["source"], found["severity"], found["verified"]) == ("tests", "high", True)
    assert "test_data" in found["message"] and (found["file"], found["line"]) == ("data.bin", 1)
    r = memdoor(home, "--base", "HEAD", "--agents", "1", *models(home, "bug"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["findings"] == []
    assert (
        r.stderr == "memdoor: only binary files change between HEAD and the working tree: nothing to review\n"
    )
    # the same change committed, reviewed as --head; and a binary change the tests pass with
    git(repo, "commit", "-qam", "new data")
    r = memdoor(home, "--base", "HEAD~1", "--head", "HEAD", "--agents", "1", *models(home, "bug"), "--test", TEST,
                "--json")  # fmt: skip
    assert r.returncode == 1 and json.loads(r.stdout)["findings"][0]["file"] == "data.bin", r.stderr
    (repo / "data.bin").write_bytes(b"OK\x00")
    r = memdoor(home, "--base", "HEAD", "--agents", "1", *models(home, "bug"), "--test", TEST, "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["stages_run"] == ["tests"] and out["findings"] == [], r.stderr


def test_the_documented_workflow_and_hook_run_flags_the_command_has():
    """docs/review-ci.md's workflow and the repository's .pre-commit-hooks.yaml: valid YAML whose
    `memdoor review` command lines the command's own parser accepts."""
    import re
    import shlex
    from pathlib import Path

    import yaml

    from memdoor.cli import build_parser

    root = Path(__file__).resolve().parents[2]
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "memdoor-review" and hook["pass_filenames"] is False
    args = build_parser().parse_args([*shlex.split(hook["entry"])[1:], "--test", "python3 -m pytest -q"])
    assert (args.base, args.head, args.diff) == ("HEAD", None, None)
    doc = (root / "docs" / "review-ci.md").read_text()
    workflow, config = (yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", doc, re.DOTALL))
    steps = workflow["jobs"]["review"]["steps"]
    (run,) = [s["run"] for s in steps if "memdoor review" in s.get("run", "")]
    line = run[run.index("memdoor review") :].replace("\\\n", " ").split(">")[0]
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert args.base == "origin/$BASE_REF" and args.description.startswith("@") and args.format == "sarif"
    assert "PR_BODY" in str(steps) and "${{" not in run  # the body reaches the shell as data only
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in steps)
    (hooked,) = config["repos"][0]["hooks"]
    build_parser().parse_args([*shlex.split(hook["entry"])[1:], *hooked["args"]])


@pytest.mark.parametrize("head", [("--head", "HEAD"), ()], ids=["head", "working-tree"])
def test_the_tests_base_is_the_base_commit_even_when_the_change_asks_for_crlf(home, head):
    """A change that adds ``*.py text eol=crlf`` makes the checkout's files differ from the diff's bytes:
    the tests' base is the base commit itself, so the broken test is the change's, not "cannot rebuild"."""
    repo = home / "repo"
    (repo / ".gitattributes").write_text("*.py text eol=crlf\n")
    (repo / "calc.py").write_text(BUGGY)
    git(repo, "add", ".gitattributes", "calc.py")
    git(repo, "commit", "-qm", "mean: divide by n - 1")
    if not head:  # the working tree as git checks it out under the new attributes
        (repo / "calc.py").unlink()
        git(repo, "checkout", "--", "calc.py")
    r = memdoor(home, "--base", "HEAD~1", *head, "--agents", "1", *models(home, "minor"), "--test", TEST,
                "--json", *READING)  # fmt: skip
    assert r.returncode == 1, r.stderr  # exit 3 (incomplete: the base cannot be rebuilt) before the fix
    out = json.loads(r.stdout)
    assert any(f["source"] == "tests" and "test_mean" in f["message"] for f in out["findings"])


@pytest.mark.parametrize("head", [("--head", "HEAD"), ()], ids=["head", "working-tree"])
def test_the_tests_run_on_the_head_not_on_the_range_applied_to_it_again(home, head):
    """A line added among blank lines still finds its context in the head: the range's diff was
    applied to it a second time, the wrapper cancelled itself out and the tests passed (exit 0)."""
    repo, wrap = home / "repo", "mean = (lambda f: lambda xs: -f(xs))(mean)\n"
    (repo / "calc.py").write_text(CALC + "\n" * 10 + "# end\n")
    git(repo, "commit", "-qam", "blank lines")
    (repo / "calc.py").write_text(CALC + "\n" * 3 + wrap + "\n" * 7 + "# end\n")
    git(repo, "commit", "-qam", "tidy")
    r = memdoor(home, "--base", "HEAD~1", *head, "--agents", "1", *models(home, "minor"), "--test", TEST,
                "--json", "--stages", "tests")  # fmt: skip
    assert r.returncode == 1, r.stderr  # test_mean passes on the base and fails on the head
    out = json.loads(r.stdout)
    assert any(f["source"] == "tests" and "test_mean" in f["message"] for f in out["findings"])


def test_a_ref_name_that_is_not_utf8_is_one_line_exit_2(committed):
    """A branch whose name is not UTF-8 resolved, then crashed the trace's JSON (exit 1, a traceback)."""
    name = os.fsdecode(b"\xffb")
    git(committed / "repo", "branch", name, "HEAD~1")
    r = memdoor(committed, "--base", name, "--head", "HEAD", "--agents", "1", *models(committed, "bug"))
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert "--base \\xffb: not a git revision (not UTF-8)" in r.stderr and r.stderr.count("\n") == 1
