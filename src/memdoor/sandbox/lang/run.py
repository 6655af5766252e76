"""One entry point for candidates in other languages: :func:`run_program`, a Verdict as Python's sandbox gives.

``check`` tests (HumanEval-X) run the program followed by the test code, one sandbox run each (two for
Rust: compile, then run); ``stdin`` tests run the program on each input (Rust compiles it once).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence

from memdoor.core.errors import SandboxError, UsageError
from memdoor.core.problem import TestCase
from memdoor.core.verdict import TestResult, Verdict
from memdoor.sandbox.lang import javascript, rust
from memdoor.sandbox.lang.process import Isolation
from memdoor.sandbox.lang.toolchain import Tool, find_node, find_rust

LANGUAGES = ("javascript", "rust")


@functools.cache
def tool_for(language: str) -> Tool:
    """The language's tool as found on this machine (looked up once per process)."""
    if language == "javascript":
        return find_node()
    if language == "rust":
        return find_rust()
    raise UsageError(f"unknown language {language!r} (python, {', '.join(LANGUAGES)})")


def usable_tool(language: str) -> Tool:
    tool = tool_for(language)
    if not tool.usable:
        raise SandboxError(f"cannot run {language} here: {tool.problem}")
    return tool


def _functional(
    sandbox: Isolation, language: str, tool: Tool, code: str, func_name: str | None, test: TestCase
) -> TestResult:
    """A function-call test (agent-written inputs, a request's examples): the function called with the JSON
    arguments (Rust: as literals of its declared parameter types, see rust_call)."""
    if not func_name:
        return TestResult(status="runtime_error", detail="a function-call test needs the function's name")
    runner = javascript.run_functional if language == "javascript" else rust.run_functional
    return runner(sandbox, tool, code, func_name, test.input, test.output)


def run_program(
    sandbox: Isolation,
    language: str,
    code: str,
    tests: Sequence[TestCase],
    *,
    func_name: str | None = None,
    stop_at_first_failure: bool = True,
) -> Verdict:
    """Run ``code`` (in ``language``) on ``tests``. Raises SandboxError when the language cannot run here or
    the sandbox cannot start, never for anything the candidate does."""
    tool = usable_tool(language)
    started = time.monotonic()
    tests = list(tests)
    if language == "rust" and tests and all(t.kind == "stdin" for t in tests):
        pairs = [(t.input, t.output) for t in tests]
        results = rust.run_stdin_tests(sandbox, tool, code, pairs, stop_at_first_failure)
        return Verdict.of(results, time.monotonic() - started, sandbox.name)
    results: list[TestResult | None] = []
    for test in tests:
        if stop_at_first_failure and any(r is not None and r.status != "passed" for r in results):
            results.append(None)
            continue
        if test.kind == "check":
            runner = javascript.run_check if language == "javascript" else rust.run_check
            results.append(runner(sandbox, tool, code, test.input))
        elif test.kind == "functional":
            results.append(_functional(sandbox, language, tool, code, func_name, test))
        else:
            results.append(javascript.run_stdin(sandbox, tool, code, test.input, test.output))
    return Verdict.of(results, time.monotonic() - started, sandbox.name)
