"""Building the cases: candidate changes of each function, each one's kind decided in the real sandbox.

Functions are taken in an order drawn from the seed; each gives at most one case of each kind, until every
kind has its quota. Per function: the reference must pass its examples, its hidden check and agree with
itself on the random inputs (they are valid and deterministic); then

- mutants (:mod:`review_cases.mutants`, taking the kinds of mistake in turn): public examples and the hidden
  check run on each; passes every example and fails the check -> ``missed``; fails an example and the check
  -> ``caught``; passes the check, or runs out of time or memory -> dropped;
- refactorings: kept when the examples, the hidden check and the agreement with the reference all pass;
- intended changes: the changed function's results on the examples become the changed tests (a PR that
  changes behaviour updates its tests); kept when those tests, the new behaviour's property and the
  agreement with the reference outside the change's domain all pass;
- ``mixed``: an intended change plus a ``missed`` mutant on other lines; kept when the property holds and
  some input tells it from the intended change alone.

Everything that runs a changed function runs in the sandbox (memdoor.judging.programs.run_on).
"""

from __future__ import annotations

import ast
import builtins
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, Field

from memdoor.core.problem import TestCase
from memdoor.core.protocols import Sandbox
from memdoor.core.verdict import Verdict
from memdoor.judging.programs import run_on
from review_cases.checks import (
    agreement_check,
    differs_check,
    property_check,
    public_check,
    random_inputs,
    test_file,
)
from review_cases.edits import apply_edits, changed_lines, conflicts, entry_function
from review_cases.intents import intents
from review_cases.mutants import bug_description, mutants, operator_class
from review_cases.records import KINDS, CaseKind, Example, ReviewCase, Source, Variant
from review_cases.refactors import refactorings

DEFAULT_QUOTA: dict[str, int] = {"missed": 32, "caught": 12, "refactor": 22, "intended": 22, "mixed": 5}


class BuildConfig(BaseModel):
    """What decides the set of cases (the same config and data give the same cases)."""

    seed: int = 0
    quota: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_QUOTA))
    workers: int = Field(default=2, ge=1, description="Sandbox runs at once.")
    mutants_per_function: int = Field(default=8, ge=1, description="Mutants tried per function at most.")
    tries_per_function: int = Field(
        default=4, ge=1, description="Refactorings or intents tried per function."
    )
    inputs: int = Field(
        default=40, ge=1, description="Random inputs per agreement check (plus the known ones)."
    )
    timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="Sandbox seconds per test: generous, so that load never decides a case.",
    )


class Runner:
    """Runs changed code on tests in the sandbox, ``workers`` at a time; every test runs (no early stop)."""

    def __init__(self, sandbox: Sandbox, workers: int) -> None:
        self.sandbox, self.workers = sandbox, workers

    def run(self, src: Source, code: str, tests: Sequence[TestCase]) -> Verdict:
        return run_on(src.problem, code, tests, self.sandbox, stop_at_first_failure=False)

    def many(self, jobs: list[tuple[Source, str, Sequence[TestCase]]]) -> list[Verdict]:
        if len(jobs) <= 1 or self.workers == 1:
            return [self.run(*j) for j in jobs]
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="cases") as pool:
            return list(pool.map(lambda j: self.run(*j), jobs))


def check(code: str) -> TestCase:
    return TestCase(kind="check", input=code)


def calls(examples: list[Example]) -> list[TestCase]:
    """The examples as functional tests that record what the code returns."""
    return [TestCase(kind="functional", input="\n".join(json.dumps(a) for a in e.args)) for e in examples]


def outcomes(verdict: Verdict, names: Sequence[str]) -> dict[str, str]:
    """Each named test's status ("not run" when the verdict has fewer results)."""
    return {n: verdict.tests[i].status if i < len(verdict.tests) else "not run" for i, n in enumerate(names)}


def _exception(detail: str) -> str | None:
    m = re.match(r"([A-Za-z_]\w*):", detail)
    name = m.group(1) if m else None
    ok = name is not None and isinstance(getattr(builtins, name, None), type)
    return name if ok and issubclass(getattr(builtins, name), Exception) else None


def changed_examples(examples: list[Example], verdict: Verdict) -> list[Example] | None:
    """The examples as the changed code answers them (its new results, or the exception it raises now);
    None when one cannot be read (timed out, an unreadable value)."""
    out = []
    for e, r in zip(examples, verdict.tests, strict=False):
        if r.status == "passed" and r.output is not None:
            try:
                value = json.loads(r.output)
            except ValueError:
                return None
            out.append(e if value == e.expected else Example(args=e.args, expected=value))
        elif r.status == "runtime_error" and _exception(r.detail):
            out.append(Example(args=e.args, raises=_exception(r.detail)))
        else:
            return None
    return out if len(out) == len(examples) else None


def balanced(variants: list[Variant], rng: random.Random, key: Callable[[Variant], str]) -> list[Variant]:
    """``variants`` in a seeded order that takes each kind (``key``) in turn: the first of every kind, in
    a seeded order of the kinds, then the second of every kind... (decided per function, so that what one
    function gives never changes what another one tries)."""
    kinds = sorted({key(v) for v in variants})
    rng.shuffle(kinds)
    rank = {k: i for i, k in enumerate(kinds)}
    shuffled = list(variants)
    rng.shuffle(shuffled)
    seen: Counter = Counter()
    ordered = []
    for v in shuffled:
        ordered.append((seen[key(v)], rank[key(v)], v))
        seen[key(v)] += 1
    return [v for _, _, v in sorted(ordered, key=lambda t: (t[0], t[1]))]


def intent_class(v: Variant) -> str:
    """The kind of an intended change for taking kinds in turn (the three empty-input changes are one)."""
    return "empty input" if "empty" in v.name else v.name


def has_loop(code: str, entry: str) -> bool:
    fn = entry_function(ast.parse(code), entry)
    return fn is not None and any(isinstance(n, ast.For | ast.While) for n in ast.walk(fn))


class FunctionCases:
    """The cases one function gives (at most one per kind), for the kinds still ``needed``."""

    def __init__(self, src: Source, runner: Runner, config: BuildConfig) -> None:
        self.src, self.runner, self.config = src, runner, config
        self.rng = random.Random(f"{config.seed}:{src.problem_id}")
        self.examples: list[Example] = []
        self.inputs: list[list] = []

    def reference_ok(self) -> bool:
        """Keep the examples the reference answers as written; the reference must pass them, its hidden
        check, and agree with itself on the random inputs."""
        src = self.src
        got = self.runner.run(src, src.code, calls(src.examples))
        kept = [e for e, r in zip(src.examples, got.tests, strict=False)
                if r.status == "passed" and r.output is not None and _loads(r.output) == e.expected]  # fmt: skip
        if not kept:
            return False
        self.examples = kept
        self.inputs = random_inputs(src.seeds, self.rng, self.config.inputs)
        tests = [
            check(public_check(kept)),
            *src.problem.hidden_tests,
            check(agreement_check(src.code, src.entry, self.inputs)),
        ]
        return self.runner.run(src, src.code, tests).passed

    def bugs(self, needed: dict[str, int]) -> list[tuple[str, Variant, dict[str, str]]]:
        """Mutants classified ``missed`` or ``caught``, in the order tried, until each needed kind has one."""
        src, cfg = self.src, self.config
        want = {k for k in ("missed", "caught") if needed.get(k, 0) > 0}
        if needed.get("mixed", 0) > 0:
            want.add("missed")
        if not want:
            return []
        found: list[tuple[str, Variant, dict[str, str]]] = []
        order = balanced(mutants(src.code, src.entry), self.rng, lambda v: "mutant:" + operator_class(v.name))
        order = order[: cfg.mutants_per_function]
        tests = [check(public_check(self.examples)), *src.problem.hidden_tests]
        names = ["public examples", "hidden check"]
        for start in range(0, len(order), cfg.workers):
            batch = order[start : start + cfg.workers]
            verdicts = self.runner.many([(src, apply_edits(src.code, v.edits), tests) for v in batch])
            for v, verdict in zip(batch, verdicts, strict=True):
                got = outcomes(verdict, names)
                if any(s not in ("passed", "wrong_answer", "runtime_error") for s in got.values()):
                    continue
                if got["hidden check"] == "passed":
                    continue
                kind = "missed" if got["public examples"] == "passed" else "caught"
                found.append((kind, v, got))
            if want <= {k for k, _, _ in found}:
                break
        return found

    def refactor(self) -> tuple[Variant, dict[str, str]] | None:
        src, cfg = self.src, self.config
        order = balanced(refactorings(src.code, src.entry), self.rng, lambda v: "refactor:" + v.name)
        tests = [check(public_check(self.examples)), *src.problem.hidden_tests,
                 check(agreement_check(src.code, src.entry, self.inputs))]  # fmt: skip
        names = ["public examples", "hidden check", "agrees with the reference"]
        for v in order[: cfg.tries_per_function]:
            verdict = self.runner.run(src, apply_edits(src.code, v.edits), tests)
            if verdict.passed:
                return v, outcomes(verdict, names)
        return None

    def intent(self) -> tuple[Variant, list[Example], dict[str, str]] | None:
        src, cfg = self.src, self.config
        order = balanced(intents(src), self.rng, intent_class)
        for v in order[: cfg.tries_per_function]:
            code = apply_edits(src.code, v.edits)
            after = changed_examples(self.examples, self.runner.run(src, code, calls(self.examples)))
            if after is None:
                continue
            tests = [
                check(public_check(after)),
                check(property_check(src.code, src.entry, self.inputs, v.prop or "")),
            ]
            names = ["changed examples", "new behaviour"]
            if v.domain is not None:
                tests.append(check(agreement_check(src.code, src.entry, self.inputs, v.domain, v.plain)))
                names.append("agrees with the reference elsewhere")
            verdict = self.runner.run(src, code, tests)
            if verdict.passed:
                return v, after, outcomes(verdict, names)
        return None

    def mixed(
        self, intent: Variant, after: list[Example], bugs: list[Variant]
    ) -> tuple[Variant, dict[str, str], bool] | None:
        """The intended change plus a bug on other lines: (bug, evidence, whether a changed test fails)."""
        src = self.src
        alone = apply_edits(src.code, intent.edits)
        names = ["changed examples", "new behaviour", "differs from the intended change alone"]
        tests = [check(public_check(after)), check(property_check(src.code, src.entry, self.inputs, intent.prop or "")),
                 check(differs_check(alone, src.entry, self.inputs, intent.domain or "True"))]  # fmt: skip
        for bug in bugs[:2]:
            if conflicts(intent.edits, bug.edits):
                continue
            verdict = self.runner.run(src, apply_edits(src.code, intent.edits + bug.edits), tests)
            got = outcomes(verdict, names)
            shown = got["new behaviour"] == got["differs from the intended change alone"] == "passed"
            if shown and got["changed examples"] in ("passed", "wrong_answer", "runtime_error"):
                return bug, got, got["changed examples"] != "passed"
        return None

    def cases(self, needed: dict[str, int]) -> list[ReviewCase]:
        if not self.reference_ok():
            return []
        src = self.src
        tests = test_file(src.entry, self.examples)
        out: list[ReviewCase] = []

        def case(kind: CaseKind, v: Variant, after: str, **fields) -> None:
            out.append(ReviewCase(
                id=f"{src.problem_id}:{kind}", problem_id=src.problem_id, entry=src.entry, kind=kind,
                transform=fields.pop("transform", v.name), before=src.code, after=after,
                tests_before=tests, tests_after=fields.pop("tests_after", tests),
                changed=changed_lines(src.code, after), **fields,
            ))  # fmt: skip

        bugs = self.bugs(needed)
        for kind in ("missed", "caught"):
            hit = next(((v, got) for k, v, got in bugs if k == kind), None)
            if hit is not None and needed.get(kind, 0) > 0:
                claim, text = bug_description(src.entry, self.rng, loop=has_loop(src.code, src.entry))
                case(kind, hit[0], apply_edits(src.code, hit[0].edits), description=text, claim=claim,
                     public_fails=kind == "caught", evidence=hit[1])  # fmt: skip
        if needed.get("refactor", 0) > 0 and (r := self.refactor()) is not None:
            case("refactor", r[0], apply_edits(src.code, r[0].edits), description=r[0].description,
                 public_fails=False, evidence=r[1])  # fmt: skip
        if needed.get("intended", 0) > 0 or needed.get("mixed", 0) > 0:
            found = self.intent()
            if found is not None:
                v, after, got = found
                changed_tests = test_file(src.entry, after)
                if needed.get("intended", 0) > 0:
                    case("intended", v, apply_edits(src.code, v.edits), description=v.description,
                         public_fails=False, evidence=got, tests_after=changed_tests)  # fmt: skip
                missed = [b for k, b, _ in bugs if k == "missed"]
                if needed.get("mixed", 0) > 0 and (m := self.mixed(v, after, missed)) is not None:
                    bug, got, fails = m
                    case("mixed", bug, apply_edits(src.code, v.edits + bug.edits), description=v.description,
                         transform=f"{v.name} + {bug.name}", public_fails=fails, evidence=got,
                         tests_after=changed_tests)  # fmt: skip
        return out


def _loads(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return object()


def problem_number(problem_id: str) -> tuple[str, int]:
    head, _, tail = problem_id.rpartition("/")
    return (head, int(tail)) if tail.isdigit() else (problem_id, -1)


def seeded_order(sources: list[Source], seed: int, exclude: Collection[str] = ()) -> list[Source]:
    """The functions in the order the seed draws, without the ``exclude``d problems (a holdout: the
    functions another selection chose); the order of the others is the same with or without them."""
    order, left_out = list(sources), set(exclude)
    random.Random(seed).shuffle(order)
    return [s for s in order if s.problem_id not in left_out]


def build_cases(
    sources: list[Source], sandbox: Sandbox, config: BuildConfig, log: Callable[[str], None] | None = None,
    exclude: Collection[str] = (),
) -> list[ReviewCase]:  # fmt: skip
    """Cases of every kind up to its quota, from the functions in a seeded order (``exclude``d problems
    left out); sorted by kind, then problem. Deterministic for a seed and the data (the sandbox decides
    each candidate the same way)."""
    order = seeded_order(sources, config.seed, exclude)
    runner = Runner(sandbox, config.workers)
    count: Counter = Counter()
    cases: list[ReviewCase] = []
    for src in order:
        needed = {k: config.quota.get(k, 0) - count[k] for k in KINDS}
        if all(n <= 0 for n in needed.values()):
            break
        got = FunctionCases(src, runner, config).cases(needed)
        for c in got:
            if needed[c.kind] > 0:
                cases.append(c)
                count[c.kind] += 1
        if log is not None:
            log(f"  {src.problem_id}: {', '.join(c.kind for c in got) or '-'} ({sum(count.values())} cases)")
    kind_order = {k: i for i, k in enumerate(KINDS)}
    return sorted(cases, key=lambda c: (kind_order[c.kind], problem_number(c.problem_id)))
