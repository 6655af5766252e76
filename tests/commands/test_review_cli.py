"""``memdoor review`` as a user runs it: a real process, a real git repository, real `git apply`, the
test command in the sandbox, scripted models (answer files) for the agents; exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

CALC = "def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n"
BUGGY = CALC.replace("total / len(xs)", "total / (len(xs) - 1)")
FIX = "    return total / len(xs) if xs else 0"
TESTS = (
    "import unittest\nfrom calc import mean\n\n\nclass T(unittest.TestCase):\n"
    "    def test_mean(self):\n        self.assertEqual(mean([1, 2, 3]), 2)\n\n"
    "    def test_empty(self):\n        self.assertEqual(mean([]), 0)\n"
)
TEST = "python3 -m unittest -q"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def answer(**kw) -> str:
    f = {"file": "calc.py", "line": 5, "end_line": 5, "severity": "high", "kind": "bug",
         "message": "divides by len(xs) - 1: the mean is wrong", "suggestion": FIX, "confidence": 0.9}  # fmt: skip
    return "```json\n" + json.dumps({"findings": [{**f, **kw}]}) + "\n```"


@pytest.fixture
def home(tmp_path) -> Path:
    return make_home(tmp_path)


def make_home(tmp_path: Path) -> Path:
    """A repository (repo/), the buggy change's diff (change.diff, the tree left at the base) and
    scripted answers (bug, minor, garbage .json) in ``tmp_path``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    git(repo, "add", "calc.py", "test_calc.py")
    git(repo, "commit", "-qm", "init")
    (repo / "calc.py").write_text(BUGGY)
    (tmp_path / "change.diff").write_text(git(repo, "diff"))
    (repo / "calc.py").write_text(CALC)
    (tmp_path / "bug.json").write_text(json.dumps([answer()]))
    (tmp_path / "minor.json").write_text(json.dumps([answer(severity="low", suggestion=None)]))
    (tmp_path / "garbage.json").write_text(json.dumps(["I have no opinion."]))
    return tmp_path


def memdoor(
    home: Path, *args: str, stdin: str | None = None, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMDOOR_HOME": str(home / "mdhome"), **(extra_env or {})}
    return subprocess.run(
        [sys.executable, "-m", "memdoor", "review", *args],
        cwd=home / "repo",
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def models(home: Path, *names: str) -> list[str]:
    return [a for n in names for a in ("--model", f"scripted:{home / n}.json")]


def test_json_consensus_and_a_tested_patch_exit_1(home):
    r = memdoor(
        home,
        "../change.diff",
        "--agents",
        "3",
        *models(home, "bug", "bug", "garbage"),
        "--test",
        TEST,
        "--stages",
        "tests,reading",
        "--json",
        "--params",
        f"scripted:{home / 'bug'}.json=1e9",
        "--params",
        f"scripted:{home / 'garbage'}.json=1e9",
    )
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["complete"] is True and out["incomplete_reason"] is None
    (t,) = out["findings"]  # the test stage's, with the agents' finding on the one changed line merged in
    assert t["source"] == "tests" and "test_calc.T.test_mean" in t["message"] and t["verified"]
    (f,) = t["also_read"]
    assert (t["file"], f["line"], f["severity"], f["agents"]) == ("calc.py", 5, "high", ["agent0", "agent1"])
    assert out["patch"]["tests"]["passed"] is True and FIX in out["patch"]["diff"]
    assert out["tests"]["passed"] is False  # the change itself breaks the tests
    assert out["unusable"][0]["agent"] == "agent2"
    assert out["ledger"]["calls"] == 4  # agent2 (no JSON) was asked once more for the block
    tokens = out["ledger"]["prompt_tokens"] + out["ledger"]["completion_tokens"]
    assert out["ledger"]["compute"] == pytest.approx(2e9 * tokens)  # sizes from --params
    trace = subprocess.run(
        [sys.executable, "-m", "memdoor", "trace", out["trace_id"]],
        capture_output=True, text=True, env={**os.environ, "MEMDOOR_HOME": str(home / "mdhome")},
    )  # fmt: skip
    assert trace.returncode == 0 and "consensus" in trace.stdout
    assert (home / "repo" / "calc.py").read_text() == CALC  # the user's tree is never changed


def test_stdin_markdown_and_fail_on(home):
    diff = (home / "change.diff").read_text()
    minor = ["-", "--agents", "1", *models(home, "minor"), "--stages", "reading"]
    r = memdoor(home, *minor, stdin=diff)
    assert r.returncode == 0, r.stderr  # a low finding is under the default --fail-on high
    assert "# Review: 1 consensus finding(s)" in r.stdout and "agreed by 1 of 1: agent0" in r.stdout
    r = memdoor(home, *minor, "--fail-on", "low", stdin=diff)
    assert r.returncode == 0  # the agents' finding is unverified: --fail-on counts verified ones
    r = memdoor(home, *minor, "--fail-on", "low", "--fail-on-unverified", stdin=diff)
    assert r.returncode == 1


def test_sarif_output(home):
    r = memdoor(
        home,
        "../change.diff",
        "--agents",
        "2",
        *models(home, "bug"),
        "--format",
        "sarif",
        "--fail-on-unverified",
    )
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["version"] == "2.1.0"
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 5


@pytest.mark.parametrize(
    ("diff", "says"),
    [
        ("this is not a diff\n", "not a unified diff"),
        ("--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-nothing like it\n+x\n", "does not apply"),
        ("diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n", "binary diff"),
    ],
)
def test_bad_input_is_one_line_exit_2(home, diff, says):
    r = memdoor(home, "-", *models(home, "bug"), stdin=diff)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and says in r.stderr and "Traceback" not in r.stderr


def test_huge_and_unreadable_diffs_exit_2(home):
    (home / "bin.diff").write_bytes(b"\xff\xfe\x00binary")
    r = memdoor(home, "../bin.diff", *models(home, "bug"))
    assert r.returncode == 2 and "not UTF-8" in r.stderr
    r = memdoor(home, "../missing.diff", *models(home, "bug"))
    assert r.returncode == 2 and "cannot read the diff" in r.stderr
    huge = (home / "change.diff").read_text() * 20_000
    r = memdoor(home, "-", *models(home, "bug"), stdin=huge)
    assert r.returncode == 2 and "too large" in r.stderr and r.stderr.count("\n") == 1


def test_not_a_checkout_and_bad_options_exit_2(home, tmp_path):
    r = memdoor(home, "../change.diff", "--repo", str(tmp_path / "mdhome"), *models(home, "bug"))
    assert r.returncode == 2 and ("not a directory" in r.stderr or "not in a git checkout" in r.stderr)
    r = memdoor(home, "../change.diff", "--agents", "0")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    r = memdoor(home, "../change.diff", "--test", "  ", *models(home, "bug"))
    assert r.returncode == 2 and "empty" in r.stderr
    r = memdoor(home, "../change.diff", "--params", "7e9", *models(home, "bug"))
    assert r.returncode == 2 and "bad --params" in r.stderr and r.stderr.count("\n") == 1


def test_a_file_too_large_for_a_part_is_skipped_and_named(home):
    repo = home / "repo"
    (repo / "big.py").write_text("".join(f"value_{i} = {i}\n" for i in range(300)))
    (repo / "calc.py").write_text(BUGGY)
    git(repo, "add", "-N", "big.py")
    diff = git(repo, "diff")
    git(repo, "rm", "-q", "--cached", "big.py")
    (repo / "big.py").unlink()
    (repo / "calc.py").write_text(CALC)
    r = memdoor(
        home, "-", "--agents", "1", *models(home, "minor"), "--part-chars", "1000", "--json", stdin=diff
    )
    out = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    assert out["files"] == ["calc.py"] and out["skipped"][0]["file"] == "big.py"
    assert "exceeds 1000" in out["skipped"][0]["reason"]


def test_test_env_and_test_path_are_what_the_test_command_sees(home):
    shared = Path(tempfile.mkdtemp(prefix="memdoor-review-cli-"))  # the leased uid must reach --test-path
    os.chmod(shared, 0o711)
    extra = shared / "fixtures"
    extra.mkdir()
    (extra / "data.txt").write_text("fixture\n")
    check = f'test "$GREETING" = hi && test -f {extra}/data.txt && test -z "$SECRET_TOKEN" && echo seen'
    env_args = ("--test-env", "GREETING", "--test-path", str(extra), "--test", check, "--json")
    base = [*models(home, "minor"), "--agents", "1", "../change.diff"]
    r = memdoor(home, *base, *env_args, extra_env={"GREETING": "hi", "SECRET_TOKEN": "s3cret"})
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["base_tests"]["passed"] and out["tests"]["passed"], r.stdout + r.stderr
    assert str(extra) in out["tests"]["sees"]
    r = memdoor(home, *base, "--test", check, "--json", extra_env={"GREETING": "hi"})
    assert json.loads(r.stdout)["base_tests"]["passed"] is False  # GREETING is not passed unless named
    shutil.rmtree(shared)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--test", TEST, "--test-path", "/no/such/dir"], "--test-path /no/such/dir: not a directory"),
        (["--test", TEST, "--test-env", "NOT-A-NAME"], "not a variable name"),
        (["--test-env", "HOME"], "need --test"),
    ],
)
def test_bad_test_options_are_one_line_exit_2(home, args, says):
    r = memdoor(home, "../change.diff", *models(home, "bug"), *args)
    assert r.returncode == 2 and r.stdout == "" and says in r.stderr and r.stderr.count("\n") == 1


def test_a_change_that_crashes_the_test_run_fails_even_with_a_test_already_failing(home):
    """Issue 45 (security review): test_empty already fails on the base (mean([]) divides by zero); a
    change that kills the runner before it prints anything must not pass as "nothing new failed"."""
    repo = home / "repo"
    (repo / "calc.py").write_text("import os\n\nos._exit(3)\n" + CALC)
    crash = git(repo, "diff")
    (repo / "calc.py").write_text(CALC)
    r = memdoor(home, "-", "--agents", "1", *models(home, "minor"), "--test", TEST, "--json", stdin=crash)
    assert r.returncode == 1, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["complete"] is True and out["base_tests"]["exit_code"] == 1
    assert [t["name"] for t in out["pre_existing"]] == ["test_calc.T.test_empty"]
    (t,) = [f for f in out["findings"] if f["source"] == "tests"]
    assert t["severity"] == "high" and "the change breaks the test run" in t["message"]
    assert "exit 3" in t["message"] and "no unittest run" in t["message"]


def test_an_unreadable_file_in_the_checkout_is_one_line_exit_2(home):
    """Issue 41 (security review): a file of the checkout that cannot be read (an untracked file of mode
    000) was an OSError traceback and exit 1. As root, the review runs without the capabilities that
    read any file, as a user's would."""
    secret = home / "repo" / "notes.txt"
    secret.write_text("mine\n")
    secret.chmod(0)
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    r = subprocess.run(
        [*drop, sys.executable, "-m", "memdoor", "review", "../change.diff", *models(home, "bug")],
        cwd=home / "repo", capture_output=True, text=True, timeout=300,
        env={**os.environ, "MEMDOOR_HOME": str(home / "mdhome")},
    )  # fmt: skip
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.count("\n") == 1 and "notes.txt" in r.stderr and "Traceback" not in r.stderr
    assert "cannot be copied" in r.stderr


def test_a_closed_output_pipe_keeps_the_exit_code(home):
    """Issue 41 (security review): `memdoor review … | head -0` with findings exited 0 (or 120)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdoor", "review", "../change.diff", "--agents", "2", *models(home, "bug"),
         "--fail-on-unverified"],
        cwd=home / "repo", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "MEMDOOR_HOME": str(home / "mdhome")},
    )  # fmt: skip
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1, err  # a high consensus finding, as with an open pipe
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_no_sandbox_is_exit_3_with_a_report_that_says_so(home, monkeypatch, capsys):
    """No sandbox works here (the tool paths are fixed, so it is made to fail in-process): the review
    cannot run, and says so in the report it prints (a CI job's SARIF upload still gets a log) and in
    one line on stderr."""
    from memdoor.cli import build_parser
    from memdoor.commands import review
    from memdoor.core.errors import SandboxError

    async def no_sandbox(prepared, config):
        raise SandboxError("no working sandbox: bwrap: not installed")

    monkeypatch.setattr(review, "_review", no_sandbox)
    monkeypatch.setenv("MEMDOOR_HOME", str(home / "mdhome"))
    base = [
        "review",
        str(home / "change.diff"),
        "--repo",
        str(home / "repo"),
        *models(home, "bug"),
        "--test",
        TEST,
    ]
    reason = "no sandbox: no working sandbox: bwrap: not installed"
    for fmt in ("sarif", "json", "markdown"):
        assert review.review_command(build_parser().parse_args([*base, "--format", fmt])) == 3
        out, err = capsys.readouterr()
        assert err == f"memdoor: review not completed: {reason}\n"
        if fmt == "sarif":
            (run,) = json.loads(out)["runs"]
            assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is False
        elif fmt == "json":
            assert (json.loads(out)["complete"], json.loads(out)["incomplete_reason"]) == (False, reason)
        else:
            assert out.startswith(f"**Review not completed:** {reason}")
