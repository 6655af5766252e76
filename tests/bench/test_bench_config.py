"""Rows, flags and problem selection of a bench run."""

from __future__ import annotations

from datetime import date

import pytest

from memdoor.bench.config import (
    BenchConfig,
    ProblemFilter,
    RowSpec,
    parse_date,
    parse_difficulty,
    parse_rows,
    solve_config,
    split_entries,
)
from memdoor.bench.suite import problems_digest, select_problems
from memdoor.core.errors import ModelSpecError, UsageError
from memdoor.problems.load import load_problems

MODEL = "local:qwen2.5-coder-0.5b"


def test_rows_follow_the_list_then_the_baselines_with_normalised_names():
    rows = parse_rows(
        "single, parallel:5,sequential:3",
        [MODEL],
        ["single@local:qwen2.5-coder-1.5b", "parallel:2@openai:qwen@http://127.0.0.1:8000/v1"],
    )
    assert [r.name for r in rows] == [
        "single",
        "parallel:5",
        "sequential:3",
        "single@local:qwen2.5-coder-1.5b",
        "parallel:2@openai:qwen@http://127.0.0.1:8000/v1",
    ]
    assert rows[1].models == [MODEL] and not rows[1].baseline
    assert rows[4].models == ["openai:qwen@http://127.0.0.1:8000/v1"] and rows[4].baseline
    assert parse_rows("single:1", [MODEL], [])[0].name == "single"


@pytest.mark.parametrize(
    ("strategies", "models", "baselines", "error"),
    [
        ("single,bogus:3", [MODEL], [], UsageError),
        ("", [MODEL], [], UsageError),
        ("single,,parallel:2", [MODEL], [], UsageError),
        ("parallel:x", [MODEL], [], UsageError),
        ("parallel:0", [MODEL], [], UsageError),
        ("single,single:1", [MODEL], [], UsageError),  # the same row twice
        ("single", [], [], UsageError),
        ("single", ["nope:model"], [], ModelSpecError),
        ("single", ["qwen"], [], ModelSpecError),
        ("single", [MODEL], ["single"], UsageError),
        ("single", [MODEL], ["bogus@" + MODEL], UsageError),
        ("single", [MODEL], ["single@nope:x"], ModelSpecError),
    ],
)
def test_bad_rows_are_refused_with_a_typed_error(strategies, models, baselines, error):
    with pytest.raises(error):
        parse_rows(strategies, models, baselines)


def test_difficulty_and_dates_are_checked():
    assert parse_difficulty("hard,easy") == ["easy", "hard"]
    assert parse_difficulty(None) is None
    with pytest.raises(UsageError):
        parse_difficulty("easy,impossible")
    assert parse_date("--since", "2024-02-01") == date(2024, 2, 1)
    with pytest.raises(UsageError, match="--until"):
        parse_date("--until", "2024-13-01")


def test_filters_are_inclusive_and_limit_takes_the_first_in_file_order(problem_file):
    problems = load_problems(problem_file)
    ids = lambda f: [p.id for p in select_problems(problems, f)]  # noqa: E731
    assert ids(ProblemFilter()) == ["add", "mul", "neg", "sub", "square", "double"]
    assert ids(ProblemFilter(difficulty=["easy"])) == ["add", "sub", "double"]
    assert ids(ProblemFilter(since=date(2024, 2, 10), until=date(2024, 3, 20))) == ["mul", "neg", "sub"]
    assert ids(ProblemFilter(difficulty=["easy", "medium"], limit=3)) == ["add", "mul", "sub"]
    assert ids(ProblemFilter(since=date(2030, 1, 1))) == []


def test_problems_without_difficulty_or_date_are_dropped_by_those_filters():
    humaneval = load_problems("humaneval")[:3]
    assert select_problems(humaneval, ProblemFilter(difficulty=["easy"])) == []
    assert select_problems(humaneval, ProblemFilter(since=date(2000, 1, 1))) == []
    assert len(select_problems(humaneval, ProblemFilter(limit=2))) == 2


def test_the_digest_follows_content_and_order_not_where_the_file_is(problem_file, tmp_path):
    problems = load_problems(problem_file)
    copy = tmp_path / "elsewhere" / "copy.yaml"
    copy.parent.mkdir()
    copy.write_text(problem_file.read_text())
    assert problems_digest(load_problems(copy)) == problems_digest(problems)
    assert problems_digest(problems[::-1]) != problems_digest(problems)
    assert problems_digest(problems[:2]) != problems_digest(problems)


def test_identity_ignores_the_suite_path_but_not_what_changes_results():
    rows = parse_rows("single", [MODEL], [])
    a = BenchConfig(suite="a.jsonl", rows=rows)
    assert a.identity() == BenchConfig(suite="/elsewhere/a.jsonl", rows=rows).identity()
    assert a.identity() != BenchConfig(suite="a.jsonl", rows=rows, seed=1).identity()
    assert a.identity() != BenchConfig(suite="a.jsonl", rows=rows, budget_tokens=5000).identity()


def test_a_strategies_entry_may_name_its_own_team():
    a, b = "local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b"
    rows = parse_rows(f"single@{a},parallel:3@{b},parallel:3@{a}*1+{b}*2", [], [])
    assert [r.name for r in rows] == [f"single@{a}", f"parallel:3@{b}", f"parallel:3@{a}*1+{b}*2"]
    with pytest.raises(UsageError, match="given twice"):  # b*3 is the team of b alone
        parse_rows(f"parallel:3@{b},parallel:3@{b}*3", [], [])
    assert [r.models for r in rows[:3]] == [[a], [b], [a, b, b]]
    assert rows[2].team == f"1× {a} + 2× {b}" and rows[0].team == a
    mixed = parse_rows(f"parallel:3@{b}*2+{a}*1", [b], [])[0]
    assert mixed.models == [b, b, a] and mixed.name == f"parallel:3@{b}*2+{a}*1"  # order is agent order
    plain = parse_rows("single,parallel:2", [b], [f"single@{a}"])
    assert [r.models for r in plain] == [[b], [b], [a]] and plain[2].baseline
    with pytest.raises(UsageError, match="at least one --model"):
        parse_rows(f"single,parallel:2@{b}", [], [])
    with pytest.raises(UsageError, match="add up to 2 agents, the strategy has 3"):
        parse_rows(f"parallel:3@{a}*1+{b}*1", [], [])


def test_an_entry_may_set_strategy_options_in_brackets():
    a, b = "local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b"
    rows = parse_rows(
        f"parallel:3,sstar:3[repair_rounds=0, inputs=3],hybrid:3[referee=true]@{a}*1+{b}*2", [b], []
    )
    assert [r.name for r in rows] == [
        "parallel:3",
        "sstar:3[repair_rounds=0,inputs=3]",
        f"hybrid:3[referee=true]@{a}*1+{b}*2",
    ]
    assert rows[1].options == {"repair_rounds": 0, "inputs": 3} and rows[1].strategy == "sstar:3"
    assert rows[2].options == {"referee": True} and rows[2].models == [a, b, b]
    config = BenchConfig(suite="humaneval", rows=rows)
    solve = solve_config(config, rows[1])
    assert solve.options == {"repair_rounds": 0, "inputs": 3}
    assert solve.settings()["options"]["repair_rounds"] == 0  # recorded per row, defaults filled in
    assert solve_config(config, rows[0]).options == {}
    # a row without options is stored as before the field existed; one with options keeps them
    assert "options" not in rows[0].model_dump() and rows[1].model_dump()["options"] == rows[1].options
    assert RowSpec.model_validate(rows[1].model_dump(mode="json")) == rows[1]


@pytest.mark.parametrize(
    "entry, error",
    [
        ("sstar:3[repair_rounds=-1]", "bad options for strategy sstar"),
        ("sstar:3[no_such_option=1]", "its options: .*repair_rounds"),
        ("sstar:3[repair_rounds]", "expected KEY=VALUE"),
        ("sstar:3[]", r"expected STRATEGY\[KEY=VALUE"),
        ("sstar:3[repair_rounds=0", r"expected STRATEGY\[KEY=VALUE"),
        ("sstar:3[repair_rounds=0]x", r"expected STRATEGY\[KEY=VALUE"),
    ],
)
def test_bad_strategy_options_are_refused_naming_the_entry(entry, error):
    with pytest.raises(UsageError, match=error):
        parse_rows(entry, [MODEL], [])


def test_commas_inside_brackets_do_not_split_entries():
    assert split_entries("a, b[x=1,y=2]@m ,c[]") == ["a", "b[x=1,y=2]@m", "c[]"]
    assert split_entries("a,,b") == ["a", "", "b"]
