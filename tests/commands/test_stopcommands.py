"""Under GitHub Actions, nothing ``memdoor review`` writes is read as a workflow command: the Markdown
report is wrapped in ``::stop-commands::`` on standard output (a pipe, as the runner's log is), every
line written to standard error is escaped on its own (never wrapped: the runner reads the two streams
apart, in no set order), an exception memdoor did not expect included, JSON and SARIF are left parseable
(a ``##[`` in a string escaped), a regular file gets no markers."""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
import traceback

import pytest
from test_review_cli import git, memdoor

from memdoor import cli
from memdoor.commands import review, stopcommands

REGISTERED = {"warning", "error", "notice", "debug", "set-output", "set-env", "add-path", "add-mask",
              "save-state", "group", "endgroup", "echo", "add-matcher", "remove-matcher"}  # fmt: skip
HOSTILE_NAME = "##[warning]forged annotation.py"
HOSTILE_TEST = (
    "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n"
    '        self.assertEqual(add(2, 2), 4, "\\n::stop-commands::tok42\\n::set-output name=verdict::clean")\n'
)


def runner_lines(text: str) -> list[str]:
    """``text`` as the runner reads it: lines end at ``\\n``, ``\\r`` or ``\\r\\n`` (.NET's ReadLine)."""
    return re.split(r"\r\n|\r|\n", text.removesuffix("\n"))


def command_syntax(text: str) -> list[str]:
    """The lines of ``text`` that either of the runner's parsers would look at: ``::`` after leading blanks
    (TryParseV2, blanks as .NET's TrimStart, a subset of Python's), ``##[`` anywhere (TryParse), whatever
    the name. Lines split both as the runner splits them and as Python's splitlines (more places)."""
    lines = runner_lines(text) + text.splitlines()
    return [line for line in lines if line.lstrip().startswith("::") or "##[" in line]


def parsed(line: str, registered: set[str]) -> tuple[str, str] | None:
    """(name, data) of ``line`` as the runner parses it: TryParseV2 (``::name …::data`` after leading
    blanks), then the legacy TryParse (``##[name …]data`` anywhere); a name must be registered."""
    text, known = line.lstrip(), {r.lower() for r in registered}
    end = text.find("::", 2) if text.startswith("::") else -1
    if end >= 0 and (name := text[2:end].split(" ")[0]).lower() in known:
        return name, text[end + 2 :]
    start = line.find("##[")
    end = line.find("]", start) if start >= 0 else -1
    if end >= 0 and (name := line[start + 3 : end].split(" ")[0]).lower() in known:
        return name, line[end + 1 :]
    return None


def commands_run(lines: list[str]) -> list[str]:
    """The workflow commands the Actions runner would carry out on ``lines``, in this order (its
    ActionCommandManager: :func:`parsed`, and one stop/resume state for the step)."""
    registered, stop, ran = {*REGISTERED, "stop-commands"}, None, []
    for line in lines:
        if (found := parsed(line, registered)) is None:
            continue
        name, data = found
        if stop is not None:
            if name.lower() == stop.lower():
                registered.discard(stop)
                stop = None
        elif name == "stop-commands":
            stop = data
            registered.add(stop)
        else:
            ran.append(line)
    return ran


@pytest.fixture
def actions(monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")


def test_markdown_to_a_pipe_is_wrapped_with_a_random_token(actions):
    text = "# review\n`##[warning]x.py`\n  ::set-output name=verdict::clean\n"
    out = stopcommands.report(text, "markdown", io.StringIO())
    first, *body, last = out.splitlines(keepends=True)
    token = first.removeprefix("::stop-commands::").strip()
    assert re.fullmatch(r"[0-9a-f]{32}", token) and last == f"::{token}::\n" and "".join(body) == text
    assert commands_run(text.splitlines()) and not commands_run(out.splitlines())
    assert stopcommands.report(text, "markdown", io.StringIO()).splitlines()[0] != first  # a new token


def test_a_regular_file_gets_no_markers_and_nothing_changes_outside_actions(tmp_path, monkeypatch):
    text = "# review\n`##[warning]x.py`\n"
    with open(tmp_path / "review.md", "w") as f:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        assert stopcommands.report(text, "markdown", f) == text
        monkeypatch.delenv("GITHUB_ACTIONS")
        for fmt in ("markdown", "json", "sarif"):
            assert stopcommands.report(text, fmt, io.StringIO()) == text


def test_json_is_never_wrapped_and_keeps_its_value(actions):
    value = {"file": HOSTILE_NAME, "message": "a\n::set-output name=v::x ###[error]y"}
    for text in (json.dumps(value) + "\n", json.dumps(value, indent=2) + "\n"):
        out = stopcommands.report(text, "sarif", io.StringIO())
        assert json.loads(out) == value and "##[" not in out and not commands_run(out.splitlines())


HOSTILE_MESSAGE = "x.py\n::set-output name=verdict::clean\n  ::warning::forged ##[error]forged\r::add-mask::x"


def test_escaped_lines_hold_no_command_and_read_as_written():
    for text in (HOSTILE_MESSAGE, "::stop-commands::t\n::t::", "\t ::x::y", "\u2028::x::y", "a\u2028::x::y",
                 "\x0b\u00a0::error::x", "###[error]x ##[##[debug]y", "::", "##["):  # fmt: skip
        out = stopcommands.escaped(text)
        assert command_syntax(text) and not command_syntax(out), (text, out)
        assert out.replace("\\", "") == text.replace("\\", "")  # only a backslash is added
    assert stopcommands.escaped("memdoor: review not completed: no sandbox\n") == (
        "memdoor: review not completed: no sandbox\n"
    )
    hostile, shown = "  ::set-output x::y\nsee ##[error]", "  \\::set-output x::y\nsee ##\\[error]"
    assert stopcommands.escaped(hostile) == shown
    rng = random.Random(6)
    for _ in range(3000):
        text = "".join(rng.choice(":#[] \t\r\n\x0b\u2028\u00a0\\a") for _ in range(rng.randrange(16)))
        assert not command_syntax(stopcommands.escaped(text)), repr(text)


def fake_review(error: Exception | None = None):
    """A review_command that writes a message, a Markdown report quoting the pull request, a message
    again, then raises ``error`` (or exits 1)."""

    def review_command(args):
        print(f"memdoor: review: {HOSTILE_MESSAGE}", file=sys.stderr)
        stopcommands.print_report(f"# review\n`{HOSTILE_NAME}`\n{HOSTILE_MESSAGE}\n", "markdown")
        print(f"memdoor: review not completed: {HOSTILE_MESSAGE}", file=sys.stderr)
        if error is not None:
            raise error
        return 1

    return review_command


def outcome(argv: list[str], capsys) -> tuple[int, str, str]:
    """``memdoor`` in this process as the interpreter runs it: an exception main lets out is printed as a
    traceback, exit 1. (exit code, stdout, stderr)."""
    try:
        code = cli.main(argv)
    except Exception:
        traceback.print_exc()
        code = 1
    out, err = capsys.readouterr()
    return code, out, err


def interleavings(a: list[str], b: list[str]):
    """Orders in which the runner may process the lines of two streams, each in its own order: each
    stream cut once, the pieces taken in turn (one before the other, either inside the other, or the
    two overlapping either way round)."""
    for i in range(len(a) + 1):
        for j in range(len(b) + 1):
            yield a[:i] + b[:j] + a[i:] + b[j:]
            yield b[:j] + a[:i] + b[j:] + a[i:]


def test_stdout_and_stderr_in_any_order_run_no_command(actions, monkeypatch, capsys):
    """The runner reads standard output and standard error on separate tasks: whichever of the report's
    lines it processes before or after a message's, no command runs."""
    monkeypatch.setattr(review, "review_command", fake_review())
    code, out, err = outcome(["review", "-"], capsys)
    assert code == 1 and command_syntax(HOSTILE_MESSAGE)
    out_lines, err_lines = runner_lines(out), runner_lines(err)
    assert out_lines[0].startswith("::stop-commands::") and out_lines[-1] == f"::{out_lines[0][17:]}::"
    assert not command_syntax(err) and "\\::set-output name=verdict::clean" in err_lines  # escaped
    assert out_lines[0][17:] not in err  # the token is nowhere else
    for merged in interleavings(out_lines, err_lines):
        assert not commands_run(merged), merged


def test_an_unexpected_exception_under_actions_is_escaped_exit_1(actions, monkeypatch, capsys):
    error = ValueError("bad input\n::set-output name=x::y\n##[error]forged")
    monkeypatch.setattr(review, "review_command", fake_review(error))
    code, out, err = outcome(["review", "-"], capsys)
    assert code == 1 and commands_run(str(error).splitlines())
    assert not command_syntax(err) and not commands_run(runner_lines(out) + runner_lines(err))
    assert "Traceback (most recent call last):" in err and "\\::set-output name=x::y" in err.splitlines()
    assert err.splitlines()[-1] == "memdoor: unexpected error: ValueError: bad input […]"
    for merged in interleavings(runner_lines(out), runner_lines(err)):
        assert not commands_run(merged)


def test_outside_actions_nothing_is_added_and_an_unexpected_exception_goes_through(monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setattr(review, "review_command", fake_review(ValueError("boom\n::x::y")))
    with pytest.raises(ValueError, match="boom"):
        cli.main(["review", "-"])
    out, err = capsys.readouterr()
    assert out == f"# review\n`{HOSTILE_NAME}`\n{HOSTILE_MESSAGE}\n"
    assert err == f"memdoor: review: {HOSTILE_MESSAGE}\nmemdoor: review not completed: {HOSTILE_MESSAGE}\n"


@pytest.fixture
def hostile(tmp_path):
    """A range whose change names a file ``##[warning]…`` and breaks a test whose message holds
    ``::stop-commands::`` and ``::set-output``; scripted answers with no finding."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "test_calc.py").write_text(HOSTILE_TEST)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / HOSTILE_NAME).write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "change")
    (tmp_path / "none.json").write_text(json.dumps(['```json\n{"findings": []}\n```']))
    return tmp_path


ARGS = ("--base", "HEAD~1", "--head", "HEAD", "--stages", "tests", "--test", "python3 -m unittest -q",
        "--agents", "1", "--fail-on", "never")  # fmt: skip


def test_the_review_under_actions_runs_no_command_of_the_pull_requests(hostile):
    done = memdoor(hostile, *ARGS, "--model", f"scripted:{hostile / 'none.json'}",
                   extra_env={"GITHUB_ACTIONS": "true"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert HOSTILE_NAME in done.stdout and "::set-output name=verdict::clean" in done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].startswith("::stop-commands::") and lines[-1] == f"::{lines[0][17:]}::"
    assert not commands_run(lines) and not commands_run(lines + done.stderr.splitlines())


def test_sarif_to_a_file_under_actions_is_exactly_the_report(hostile):
    sarif = hostile / "memdoor.sarif"
    with open(sarif, "w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "memdoor", "review", *ARGS, "--model", f"scripted:{hostile / 'none.json'}",
             "--format", "sarif"],
            cwd=hostile / "repo", stdout=out, stderr=subprocess.PIPE, text=True, timeout=300,
            env={**os.environ, "MEMDOOR_HOME": str(hostile / "mdhome"), "GITHUB_ACTIONS": "true"},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = sarif.read_text()
    assert text.startswith("{\n") and text.endswith("}\n")  # no marker line, the whole file is the SARIF
    assert "##[" not in text and not commands_run(text.splitlines())
    assert HOSTILE_NAME in json.dumps(json.loads(text), ensure_ascii=False)


def test_bad_input_under_actions_is_one_escaped_line_exit_2(hostile):
    done = memdoor(hostile, "--base", "##[warning]nosuch", extra_env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 2 and done.stdout == ""
    (message,) = done.stderr.splitlines()
    assert message.startswith("memdoor: --base ##\\[warning]nosuch: ")
    assert not commands_run([message]) and not command_syntax(message)
    assert commands_run([message.replace("\\[", "[")])  # what the line would have done unescaped
