"""The Python driver program in the real sandbox: what it reports for a call or a program run, whatever
the version's files are."""

from __future__ import annotations

from memdoor.core.problem import TestCase
from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import CallOutcome, outcome, program, program_request
from memdoor.review.differential.execute import run_version


async def run(sandbox, files: dict[str, str], tests: list[TestCase]) -> list[CallOutcome]:
    """The outcomes of the driver program carrying ``files`` on ``tests``."""
    return await run_version(Judge(sandbox), program(files, [""]), tests, outcome)


async def test_a_version_without_python_files_cannot_run_the_program_and_does_not_crash(sandbox):
    (found,) = await run(sandbox, {}, [program_request("bin/tool.py", "1 2\n")])
    assert found.kind == "import" and found.type == "FileNotFoundError"
