"""Rust differences shrink too (differential.shrink, execute, plan): a Rust function's smaller inputs fit its
parameter types and run in one harness per round and version; a Rust program's run as its standard input.
End to end (real sandbox, scripted agent): a function broken for negative numbers, found only with an
agent's big input, is reported with a small one; a program likewise; a round whose harness does not
compile leaves the original input."""

from __future__ import annotations

import dataclasses
import json
from functools import partial

import pytest
from differential_helpers import commit, review_change
from review_helpers import make_repo

from memdoor.review.differential import plan
from memdoor.review.differential.execute import RECHECKS
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.rust_inputs import takes
from memdoor.review.differential.shrink import ROUNDS, candidates, size
from memdoor.review.differential.targets import Changed
from memdoor.sandbox.lang import rust
from memdoor.sandbox.lang.run import tool_for

needs_rust = pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")


def rust_function(*types: str) -> Changed:
    return Changed(
        target="function", language="rust", file="src/lib.rs", old_file="src/lib.rs", name="f",
        params=[(f"p{i}", t) for i, t in enumerate(types)], old_source="", new_source="", line=1, end_line=1,
    )  # fmt: skip


def test_a_rust_functions_smaller_inputs_fit_its_parameter_types():
    fits = partial(takes, rust_function("i8"))
    made = [c.text for c in candidates(Call(text="[-128]"), "rust", fits=fits)]
    # 128, -128 without its sign, does not fit i8: no harness is asked to compile it
    assert made == ["[0]", "[-1]", "[-12]", "[-64]", "[-127]"]
    assert candidates(Call(text='["a"]'), "rust", fits=partial(takes, rust_function("char"))) == []  # no ""
    pair = Call(text="[[-9437, 12, 7, 3000], 5]")
    made = candidates(pair, "rust", fits=partial(takes, rust_function("&[i64]", "u8")))
    assert made and all(size(c) < size(pair) for c in made) and "[[-9437], 5]" in [c.text for c in made]
    assert all(len(json.loads(c.text)) == 2 for c in made)


# ---------------------------------------------------------------- the stage, end to end
LIB = """/// The sum of the values, times k.
pub fn scale(xs: &[i64], k: i64) -> i64 {
    xs.iter().sum::<i64>() * k
}
"""
LIB_BROKEN = LIB.replace("xs.iter().sum::<i64>()", "xs.iter().map(|x| x.abs()).sum::<i64>()")
# our own inputs keep k at its first value (0) while the slice varies: only the agent's input shows it
BIG = "```json\n[[[-9437, 12, 7, 3000], 5]]\n```"


def lib_repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    commit(root, "src/lib.rs", LIB)
    return root


def count_builds(monkeypatch) -> list[int]:
    """The number of inputs of each Rust program the sandbox builds (once per run) and runs."""
    sizes: list[int] = []
    real = rust.run_stdin_tests

    def counted(sandbox, rustc, program, tests, stop):
        sizes.append(len(tests))
        return real(sandbox, rustc, program, tests, stop)

    monkeypatch.setattr(rust, "run_stdin_tests", counted)
    return sizes


@needs_rust
async def test_a_rust_function_broken_for_negative_numbers_is_reported_with_a_small_input(
    sandbox, tmp_path, monkeypatch
):
    builds = count_builds(monkeypatch)
    report, _ = await review_change(sandbox, lib_repo(tmp_path), "src/lib.rs", LIB_BROKEN, tmp_path,
                                    lambda m: BIG)  # fmt: skip
    (fn,) = report.differential.functions
    assert fn.outcome == "reported" and fn.reproduced == 1  # only the agent's big input showed it
    (g,) = report.findings
    ce = g.counterexample
    assert (ce.function, ce.input, ce.old, ce.new) == ("scale", "[-1], 1", "returns -1", "returns 1")
    # both versions: the inputs, those that differed again, and the shrinking's own: one harness a round,
    # and one for the shrunk input's re-runs (1 + RECHECKS of them)
    assert len(builds) <= 2 * (2 + ROUNDS + 1)
    assert builds[-2:] == [1 + RECHECKS] * 2


PROGRAM = """use std::io::Read;

fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let mut n = 0;
    for line in s.lines() {
        n += 1;
    }
    println!("{}", n);
}
"""
# a line that starts with a capital letter is no longer counted (our own inputs have none)
PROGRAM_BROKEN = PROGRAM.replace(
    "        n += 1;\n",
    "        if !line.starts_with(char::is_uppercase) {\n            n += 1;\n        }\n",
)
LINES = "```json\n" + json.dumps(["alpha\nbeta\nGamma\ndelta\nepsilon\nzeta\neta\ntheta\n"]) + "\n```"


@needs_rust
async def test_a_rust_program_broken_for_some_lines_is_reported_with_one_line(sandbox, tmp_path):
    root = make_repo(tmp_path / "repo")
    commit(root, "src/main.rs", PROGRAM)
    report, _ = await review_change(sandbox, root, "src/main.rs", PROGRAM_BROKEN, tmp_path, lambda m: LINES)
    (fn,) = report.differential.functions
    assert fn.outcome == "reported" and fn.reproduced == 1
    (g,) = report.findings
    ce = g.counterexample
    assert (ce.function, ce.input, ce.old, ce.new) == (
        "src/main.rs",
        "'Gamma\\n'",
        "prints '1\\n' and exits with status 0",
        "prints '0\\n' and exits with status 0",
    )


@needs_rust
@pytest.mark.parametrize("fails_from", [1, 2], ids=["first-round", "second-round"])
async def test_a_round_whose_harness_does_not_compile_keeps_the_original_input(
    sandbox, tmp_path, monkeypatch, fails_from
):
    """From the ``fails_from``-th harness of the shrinking rounds on, the harness does not compile: the
    difference stays, with its own input (a smaller one an earlier round found is dropped too)."""
    rebuilt = []
    real = plan._rebaked

    def broken(*args):
        batch = real(*args)
        rebuilt.append(batch)
        if len(rebuilt) < fails_from:
            return batch
        return dataclasses.replace(batch, new_code=batch.new_code + "\nfn __broken( {}\n")

    monkeypatch.setattr(plan, "_rebaked", broken)
    report, _ = await review_change(sandbox, lib_repo(tmp_path), "src/lib.rs", LIB_BROKEN, tmp_path,
                                    lambda m: BIG)  # fmt: skip
    (g,) = report.findings
    ce = g.counterexample
    old, new = (9437 - 12 - 7 - 3000) * 5, (9437 + 12 + 7 + 3000) * 5
    assert (ce.input, ce.old, ce.new) == ("[-9437, 12, 7, 3000], 5", f"returns -{old}", f"returns {new}")
    assert len(rebuilt) == fails_from  # no round after the one that failed
