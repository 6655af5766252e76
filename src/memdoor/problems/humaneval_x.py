"""Loader for HumanEval-X's JavaScript and Rust problems, shipped in the package (``memdoor/data/humaneval_x``,
Apache-2.0, with its licence), as the suites ``humaneval-js`` and ``humaneval-rust``.

The official harness (CodeGeeX's ``evaluate_humaneval_x.py``) runs ``prompt + completion + test`` for
JavaScript and ``"\\nfn main(){ \\n } \\n" + declaration + prompt + completion + test`` for Rust: that prefix
is the problem's grading prefix and ``test`` its hidden ``check`` test (the sandbox's language runners apply
the official pass rules). JavaScript's ``example_test`` (the docstring's examples) is the public test; Rust
has none, so its public test only checks that the program compiles (:data:`COMPILES`).

A few problems cannot pass under the official rules whatever the completion (their canonical solution fails
its own tests here); they are left out of the suites and listed in :data:`KNOWN_BAD` with the reason, which
:func:`excluded` reports, never silently.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from memdoor.core.errors import ProblemFormatError
from memdoor.core.problem import Problem, TestCase
from memdoor.problems.humaneval import jsonl_lines
from memdoor.problems.jsonl import parse_object

Language = Literal["javascript", "rust"]
SUITES: dict[str, Language] = {"humaneval-js": "javascript", "humaneval-rust": "rust"}
_FILES = {"javascript": "humaneval_js.jsonl.gz", "rust": "humaneval_rust.jsonl.gz"}
RUST_MAIN = "\nfn main(){ \n } \n"  # the official harness's empty main, before the declaration
COMPILES = TestCase(
    kind="check", input="// (no public tests: this one only checks that the program compiles)\n"
)
"""Rust's public test (HumanEval-X has no examples for Rust): the test build with no tests, so agents see
their compiler errors (repair) and a program that does not compile never looks like a passing one."""

# Checked by grading every canonical solution in the sandbox (benchmarks/humaneval_x_canonical.py).
KNOWN_BAD: dict[str, str] = {
    "JavaScript/112": "the canonical solution fails its own tests (an error in the data)",
    "JavaScript/155": "the canonical solution fails its own tests (an error in the data)",
    "JavaScript/162": "the canonical solution requires the npm package js-md5, which is not installed",
    "Rust/50": "its test calls rand 0.4's gen_range(low, high); the offline rand is 0.8 (Debian's), where "
    "that call does not compile",
}

_JS_NAME = re.compile(r"^\s*(?:const|let|var|function)\s+([A-Za-z_$][\w$]*)", re.M)
_RUST_NAME = re.compile(r"^\s*(?:pub\s+)?fn\s+([A-Za-z_]\w*)", re.M)


def data_file(language: Language) -> Path:
    return Path(str(resources.files("memdoor").joinpath("data", "humaneval_x", _FILES[language])))


def _text(rec: dict[str, Any], field: str, path: Path, line_no: int) -> str:
    value = rec.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ProblemFormatError(str(path), line_no, field, "missing, empty or not a string")
    return value


def problem_from_record(rec: dict[str, Any], language: Language, source: str, line_no: int = 0) -> Problem:
    path = Path(source)
    task_id = _text(rec, "task_id", path, line_no)
    prompt, declaration = _text(rec, "prompt", path, line_no), _text(rec, "declaration", path, line_no)
    test = _text(rec, "test", path, line_no)
    names = (_JS_NAME if language == "javascript" else _RUST_NAME).findall(declaration)
    if not names:
        raise ProblemFormatError(source, line_no, "declaration", "names no function")
    if language == "javascript":
        statement, starter, prefix = prompt, prompt, prompt
        example = rec.get("example_test")
        public = (
            [TestCase(kind="check", input=example)] if isinstance(example, str) and example.strip() else []
        )
    else:
        statement = f"{prompt.strip()}\n{declaration.strip()}\n"
        starter, prefix, public = statement, RUST_MAIN + declaration + prompt, [COMPILES]
    return Problem(
        id=task_id,
        title=names[-1],
        statement=statement,
        starter_code=starter,
        func_name=names[-1],
        public_tests=public,
        hidden_tests=[TestCase(kind="check", input=test)],
        grading_prefix=prefix,
        grade_on="hidden",
        platform="humaneval-x",
        language=language,
        source=source,
    )


def load_humaneval_x(
    language: Language, path: str | Path | None = None, *, keep_bad: bool = False
) -> list[Problem]:
    """The suite's problems (164 less :data:`KNOWN_BAD`; all with ``keep_bad``), from the shipped file or
    ``path`` (the same format, .jsonl or .jsonl.gz)."""
    path = Path(path) if path else data_file(language)
    problems = []
    try:
        for line_no, line in jsonl_lines(path):
            if not line.strip():
                continue
            problem = problem_from_record(parse_object(line, path, line_no), language, str(path), line_no)
            if keep_bad or problem.id not in KNOWN_BAD:
                problems.append(problem)
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ProblemFormatError(str(path), None, None, f"cannot read: {e}") from None
    return problems


def excluded(suite: str) -> dict[str, str]:
    """The problems a suite leaves out, with the reason (empty for other sources)."""
    language = SUITES.get(suite.lower())
    if language is None:
        return {}
    prefix = "JavaScript/" if language == "javascript" else "Rust/"
    return {k: v for k, v in KNOWN_BAD.items() if k.startswith(prefix)}
