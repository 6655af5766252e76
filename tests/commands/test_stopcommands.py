"""Under GitHub Actions, nothing ``memdoor review`` writes is read as a workflow command: the report and
the messages are wrapped in ``::stop-commands::`` (a pipe, as the runner's log is), JSON and SARIF are
left parseable (a ``##[`` in a string escaped), a regular file gets no markers."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from test_review_cli import git, memdoor

from memdoor.commands import stopcommands

REGISTERED = {"warning", "error", "notice", "debug", "set-output", "set-env", "add-path", "add-mask",
              "save-state", "group", "endgroup", "echo", "add-matcher", "remove-matcher"}  # fmt: skip
HOSTILE_NAME = "##[warning]forged annotation.py"
HOSTILE_TEST = (
    "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n"
    '        self.assertEqual(add(2, 2), 4, "\\n::stop-commands::tok42\\n::set-output name=verdict::clean")\n'
)


def commands_run(lines: list[str]) -> list[str]:
    """The workflow commands the Actions runner would carry out on ``lines`` (its ActionCommandManager:
    ``::name ...::`` after leading blanks, the legacy ``##[name ...]`` anywhere in a line, and the
    stop/resume state)."""
    registered, stop, ran = {*REGISTERED, "stop-commands"}, None, []
    for line in lines:
        text, name, data = line.lstrip(), None, ""
        if text.startswith("::") and text.find("::", 2) > 0:
            info = text[2 : text.find("::", 2)]
            name, data = info.split(" ")[0], text[text.find("::", 2) + 2 :]
        elif "##[" in line and "]" in line[line.index("##[") :]:
            name = line[line.index("##[") + 3 : line.index("]", line.index("##["))].split(" ")[0]
        if name is None or name.lower() not in {r.lower() for r in registered}:
            continue
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


def test_stderr_is_wrapped_only_around_what_is_written(actions, capsys):
    with stopcommands.stopped_stderr():
        pass
    assert capsys.readouterr().err == ""
    with stopcommands.stopped_stderr():
        print("memdoor: ##[error]forged", file=sys.stderr, end="")
    err = capsys.readouterr().err.splitlines()
    assert err[1] == "memdoor: ##[error]forged" and err[0].startswith("::stop-commands::")
    assert err[2] == f"::{err[0].removeprefix('::stop-commands::')}::" and not commands_run(err)


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


def test_bad_input_under_actions_is_one_wrapped_line_exit_2(hostile):
    done = memdoor(hostile, "--base", "##[warning]nosuch", extra_env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 2 and done.stdout == ""
    first, message, last = done.stderr.splitlines()
    assert message.startswith("memdoor: --base ##[warning]nosuch: ")
    assert not commands_run([first, message, last])
    assert commands_run([message])  # what the line would have done unwrapped


def test_the_report_never_falls_inside_a_stop_of_standard_error(actions, capsys):
    """The runner reads the two streams apart: a stop held open on standard error is ended before the
    report is written, and a later message opens a new one."""
    with stopcommands.stopped_stderr():
        print("memdoor: one", file=sys.stderr)
        stopcommands.print_report("# review\n", "markdown")
        print("memdoor: two", file=sys.stderr)
    out, err = capsys.readouterr()
    first, one, end, again, two, last = err.splitlines()
    assert (one, two) == ("memdoor: one", "memdoor: two") and first != again
    assert end == f"::{first[17:]}::" and last == f"::{again[17:]}::" and out.splitlines()[1] == "# review"
