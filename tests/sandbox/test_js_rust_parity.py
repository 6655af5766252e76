"""HumanEval-X parity: Memdoor's verdicts agree with the official harness's rules (CodeGeeX's
``execution.py``: ``node test.js`` passes iff stdout and stderr are empty; Rust: ``cargo check`` then
``cargo test``) on canonical solutions and broken variants of them. The reference here runs those rules
literally, outside the sandbox, on our own trusted variants only: node in a temporary directory, and a real
cargo package depending on rand, regex and md5 from Debian's offline registry.

Deliberate differences, asserted apart: a JavaScript program that exits with a non-zero status without
printing anything passes the official rule (it looks only at the output) and fails here; and tests that
never ran to their end or were disarmed (issue 41: ``process.exit(0)``, a replaced ``console.assert``, a
panic hook that exits 0, a shadowed ``assert_eq!``, ... — test_unfinished_tests.py) pass the official rule
and fail here: the tests below count them (JavaScript 10 of 10, Rust 5 of 5) and say why.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memdoor.judging.programs import grade, grade_many
from memdoor.problems.humaneval_x import KNOWN_BAD, data_file, load_humaneval_x
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang.run import tool_for

CARGO = shutil.which("cargo") or "/root/.cargo/bin/cargo"
DEBIAN_REGISTRY = Path("/usr/share/cargo/registry")
JS_IDS = ["JavaScript/0", "JavaScript/2", "JavaScript/12", "JavaScript/35", "JavaScript/53", "JavaScript/104"]
RUST_IDS = ["Rust/0", "Rust/12", "Rust/38", "Rust/91", "Rust/162"]


def _first_swap(body: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        if old in body:
            return body.replace(old, new, 1)
    return body + "\n/* unchanged */"


JS_VARIANTS = {
    "canonical": lambda body: body,
    "wrong_value": lambda body: "  return undefined;\n}\n",
    "off_by_one": lambda body: _first_swap(body, [("< ", "<= "), ("+ 1", "+ 2"), ("- 1", "- 2"), ("0", "1")]),
    "prints": lambda body: '  console.log("debug");\n' + body,
    "syntax_error": lambda body: body.replace("}", "", 1) + "\n)(",
    "throws": lambda body: '  throw new Error("no");\n' + body,
}
RUST_VARIANTS = {
    "canonical": lambda body: body,
    "type_error": lambda body: '    let _x: i32 = "no";\n' + body,
    "syntax_error": lambda body: body + "\n fn (",
    "panics": lambda body: '    if true { panic!("no"); }\n' + body,
    "off_by_one": lambda body: _first_swap(body, [("< ", "<= "), ("+ 1", "+ 2"), ("- 1", "- 2"), ("0", "1")]),
}


def _records(language: str) -> dict[str, dict]:
    with gzip.open(data_file(language), "rt", encoding="utf-8") as f:
        return {r["task_id"]: r for r in map(json.loads, f)}


def official_js(rec: dict, completion: str, folder: Path, timeout: float = 10.0) -> bool:
    """CodeGeeX's rule: ``node test.js``; failed if stderr, else failed if stdout, else passed."""
    (folder / "test.js").write_text(rec["prompt"] + completion + "\n" + rec["test"])
    try:
        done = subprocess.run(["node", "test.js"], cwd=folder, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return not done.stderr and not done.stdout


def official_rust(rec: dict, completion: str, folder: Path, target: Path) -> bool:
    """CodeGeeX's rule: the program as the binary of a package with rand, regex and md5; ``cargo check``
    must succeed, then ``cargo test`` must exit 0. (rand 0.8 here: Debian's offline crate; no canonical
    solution calls an API that differs from 0.4.)"""
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "Cargo.toml").write_text(
        '[package]\nname = "humaneval"\nversion = "0.1.0"\nedition = "2021"\n'
        '[dependencies]\nrand = "0.8"\nregex = "1"\nmd5 = "0.7.0"\n'
    )
    program = "\nfn main(){ \n } \n" + rec["declaration"] + rec["prompt"] + completion + rec["test"]
    (folder / "src" / "main.rs").write_text(program)
    home = target / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "debian"\n'
        f'[source.debian]\ndirectory = "{DEBIAN_REGISTRY}"\n[net]\noffline = true\n'
    )
    env = {**os.environ, "CARGO_HOME": str(home), "CARGO_TARGET_DIR": str(target / "target")}
    for step in (["check"], ["test", "--bin", "humaneval"]):
        done = subprocess.run(
            [CARGO, *step, "--offline", "-q"], cwd=folder, env=env, capture_output=True, timeout=300
        )
        if done.returncode != 0:
            return False
    return True


@pytest.fixture(scope="module")
def sb():
    with open_sandbox(SandboxConfig(timeout_s=10.0, prestart=False)) as s:
        yield s


@pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")
def test_javascript_agrees_with_the_official_rule(sb, tmp_path):
    records = _records("javascript")
    problems = {p.id: p for p in load_humaneval_x("javascript")}
    differ, official_passes = [], 0
    for pid in JS_IDS:
        rec = records[pid]
        for name, make in JS_VARIANTS.items():
            completion = make(rec["canonical_solution"])
            folder = tmp_path / f"{pid.replace('/', '_')}_{name}"
            folder.mkdir()
            theirs = official_js(rec, completion, folder)
            ours = grade(problems[pid], completion, sb).passed
            official_passes += theirs
            if ours != theirs:
                differ.append((pid, name, theirs))
    assert differ == []
    assert official_passes >= len(JS_IDS)  # the canonical solutions pass; the variants mostly do not


@pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")
def test_javascript_silent_nonzero_exit_is_the_one_difference(sb, tmp_path):
    rec = _records("javascript")["JavaScript/0"]
    problem = load_humaneval_x("javascript")[0]
    completion = "  process.exit(1);\n}\n"
    assert official_js(rec, completion, tmp_path)  # the official rule looks at the output only
    v = grade(problem, completion, sb)
    assert v.status == "runtime_error" and "exit status 1" in v.tests[0].detail


@pytest.mark.skipif(
    not (tool_for("rust").usable and Path(CARGO).exists() and DEBIAN_REGISTRY.is_dir()),
    reason="the sandbox's Rust toolchain, cargo or Debian's crate registry (scripts/install_rust.sh) is missing",
)
def test_rust_agrees_with_cargo_check_then_cargo_test(sb, tmp_path):
    records = _records("rust")
    problems = {p.id: p for p in load_humaneval_x("rust")}
    target = tmp_path / "cargo"
    target.mkdir()
    differ, official_passes, compile_errors = [], 0, 0
    for pid in RUST_IDS:
        rec = records[pid]
        for name, make in RUST_VARIANTS.items():
            completion = make(rec["canonical_solution"])
            theirs = official_rust(rec, completion, tmp_path / f"{pid.replace('/', '_')}_{name}", target)
            verdict = grade(problems[pid], completion, sb)
            official_passes += theirs
            compile_errors += verdict.status == "compile_error"
            if verdict.passed != theirs:
                differ.append((pid, name, theirs, verdict.status))
    assert differ == []
    assert official_passes >= len(RUST_IDS)
    assert compile_errors >= 2 * len(RUST_IDS)  # type and syntax errors are the official compilation errors


def _canonical_failures(language: str, ids: list[str] | None = None) -> dict[str, str]:
    records = _records(language)
    problems = load_humaneval_x(language, keep_bad=True)
    if ids is not None:
        problems = [p for p in problems if p.id in ids]
    with open_sandbox(SandboxConfig(workers=2, timeout_s=10.0)) as box:
        verdicts = grade_many(((p, records[p.id]["canonical_solution"]) for p in problems), box, workers=2)
        return {p.id: v.status for p, v in zip(problems, verdicts, strict=True) if not v.passed}


@pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")
def test_every_javascript_canonical_solution_passes_but_the_known_bad():
    failed = _canonical_failures("javascript")
    assert set(failed) == {pid for pid in KNOWN_BAD if pid.startswith("JavaScript/")}, failed


@pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")
def test_rust_canonical_solutions_pass_but_the_known_bad():
    # a sample (every one: benchmarks/humaneval_x_canonical.py rust): the first 20 and those using the crates
    ids = [f"Rust/{i}" for i in range(20)] + ["Rust/38", "Rust/50", "Rust/53", "Rust/91", "Rust/162"]
    failed = _canonical_failures("rust", ids)
    assert set(failed) == {pid for pid in KNOWN_BAD if pid in ids}, failed


@pytest.mark.skipif(
    not (tool_for("javascript").usable and Path(CARGO).exists() and DEBIAN_REGISTRY.is_dir()),
    reason="node, cargo or Debian's crate registry is missing",
)
def test_exported_completions_of_whole_function_answers_pass_the_official_rules(tmp_path):
    from test_js_rust_program import whole_function

    from memdoor.bench.export import humaneval_completion
    from memdoor.bench.records import ProblemInfo

    target = tmp_path / "cargo"
    target.mkdir()
    failed = []
    for language, ids in (("javascript", JS_IDS), ("rust", RUST_IDS[:3])):
        records = _records(language)
        problems = {p.id: p for p in load_humaneval_x(language)}
        for pid in ids:
            rec, info = records[pid], ProblemInfo.of(problems[pid], 0)
            answers = [whole_function(language, rec), rec["canonical_solution"]]  # a team's, an official one
            if language == "rust":  # with its own imports (one the declaration has) and main
                answers.append(
                    "use std::cmp::max;\nuse std::collections::BTreeMap;\n" + answers[0] + "\nfn main() {}\n"
                )
            for k, answer in enumerate(answers):
                completion = humaneval_completion(info, answer)
                folder = tmp_path / f"{pid.replace('/', '_')}_{k}"
                folder.mkdir()
                ok = (
                    official_js(rec, completion, folder)
                    if language == "javascript"
                    else official_rust(rec, completion, folder, target)
                )
                if not ok:
                    failed.append((pid, k))
    assert failed == []


def _never_ran_differences(language: str, official, tmp_path: Path) -> tuple[list[str], list[str]]:
    """The samples of test_unfinished_tests's never-ran classes (those safe to run outside a sandbox) that
    the official rule passes, and those Memdoor passes."""
    from test_unfinished_tests import JS_NEVER_RAN, RUST_NEVER_RAN

    records = _records(language)
    problems = {p.id: p for p in load_humaneval_x(language)}
    samples = (
        {k: v for k, v in JS_NEVER_RAN.items() if "secret" not in k}
        if language == "javascript"
        else {k: ("Rust/0", v) for k, v in RUST_NEVER_RAN.items()}
    )
    official_passes, ours = [], []
    with open_sandbox(SandboxConfig(timeout_s=10.0, prestart=False)) as box:
        for name, (pid, completion) in sorted(samples.items()):
            folder = tmp_path / name
            folder.mkdir()
            if official(records[pid], completion, folder):
                official_passes.append(name)
            if grade(problems[pid], completion, box).passed:
                ours.append(name)
    print(f"{language}: {len(official_passes)} of {len(samples)} never-ran samples pass the official rule and "
          f"fail here (the official harness looks only at the exit status and output): {official_passes}")  # fmt: skip
    return official_passes, ours


@pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")
def test_javascript_tests_that_never_ran_are_where_memdoor_is_stricter(tmp_path):
    official_passes, ours = _never_ran_differences("javascript", official_js, tmp_path)
    assert ours == []
    assert set(official_passes) == {
        "exit_0_in_the_function", "exit_0_at_top_level", "really_exit", "console_assert_replaced",
        "console_replaced", "stderr_write_replaced", "uncaught_exception_handler_exits_0",
        "json_stringify_replaced", "array_to_json", "reaches_the_test_through_stack_frames",
    }  # fmt: skip


@pytest.mark.skipif(
    not (tool_for("rust").usable and Path(CARGO).exists() and DEBIAN_REGISTRY.is_dir()),
    reason="the sandbox's Rust toolchain, cargo or Debian's crate registry (scripts/install_rust.sh) is missing",
)
def test_rust_tests_that_never_ran_are_where_memdoor_is_stricter(tmp_path):
    target = tmp_path / "cargo"
    target.mkdir()

    def official(rec, completion, folder):
        return official_rust(rec, completion, folder, target)

    official_passes, ours = _never_ran_differences("rust", official, tmp_path)
    assert ours == []
    assert set(official_passes) == {
        "exit_0", "panic_hook_exits_0", "shadowed_assert_eq", "shadowed_assert_and_vec",
        "writes_a_libtest_report_then_exits_0",
    }  # fmt: skip
