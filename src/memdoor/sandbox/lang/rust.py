"""Rust candidates: compiled inside the sandbox (``include_str!`` reads files at compile time, so the
compiler sees only what a candidate may see), with the toolchain and the prebuilt crates read-only, then
run in a second, fresh sandbox.

The test code is not in the program's file: it is in a file of a random name per build, included at the end
of ``/tmp/main.rs`` by ``::std::include!`` (a full path: a ``macro_rules! include`` of the program cannot
take its place). A program that reads its own file at compile time (``include_str!(file!())``,
``include_bytes!("/tmp/main.rs")``) finds only that name as text, never as a literal it could pass to
``include_str!``, so it cannot learn the names of the tests before they run (issue 41, class 6).

HumanEval-X's official harness runs ``cargo check`` then ``cargo test`` in a package depending on rand,
regex and md5. Here the same two steps are rustc's own: the check is ``rustc --emit=metadata`` of the
binary (no ``cfg(test)``, as ``cargo check``), the test build is ``rustc --test`` linking the crates
prebuilt once by scripts/install_rust.sh (the warm cache: no candidate rebuilds a crate). To save a
compiler run, the test build comes first and the check only runs when it fails:

- the check fails: ``compile_error`` (the official "compilation error");
- the check passes but the tests do not build: ``runtime_error`` (cargo test fails, the official "failed");
- a test fails (an assertion, or a panic in the candidate): the test binary exits 101: ``wrong_answer``;
- the binary ends otherwise (a signal, ``process::exit``): ``runtime_error``; limits as everywhere.

A program built with test code is first read for what could stand in for the harness (``rust_untrusted``:
``extern crate self as std``, ``.init_array`` code, ``#[no_mangle]``...): such a program is a
``compile_error`` saying why, never compiled. Binaries are built with their symbols stripped.
"""

from __future__ import annotations

import json
import secrets
import shlex

from memdoor.core.verdict import TestResult
from memdoor.sandbox.lang import completion, rust_call, rust_report, rust_untrusted
from memdoor.sandbox.lang.javascript import called_result, stdin_result
from memdoor.sandbox.lang.process import (
    CommandLimits,
    CommandResult,
    Isolation,
    candidate_limits,
    limit_result,
    run_isolated,
)
from memdoor.sandbox.lang.toolchain import Tool

COMPILE_TIMEOUT_S = 60.0
COMPILE_MEMORY_MB = 2048
MAX_BINARY_BYTES = 256 << 20
EDITION = "2021"
TEST_FAILED = 101  # the exit status of a Rust test binary (and of a panicking program) when a test failed
REFUSED = "not compiled with the tests: the program holds "


def _flags(rustc: Tool) -> str:
    deps = {p.rsplit("/", 1)[0] for p in rustc.extern.values()}
    parts = [
        "--edition",
        EDITION,
        "-C",
        "debuginfo=0",
        "-C",
        "strip=symbols",
        "-C",
        "opt-level=0",
        "-A",
        "warnings",
    ]
    parts += [a for d in sorted(deps) for a in ("-L", f"dependency={d}")]
    parts += [a for name, path in rustc.extern.items() for a in ("--extern", f"{name}={path}")]
    return shlex.join(parts)


def compile_script(rustc: Tool, test: bool) -> str:
    """The shell script run in the compile sandbox: the binary on stdout, diagnostics on stderr; exit 2 when
    the check fails, 3 when only the test build does."""
    r, flags = shlex.quote(rustc.path), _flags(rustc)
    build = (
        f"{r} {flags} --test -o /tmp/bin /tmp/main.rs" if test else f"{r} {flags} -o /tmp/bin /tmp/main.rs"
    )
    check = f"{r} {flags} --crate-type bin --emit=metadata -o /tmp/check.rmeta /tmp/main.rs"
    return (
        f"if ! {build} 2>/tmp/build.err; then "
        f"if {check} 2>/tmp/check.err; then cat /tmp/build.err >&2; exit 3; fi; "
        "cat /tmp/check.err >&2; exit 2; fi; exec cat /tmp/bin"
    )


def _compile_limits(sandbox: Isolation) -> CommandLimits:
    c = sandbox.config
    return CommandLimits(
        timeout_s=COMPILE_TIMEOUT_S,
        memory_mb=max(c.memory_mb, COMPILE_MEMORY_MB),
        max_processes=max(c.max_processes, 64),
        max_file_mb=MAX_BINARY_BYTES >> 20,
        max_output_bytes=MAX_BINARY_BYTES,
        address_space=sandbox.cgroups is None,
    )


def _run_limits(sandbox: Isolation) -> CommandLimits:
    return candidate_limits(sandbox.config, address_space=True)


def _tail(data: bytes, lines: int = 6) -> str:
    text = data.decode(errors="replace").strip().splitlines()
    return "\n".join(text[-lines:])[-800:]


def _first_error(data: bytes) -> str:
    """The compiler's first error and its context (what a repair prompt needs), capped."""
    lines = data.decode(errors="replace").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("error")), 0)
    return "\n".join(lines[start : start + 12])[:800]


def _with_tests(program: str, tests: str) -> list[tuple[str, bytes, int]]:
    """The files of a test build: ``main.rs`` (the program, then the inclusion of the tests) and the tests in
    a file whose name the program cannot know."""
    name = f"t{secrets.token_hex(16)}.rs"
    main = f'{program}\n::std::include!("/tmp/{name}");\n'
    return [_file("main.rs", main), _file(name, tests)]


def _file(name: str, text: str) -> tuple[str, bytes, int]:
    return (name, text.encode("utf-8", "surrogatepass"), 0o644)


def build(
    sandbox: Isolation, rustc: Tool, source: str, *, test: bool, tests: str | None = None
) -> bytes | TestResult:
    """The compiled binary, or the result that ends the test (compile error, limits). ``tests``: the test
    code, built with ``source`` but out of its reach at compile time (:func:`_with_tests`); a ``source`` that
    could stand in for that harness (:func:`.rust_untrusted.refused`) is not compiled with it."""
    if tests is not None and (why := rust_untrusted.refused(source, linkage_blanked=False)) is not None:
        return TestResult(status="compile_error", detail=REFUSED + why)
    outcome = run_isolated(
        sandbox,
        ["/bin/sh", "-c", compile_script(rustc, test)],
        [_file("main.rs", source)] if tests is None else _with_tests(source, tests),
        _compile_limits(sandbox),
        env={"PATH": "/usr/bin:/bin"},
        ro_paths=rustc.ro_paths,
    )
    s = outcome.seconds
    if outcome.oom_killed:
        return TestResult(status="memory_limit", seconds=s, detail="compiling exceeded the memory limit")
    if outcome.timed_out:
        return TestResult(
            status="time_limit", seconds=s, detail=f"compiling took over {COMPILE_TIMEOUT_S:g} s"
        )
    if outcome.overflow:
        return TestResult(status="compile_error", seconds=s, detail="the compiled program is too large")
    if outcome.exit_code == 2:
        return TestResult(status="compile_error", seconds=s, detail=_first_error(outcome.stderr))
    if outcome.exit_code == 3:
        return TestResult(
            status="runtime_error",
            seconds=s,
            detail="the program compiles but its tests do not: " + _first_error(outcome.stderr),
        )
    if outcome.exit_code != 0 or not outcome.stdout:
        return TestResult(
            status="compile_error", seconds=s, detail=f"the compiler ended with status {outcome.exit_code}: "
            + _tail(outcome.stderr),
        )  # fmt: skip
    return outcome.stdout


def _execute(
    sandbox: Isolation, binary: bytes, args: list[str], stdin: str | None, secret: bytes | None = None
) -> CommandResult:
    files = [("bin", binary, 0o755)]
    if secret is not None:
        files.append((rust_report.SECRET_FILE, secret, 0o600))
    if stdin is not None:
        files.append(("input.txt", stdin.encode("utf-8", "surrogatepass"), 0o644))
    return run_isolated(
        sandbox,
        ["/tmp/bin", *args],
        files,
        _run_limits(sandbox),
        stdin_file="input.txt" if stdin is not None else None,
    )


def _ended(outcome: CommandResult, sandbox: Isolation) -> TestResult | None:
    limited = limit_result(outcome, sandbox.config)
    if limited is not None:
        return limited
    s = outcome.seconds
    if outcome.exit_code == 0:
        return None
    status = "wrong_answer" if outcome.exit_code == TEST_FAILED else "runtime_error"
    shown = _tail(outcome.stdout + b"\n" + outcome.stderr, 8)
    return TestResult(status=status, seconds=s, detail=f"exit status {outcome.exit_code}: {shown}")


def run_check(sandbox: Isolation, rustc: Tool, program: str, test_code: str) -> TestResult:
    """``cargo check`` then ``cargo test``: the program with the test module, built with ``--test``, run;
    passed only when libtest reports each of the test's tests as ok and each wrote its completion line with
    the run's secret, and no other completion-shaped line is on either output (``rust_report``)."""
    test_code, expected = rust_report.prepare(test_code)
    binary = build(sandbox, rustc, program, test=True, tests=test_code)
    if isinstance(binary, TestResult):
        return binary
    secret = secrets.token_bytes(rust_report.SECRET_BYTES)
    outcome = _execute(sandbox, binary, [], None, secret)
    guessed = rust_report.foreign(outcome.stdout, outcome.stderr, secret)
    outcome.stderr, done = rust_report.completed(outcome.stderr, secret)
    ended = _ended(outcome, sandbox)
    if ended is not None:
        return ended
    if guessed is not None:
        return TestResult(
            status="runtime_error", seconds=outcome.seconds, detail=f"{guessed}; {completion.OFFICIAL_PASSES}"
        )
    absent = rust_report.missing(outcome.stdout, expected) or rust_report.unfinished(expected, done)
    if absent is not None:
        return completion.never_completed(outcome.seconds, absent)
    return TestResult(status="passed", seconds=outcome.seconds)


def run_stdin_tests(
    sandbox: Isolation, rustc: Tool, program: str, tests: list[tuple[str, str | None]], stop: bool
) -> list[TestResult | None]:
    """A stdin program compiled once, then run on each input (None: not run after a failure)."""
    binary = build(sandbox, rustc, program, test=False)
    if isinstance(binary, TestResult):
        return [binary] + [None if stop else binary for _ in tests[1:]]
    results: list[TestResult | None] = []
    for stdin, expected in tests:
        if stop and results and results[-1] is not None and results[-1].status != "passed":
            results.append(None)
            continue
        outcome = _execute(sandbox, binary, [], stdin)
        results.append(stdin_result(sandbox, outcome, expected, _ended(outcome, sandbox)))
    return results


def run_functional(
    sandbox: Isolation, rustc: Tool, program: str, func_name: str, test_input: str, expected: str | None
) -> TestResult:
    """A function-call test: the JSON arguments as literals of the declared parameter types, the call run as
    a test of the test build (``rust_call``), its Debug text compared by the functional rule (as text when it
    is not JSON)."""
    lines = [line for line in test_input.splitlines() if line.strip()]
    marker = f"memdoor-result-{secrets.token_hex(16)}:"
    try:
        types = rust_call.parameter_types(program, func_name)
        if types is None:
            raise rust_call.Unsupported(f"no function {func_name} with typed parameters in the program")
        module = rust_call.call_test(func_name, types, [json.loads(line) for line in lines], marker)
    except (rust_call.Unsupported, ValueError) as e:
        return TestResult(status="runtime_error", detail=f"function-call test not run: {e}"[:300])
    binary = build(sandbox, rustc, program, test=True, tests=module)
    if isinstance(binary, TestResult):
        return binary
    outcome = _execute(sandbox, binary, ["memdoor_call::call", "--exact", "--nocapture"], None)
    ended = _ended(outcome, sandbox)
    if ended is not None:
        return ended
    return called_result(sandbox, outcome, marker, expected)
