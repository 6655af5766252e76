"""A real git repository with a change to review (a bug: the mean divides by len - 1), and answer builders."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memdoor.core.ledger import CallRecord, Ledger
from memdoor.review.consensus import Group
from memdoor.review.context import Skipped
from memdoor.review.session import ReviewConfig, ReviewReport, Unusable

CALC = '''def mean(xs):
    """The mean of a list of numbers."""
    total = 0
    for x in xs:
        total += x
    return total / len(xs)
'''
BUGGY = CALC.replace("total / len(xs)", "total / (len(xs) - 1)")
TESTS = """import unittest
from calc import mean


class T(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)

    def test_empty(self):
        self.assertEqual(mean([]), 0)
"""
FIX = "    return total / len(xs) if xs else 0"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.org")
    git(root, "config", "user.name", "t")
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TESTS)
    git(root, "add", "calc.py", "test_calc.py")
    git(root, "commit", "-qm", "init")
    return root


def diff_of(root: Path, path: str, new_text: str) -> str:
    """The diff that changes ``path`` to ``new_text`` (the tree is left as it was)."""
    old = (root / path).read_text() if (root / path).exists() else None
    (root / path).write_text(new_text)
    git(root, "add", "-N", path)
    out = git(root, "diff")
    if old is None:
        git(root, "rm", "-q", "--cached", path)
        (root / path).unlink()
    else:
        (root / path).write_text(old)
    return out


def finding(**kw) -> dict:
    base = {"file": "calc.py", "line": 6, "end_line": 6, "severity": "high", "kind": "bug",
            "message": "divides by len(xs) - 1 instead of len(xs): the mean is wrong", "confidence": 0.8}  # fmt: skip
    return {**base, **kw}


def answer(*findings: dict, fence: bool = True) -> str:
    body = json.dumps({"findings": list(findings)})
    return f"My review.\n```json\n{body}\n```\n" if fence else body


def report(**kw) -> ReviewReport:
    """A report with one consensus finding (with a suggestion), one minority finding, a skipped file and an
    unusable answer; ``kw`` replaces fields."""
    g = Group(
        file="calc.py", line=6, end_line=6, severity="high", kind="bug", message="divides by len - 1",
        suggestion="    return total / len(xs)", agents=["agent0", "agent1"], confidence=0.8,
    )  # fmt: skip
    m = g.model_copy(
        update={"line": 1, "end_line": 2, "severity": "low", "kind": "style", "agents": ["agent2"]}
    )
    ledger = Ledger(calls=[CallRecord(agent="agent0", model="m", prompt_tokens=10, completion_tokens=5)])
    base = dict(
        findings=[g], minority=[m], agents=3, quorum=2, files=["calc.py"], config=ReviewConfig(agents=3),
        ledger=ledger, trace_id="abc", skipped=[Skipped(file="big.py", reason="too big")],
        unusable=[Unusable(agent="agent2", file="calc.py", error="no JSON")],
    )  # fmt: skip
    return ReviewReport(**{**base, **kw})
