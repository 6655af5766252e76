"""One entry point for every problem source."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memdoor.core.errors import ProblemFormatError, UsageError
from memdoor.core.problem import Problem
from memdoor.problems.humaneval import load_humaneval
from memdoor.problems.humaneval_x import SUITES as HUMANEVAL_X
from memdoor.problems.humaneval_x import load_humaneval_x
from memdoor.problems.livecodebench import load_jsonl
from memdoor.problems.userfile import SUFFIXES, load_dir, load_file


def load_problems(source: str | Path) -> list[Problem]:
    """Problems from ``humaneval``, ``humaneval-js`` or ``humaneval-rust`` (HumanEval-X, shipped: see
    ``humaneval_x.excluded`` for the problems they leave out), a LiveCodeBench ``.jsonl`` file, a user
    ``.yaml``/``.json`` file, or a
    folder of user files. Ids must be unique, and every problem has a test (else nothing would grade it).
    Raises ProblemFormatError for anything unreadable or empty."""
    text = str(source)
    if text.lower() == "humaneval":
        problems = load_humaneval()
    elif text.lower() in HUMANEVAL_X:
        problems = load_humaneval_x(HUMANEVAL_X[text.lower()])
    else:
        path = Path(text)
        if path.is_dir():
            problems = load_dir(path)
        elif not path.exists():
            raise ProblemFormatError(
                text, None, None, "no such file (or say 'humaneval', 'humaneval-js' or 'humaneval-rust')"
            )
        elif text.endswith((".jsonl", ".jsonl.gz")) and "humaneval" in path.name.lower():
            problems = load_humaneval(path)
        elif text.endswith(".jsonl"):
            problems = load_jsonl(path)
        elif path.suffix in SUFFIXES:
            problems = load_file(path)
        else:
            raise ProblemFormatError(
                text, None, None, "unknown problem file type (.jsonl, .yaml, .yml, .json)"
            )
    if not problems:
        raise ProblemFormatError(text, None, None, "no problems in it")
    seen: set[str] = set()
    for p in problems:
        if p.id in seen:
            raise ProblemFormatError(text, None, "id", f"duplicate problem id {p.id!r}")
        seen.add(p.id)
    return problems


def find_problem(problems: Sequence[Problem], problem_id: str) -> Problem:
    for p in problems:
        if p.id == problem_id:
            return p
    hint = ", ".join(p.id for p in problems[:5])
    raise UsageError(f"no problem {problem_id!r} (the file has {len(problems)}, e.g. {hint})")
