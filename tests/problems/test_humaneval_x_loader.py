"""HumanEval-X (JavaScript, Rust) shipped in the package: the suites, the official program layout, exclusions."""

from __future__ import annotations

import gzip
import json

import pytest

from memdoor.core.errors import ProblemFormatError
from memdoor.judging.programs import program_for
from memdoor.problems.humaneval_x import COMPILES, KNOWN_BAD, RUST_MAIN, data_file, excluded, load_humaneval_x
from memdoor.problems.load import load_problems


def records(language):
    with gzip.open(data_file(language), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_the_data_ships_with_its_licence():
    folder = data_file("javascript").parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    assert "CodeGeeX" in (folder / "README.md").read_text()


def test_javascript_suite_leaves_out_the_known_bad_problems_and_says_why():
    problems = load_problems("humaneval-js")
    assert len(problems) == 164 - 3
    ids = {p.id for p in problems}
    assert excluded("humaneval-js") == {k: v for k, v in KNOWN_BAD.items() if k.startswith("JavaScript/")}
    assert set(excluded("humaneval-js")) == {"JavaScript/112", "JavaScript/155", "JavaScript/162"}
    assert not ids & set(excluded("humaneval-js"))
    assert all(excluded("humaneval-js").values())
    assert len(load_humaneval_x("javascript", keep_bad=True)) == 164


def test_javascript_problem_is_the_official_program_layout():
    rec = records("javascript")[0]
    p = load_problems("humaneval-js")[0]
    assert p.id == "JavaScript/0" and p.func_name == "hasCloseElements" and p.language == "javascript"
    assert p.statement == rec["prompt"] and p.starter_code == rec["prompt"]
    assert [t.kind for t in p.hidden_tests] == ["check"] and p.hidden_tests[0].input == rec["test"]
    assert [t.input for t in p.public_tests] == [rec["example_test"]]
    assert p.grading_tests == p.hidden_tests  # the official harness runs the test alone
    # prompt + completion, then the test appended by the runner: the official prompt + completion + test
    assert program_for(p, "  return 1;\n}").startswith(rec["prompt"])


def test_rust_suite_and_its_program_layout():
    problems = load_problems("humaneval-rust")
    assert len(problems) == 164 - len(excluded("humaneval-rust"))
    rec = records("rust")[0]
    p = problems[0]
    assert p.id == "Rust/0" and p.func_name == "has_close_elements" and p.language == "rust"
    assert p.public_tests == [COMPILES]  # example_test is null for Rust: the public test only builds it
    assert p.grading_prefix == RUST_MAIN + rec["declaration"] + rec["prompt"]
    assert "fn has_close_elements" in p.starter_code and "fn has_close_elements" in p.statement
    assert p.hidden_tests[0].input == rec["test"]


def test_every_problem_names_its_function():
    for language in ("javascript", "rust"):
        for p in load_humaneval_x(language, keep_bad=True):
            assert p.func_name and p.func_name in p.starter_code


def test_python_problems_stay_python():
    assert load_problems("humaneval")[0].language == "python"
    assert excluded("humaneval") == {}
    assert set(excluded("humaneval-rust")) == {"Rust/50"}


def test_a_broken_file_is_a_format_error(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text(json.dumps({"task_id": "JavaScript/0", "prompt": "p", "test": "t"}) + "\n")
    with pytest.raises(ProblemFormatError, match="declaration"):
        load_humaneval_x("javascript", bad)
    bad.write_text("[1]\n")
    with pytest.raises(ProblemFormatError, match="JSON object"):
        load_humaneval_x("rust", bad)
