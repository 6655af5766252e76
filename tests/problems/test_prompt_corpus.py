"""The prompt reader on a corpus of ordinary requests (tests/problems/prompt_corpus.yaml): the function
asked for, its parameters and the examples shown, for every entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memdoor.problems.prompt_examples import find_target, functional_examples

CORPUS = Path(__file__).with_name("prompt_corpus.yaml")


def read(text: str) -> dict[str, Any]:
    """What the reader finds in ``text``, in the corpus's terms."""
    target = find_target(text)
    examples = [
        [json.loads(f"[{t.input.replace(chr(10), ',')}]"), json.loads(t.output or "null")]
        for t in functional_examples(text, target)
    ]
    return {
        "name": target.func_name,
        "params": list(target.params) if target.params is not None else None,
        "examples": examples,
    }


def expected(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": entry["name"],
        "params": entry.get("params") if entry["name"] else None,
        "examples": entry.get("examples") or [],
    }


def test_the_corpus_is_large_and_varied():
    entries = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["entries"]
    assert len(entries) >= 100
    named = [e for e in entries if e["name"]]
    assert len(named) >= 70 and len(entries) - len(named) >= 20
    assert sum(bool(e.get("examples")) for e in entries) >= 20
    assert sum("`" not in e["text"] for e in named) >= 30


def test_the_reader_gets_every_entry_right(capsys):
    entries = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["entries"]
    wrong = []
    for i, entry in enumerate(entries):
        got, want = read(entry["text"]), expected(entry)
        if got != want:
            wrong.append(f"#{i} {entry['text'][:70]!r}: got {got}, want {want}")
    score = f"prompt corpus: {len(entries) - len(wrong)}/{len(entries)} entries read right"
    with capsys.disabled():
        print("\n" + score)
    assert not wrong, score + "\n" + "\n".join(wrong)


def test_no_function_is_invented_for_programs_reading_stdin(shared_data):
    """Statements of programs reading standard input (LiveCodeBench, APPS) name no function, though
    they define f(x, y) in formulas and call things "good" or "T"."""
    rows = [json.loads(line) for line in (shared_data / "lcb_v5_public_only_dev.jsonl").open()]
    rows += [json.loads(line) for line in (shared_data / "apps_stdin_dev.jsonl").open()]
    stdin = [r for r in rows if json.loads(r["public_test_cases"])[0]["testtype"] == "stdin"]
    assert len(stdin) > 500
    named = [(r["question_title"], find_target(r["question_content"])) for r in stdin]
    assert [(title, t.func_name) for title, t in named if t.func_name] == []


DEEP = "+".join(["1"] * 5000)


@pytest.mark.parametrize(
    "text",
    [
        f"Write `f(x)`.\nf({DEEP}) == 2",
        f"Write `f(x)`.\n>>> f({DEEP})\n2",
        f"Fix:\n```python\ndef f():\n    return {DEEP}\n```",
        f"Write `f(x)`.\nassert f(1) == {DEEP}",
        f"Write `f(x=1)`.\nf(1) == {DEEP}",
        f"Write `g(x={DEEP})`",
        "Write `f(x)`.\nf('\0') == 1",
    ],
)
def test_text_too_deep_to_parse_is_no_example_and_no_crash(text):
    target = find_target(text)
    assert functional_examples(text, target) == []
