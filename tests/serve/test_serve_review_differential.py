"""The differential stage through ``memdoor serve`` (issue 43 item 5): a real server over real HTTP, the
official client, a real git repository, the sandbox; scripted agents for the control flow. A change that
breaks a function no test covers, described as a refactoring, is a finding with its input and both
outputs; a real refactoring of the same function is none."""

from __future__ import annotations

import ast
import json

import pytest
from serve_helpers import client, running, scripted, user
from test_serve_review import git, repo_and_diff  # noqa: F401  (the fixture: calc.py and its tests)

CLAMP = '''def clamp(x, lo, hi):
    """x, kept within lo and hi."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
'''
BROKEN = CLAMP.replace("        return hi\n", "        return hi - 1\n")
REFACTORED = CLAMP.replace("    if x > hi:", "    elif x > hi:").replace(
    "    return x\n", "    else:\n        return x\n"
)
INPUTS = '```json\n[["5", "0", "3"], ["1", "0", "3"]]\n```'
REFACTORING = "refactor, no behaviour change"


def results(code: str, args: str):
    """What ``clamp(args)`` returns in ``code`` (trusted here: the test's own code and a literal input)."""
    scope: dict = {}
    exec(code, scope)
    return scope["clamp"](*ast.literal_eval(f"({args},)"))


def reply(messages) -> str:
    """A scripted agent: inputs when asked for inputs, an empty review when asked to read the diff (the
    refactoring rule asks no intent)."""
    asked = messages[-1]["content"]
    if "Both versions will be called" in asked:
        return INPUTS
    return "My review.\n```json\n" + json.dumps({"findings": []}) + "\n```\n"


@pytest.fixture
def repo(repo_and_diff):  # noqa: F811
    """The serve tests' repository with ``bounds.py``, which no test covers."""
    root, _ = repo_and_diff
    (root / "bounds.py").write_text(CLAMP)
    git(root, "add", "bounds.py")
    git(root, "commit", "-qm", "bounds")
    return root


def change(root, new_text: str) -> str:
    """The diff that rewrites bounds.py as ``new_text``; the tree is left as it was."""
    (root / "bounds.py").write_text(new_text)
    out = git(root, "diff")
    (root / "bounds.py").write_text(CLAMP)
    return out


def test_the_differential_stage_runs_through_serve(sandbox, repo, tmp_path):
    models = {"scripted:r": scripted("scripted:r", respond=reply)}
    with running(models, sandbox, tmp_path / "traces", review_repo=repo,
                 review_test="python3 -m unittest -q") as srv:  # fmt: skip
        c = client(srv, timeout=300)
        review = {"review": {"description": REFACTORING}}  # every stage, as a client asks by default
        r = c.chat.completions.create(
            model="memdoor/review-3", messages=user(change(repo, BROKEN)), extra_body=review
        )
        extra = r.model_extra["memdoor"]
        assert extra["stages_run"] == ["tests", "differential", "reading"]
        (g,) = extra["findings"]
        assert g["source"] == "differential" and g["verified"] and g["severity"] == "high"
        assert (g["file"], g["line"]) == ("bounds.py", 6)
        ce = g["counterexample"]
        assert ce["function"] == "clamp"
        # the input (the smallest the stage found) gives these results on each version
        old, new = (results(text, ce["input"]) for text in (CLAMP, BROKEN))
        assert (ce["old"], ce["new"]) == (f"returns {old}", f"returns {new}") and old != new
        assert (
            extra["differential"]["rule"] == "refactoring" and extra["differential"]["outcome"] == "reported"
        )
        content = r.choices[0].message.content
        shown = f"  call:   clamp({ce['input']})\n  base:   returns {old}\n  change: returns {new}\n"
        assert shown in content and "(verified)" in content

        r = c.chat.completions.create(
            model="memdoor/review-3", messages=user(change(repo, REFACTORED)), extra_body=review
        )
        extra = r.model_extra["memdoor"]
        assert extra["findings"] == [] and extra["observed_behaviour"] == []
        (fn,) = [f for f in extra["differential"]["functions"] if f["name"] == "clamp"]
        assert fn["outcome"] == "no difference" and fn["inputs"] > 2
    assert (repo / "bounds.py").read_text() == CLAMP
