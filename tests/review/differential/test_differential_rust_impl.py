"""Rust functions of inherent ``impl Type { ... }`` blocks in the differential stage: an associated function
is called as ``Type::f(args)``; a method on ``Type::default()`` when both versions derive or implement
``Default`` (a ``&mut self`` method's value shown after the call too), otherwise skipped with the reason;
generic and trait impls are skipped; a broken change is a finding with its input and both results, a real
refactoring is none."""

from __future__ import annotations

from pathlib import Path

import pytest
from differential_helpers import commit, finishes, review_change
from review_helpers import make_repo

from memdoor.review.differential.rustfunctions import compare_rust
from memdoor.sandbox.lang.run import tool_for

LIB = """use std::fmt;

/// A running total.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Counter {
    n: i64,
}

impl Counter {
    pub fn new(n: i64) -> Self {
        Counter { n: n.max(0) }
    }

    pub fn get(&self, k: i64) -> i64 {
        if k > 0 { self.n + k } else { self.n }
    }

    pub fn bump(&mut self, by: i64) {
        self.n += by;
    }
}

pub struct Plain(u8);

impl Plain {
    pub fn twice(&self) -> u8 {
        self.0.wrapping_mul(2)
    }
}

pub struct Unit;

impl Default for Unit {
    fn default() -> Self { Unit }
}

impl Unit {
    pub fn size(self, s: &str) -> usize { s.len() }
}

pub struct Stack<T>(Vec<T>);

impl<T> Stack<T> {
    pub fn depth(&self) -> usize { self.0.len() }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.n)
    }
}
"""
BROKEN = (
    LIB.replace("n.max(0)", "n.max(1)")
    .replace("if k > 0", "if k > 1")
    .replace("self.n += by;", "self.n += by.abs();")
    .replace("self.0.wrapping_mul(2)", "self.0.wrapping_add(self.0)")
)
REFACTORED = (
    LIB.replace("Counter { n: n.max(0) }", "let n = if n < 0 { 0 } else { n };\n        Self { n }")
    .replace("if k > 0 { self.n + k } else { self.n }", "self.n + k.max(0)")
    .replace("self.n += by;", "self.n = self.n + by;")
)
needs_rust = pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")


def test_an_impl_s_functions_are_found_and_those_the_harness_cannot_call_skipped_with_the_reason():
    new = BROKEN.replace("{ s.len() }", "{ s.chars().count() }").replace("self.0.len()", "self.0.len() + 1")
    new = new.replace('"{}", self.n', '"{} ", self.n')
    found, skipped = compare_rust(LIB, new, file="src/lib.rs")
    assert [(c.name, c.params, c.line) for c in found] == [
        ("Counter::new", [("n", "i64")], 10),
        ("Counter::default().get", [("k", "i64")], 14),
        ("(&mut Counter::default()).bump", [("by", "i64")], 18),
        ("Unit::default().size", [("s", "&str")], 38),  # its Default is implemented, not derived
    ]
    assert found[0].literals == [1, 0]
    assert [s.reason for s in skipped] == [
        "Plain::twice: a method of Plain, which does not derive or implement Default in both versions"
        " (the harness has no value to call it on): not compared",
        "Stack<T>::depth: a function of a generic impl (impl<...>): not compared",
        "<Counter as fmt::Display>::fmt: a function of a trait impl (impl Trait for Type): not compared",
    ]
    no_default = new.replace("Debug, Default, Clone", "Debug, Clone")
    found, skipped = compare_rust(LIB, no_default, file="src/lib.rs")
    assert [c.name for c in found] == ["Counter::new", "Unit::default().size"]
    assert [s.reason.split(": ")[0] for s in skipped][:2] == ["Counter::get", "Counter::bump"]


def test_hostile_impls_and_derives_are_read_in_linear_time():
    k = 20_000
    hostile = "#[derive(Default)]\n" * k + "impl X {\n" * k + "}\n" * k + "impl<" * k + ";\n"
    tail = "#[derive(Default)]\nstruct C;\nimpl C {\n    fn get(&self) -> i32 { 1 }\n}\n"
    # a search growing with the square of the text takes minutes
    found, _ = finishes(
        lambda: compare_rust(hostile + tail, hostile + tail.replace("{ 1 }", "{ 2 }"), file="src/lib.rs")
    )
    assert [c.name for c in found] == ["C::default().get"]


CALLED = ("Counter::new", "Counter::default().get", "(&mut Counter::default()).bump")
"""The targets the harness calls for Counter's associated function and methods."""


def _answer(messages: list) -> str:
    return "```json\n[[-5]]\n```" if "Counter::new" in messages[-1]["content"] else "```json\n[]\n```"


@pytest.fixture
def repo(tmp_path) -> Path:
    root = make_repo(tmp_path / "repo")
    commit(root, "src/lib.rs", LIB)
    return root


@needs_rust
async def test_changed_impl_functions_and_default_type_methods_are_findings(sandbox, repo, tmp_path):
    report, _ = await review_change(sandbox, repo, "src/lib.rs", BROKEN, tmp_path, _answer)
    outcomes = {f.name: f.outcome for f in report.differential.functions}
    assert outcomes == dict.fromkeys(CALLED, "reported")
    (plain,) = report.differential.skipped
    assert plain.reason.startswith("Plain::twice: a method of Plain, which does not derive or implement")
    shown = {g.counterexample.function: g.counterexample for g in report.findings}
    new, get, bump = (shown[k] for k in CALLED)
    # Self is the type: its value is shown by its Debug text
    assert (new.input, new.old, new.new) == ("0", "returns Counter { n: 0 }", "returns Counter { n: 1 }")
    assert (get.input, get.old, get.new) == ("1", "returns 1", "returns 0")
    # a &mut self method returns (): the value after the call shows the change
    assert (bump.input, bump.old, bump.new) == (
        "-1",
        "returns () (self after: Counter { n: -1 })",
        "returns () (self after: Counter { n: 1 })",
    )


@needs_rust
async def test_a_real_refactoring_of_an_impl_is_no_finding(sandbox, repo, tmp_path):
    report, _ = await review_change(sandbox, repo, "src/lib.rs", REFACTORED, tmp_path, _answer)
    functions = report.differential.functions
    assert tuple(f.name for f in functions) == CALLED
    assert all(f.outcome == "no difference" and f.inputs > 1 for f in functions)
    assert not report.findings and not report.differential.skipped
