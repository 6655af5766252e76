"""JavaScript candidates, run with the machine's ``node`` as HumanEval-X's official harness runs them.

A ``check`` test is the program followed by the test code, run as ``node main.js``; it passes only when node
exits 0 with empty stdout and stderr (``console.assert`` does not throw in Node: a failed assertion only
prints "Assertion failed" on stderr). A ``stdin`` test runs the program on the input and compares its
output by the same rule as Python's.
"""

from __future__ import annotations

import re
import secrets

from memdoor.core.verdict import TestResult
from memdoor.sandbox import compare
from memdoor.sandbox.lang import completion, js_harness
from memdoor.sandbox.lang.process import (
    CommandLimits,
    CommandResult,
    Isolation,
    candidate_limits,
    limit_result,
    run_isolated,
)
from memdoor.sandbox.lang.toolchain import Tool

_ERROR_LINE = re.compile(r"^[A-Za-z_$][\w$.]*: ")


def limits_for(sandbox: Isolation) -> CommandLimits:
    # V8 reserves far more address space than it uses: RLIMIT_AS only where no group bounds the memory.
    return candidate_limits(sandbox.config, address_space=sandbox.cgroups is None)


def _ended(outcome: CommandResult, sandbox: Isolation) -> TestResult | None:
    """The result when the run ended for a limit or abnormally; None when it exited by itself with 0."""
    limited = limit_result(outcome, sandbox.config)
    if limited is not None:
        return limited
    if outcome.exit_code != 0:
        err = outcome.stderr.decode(errors="replace").strip().splitlines()
        named = [line for line in err if _ERROR_LINE.match(line)]  # "TypeError: ...", node's own report
        rest = [line for line in err if line.strip() and not line.startswith("Node.js v")]
        tail = (named or rest[-1:] or [""])[0]
        return TestResult(
            status="runtime_error",
            seconds=outcome.seconds,
            detail=f"exit status {outcome.exit_code}" + (f": {tail[:300]}" if tail else ""),
        )
    return None


def _node(sandbox: Isolation, node: Tool, source: str) -> CommandResult:
    """``node main.js`` on ``source`` in a fresh sandbox."""
    files = [("main.js", source.encode("utf-8", "surrogatepass"), 0o644)]
    return run_isolated(
        sandbox, [node.path, "/tmp/main.js"], files, limits_for(sandbox), ro_paths=node.ro_paths
    )


_WHY = {
    "stderr": "the official rule fails it",
    # Said so an agent can act on it: small models append console.log calls of the examples, and a repair
    # told only "stdout not empty" kept them (HumanEval-X JavaScript, 2026-12-04).
    "stdout": "the official rule fails any output: print nothing, remove every console.log call",
}


def run_check(sandbox: Isolation, node: Tool, program: str, test_code: str) -> TestResult:
    """HumanEval-X's rule (exit 0, nothing on stdout or stderr), and the test must have run to its end: the
    harness (``js_harness``) writes the run's secret after the test's last line, in a realm no program code
    touches; a run without it never passes, whatever its status and output."""
    secret = secrets.token_hex(16)
    files = [
        (js_harness.HARNESS_FILE, js_harness.SOURCE.encode(), 0o644),
        (js_harness.SECRET_FILE, secret.encode(), 0o644),
        (js_harness.PROGRAM_FILE, program.encode("utf-8", "surrogatepass"), 0o644),
        (js_harness.TEST_FILE, test_code.encode("utf-8", "surrogatepass"), 0o644),
    ]
    outcome = run_isolated(
        sandbox, [node.path, f"/tmp/{js_harness.HARNESS_FILE}"], files, limits_for(sandbox),
        ro_paths=node.ro_paths,
    )  # fmt: skip
    ended = _ended(outcome, sandbox)
    if ended is not None:
        return ended
    end = completion.strip_end_line(outcome, f"{secret} ok", f"{secret} failed")
    if outcome.stdout or outcome.stderr:
        stream = "stderr" if outcome.stderr else "stdout"
        text = (outcome.stderr or outcome.stdout).decode(errors="replace").strip()
        return TestResult(
            status="wrong_answer",
            seconds=outcome.seconds,
            output=compare.keep(outcome.stdout.decode(errors="replace"), sandbox.config.keep_output_chars),
            detail=f"{stream} not empty ({_WHY[stream]}): {text[:300]}",
        )
    if end is None:
        return completion.never_completed(outcome.seconds, "the test code never ran to its end")
    if end != f"{secret} ok":
        return TestResult(status="wrong_answer", seconds=outcome.seconds, detail="an assertion failed")
    return TestResult(status="passed", seconds=outcome.seconds)


def run_stdin(sandbox: Isolation, node: Tool, program: str, stdin: str, expected: str | None) -> TestResult:
    files = [
        ("main.js", program.encode("utf-8", "surrogatepass"), 0o644),
        ("input.txt", stdin.encode(), 0o644),
    ]
    outcome = run_isolated(
        sandbox, [node.path, "/tmp/main.js"], files, limits_for(sandbox), ro_paths=node.ro_paths,
        stdin_file="input.txt",
    )  # fmt: skip
    return stdin_result(sandbox, outcome, expected, _ended(outcome, sandbox))


def stdin_result(
    sandbox: Isolation, outcome: CommandResult, expected: str | None, ended: TestResult | None
) -> TestResult:
    """A stdin test's result from a run's outcome (``ended``: its abnormal end, if any)."""
    if ended is not None:
        return ended
    text = outcome.stdout.decode("utf-8", "replace")
    shown = compare.keep(text, sandbox.config.keep_output_chars)
    if expected is None:
        return TestResult(status="passed", seconds=outcome.seconds, output=shown)
    ok, why = compare.stdin_matches(text, expected)
    return TestResult(
        status="passed" if ok else "wrong_answer", seconds=outcome.seconds, output=shown, detail=why
    )


def call_script(func_name: str, args_json: list[str], marker: str) -> str:
    """Code appended to the program for a function-call test: call ``func_name`` with the JSON arguments
    (awaiting a promise) and print the JSON of the result after ``marker`` on a line of its own."""
    args = ", ".join(args_json)
    return (
        "\n;(async () => {\n"
        f"  const result = await Promise.resolve({func_name}({args}));\n"
        f"  process.stdout.write('\\n{marker}' + JSON.stringify(result === undefined ? null : result));\n"
        "})().catch((e) => { console.error(String((e && e.stack) || e)); process.exit(1); });\n"
    )


def run_functional(
    sandbox: Isolation, node: Tool, program: str, func_name: str, test_input: str, expected: str | None
) -> TestResult:
    """A function-call test (agent-written inputs on a JavaScript function problem): the program then a call
    of ``func_name`` with the input's JSON lines as arguments; passes iff the returned value's JSON equals
    ``expected`` (Python's functional rule). What the program prints itself is ignored. The call's result is
    told apart from the program's output by a random marker: these tests help agents and votes choose; a
    program forging its result only misleads its own selection, never grading on hidden tests."""
    marker = f"memdoor-result-{secrets.token_hex(16)}:"
    lines = [line for line in test_input.splitlines() if line.strip()]
    outcome = _node(sandbox, node, program + call_script(func_name, lines, marker))
    ended = _ended(outcome, sandbox)
    if ended is not None:
        return ended
    return called_result(sandbox, outcome, marker, expected)


def called_result(
    sandbox: Isolation, outcome: CommandResult, marker: str, expected: str | None
) -> TestResult:
    """A function-call test's result from the run's stdout: the text after the last ``marker`` line, the
    returned value's JSON (JavaScript) or Debug text (Rust); compared by Python's functional rule when it
    is JSON, else as text."""
    text = outcome.stdout.decode("utf-8", "replace")
    at = text.rfind("\n" + marker)
    if at < 0:
        return TestResult(
            status="runtime_error", seconds=outcome.seconds, detail="the function returned nothing"
        )
    payload = text[at + 1 + len(marker) :].split("\n", 1)[0]
    shown = compare.keep(payload, sandbox.config.keep_output_chars)
    if expected is None:
        return TestResult(status="passed", seconds=outcome.seconds, output=shown)
    try:
        ok, why = compare.functional_matches(compare.expected_value(payload), expected)
    except (ValueError, RecursionError):  # not JSON (Rust's Some(3), tuples): the text itself
        ok, why = payload == expected.strip(), "returned value differs"
    status = "passed" if ok else "wrong_answer"
    return TestResult(status=status, seconds=outcome.seconds, output=shown, detail="" if ok else why)
