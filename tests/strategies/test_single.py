"""``single``'s options (issue 46 item 2): the default row asks exactly what the committed runs asked,
``prompt=published`` asks as the Qwen2.5-Coder instruct evaluations did (docs/baselines.md), and
``temperature=`` reaches the model call. Scripted agents drive the control flow; the sandbox is real."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from strategy_helpers import GOOD, add_problem, fenced, make_ctx, scripted

from memdoor.agents.team import Agent, AgentConfig, Team
from memdoor.bench.config import BenchConfig, parse_rows, solve_config
from memdoor.bench.draws import request_digest
from memdoor.core.errors import UsageError
from memdoor.problems.load import load_problems
from memdoor.sandbox.lang.run import tool_for
from memdoor.strategies.single import Single

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
BIG = "local:qwen2.5-coder-1.5b"

PY_GOOD = """from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])"""
JS_GOOD = """const hasCloseElements = (numbers, threshold) => {
  return numbers.some((a, i) => numbers.slice(i + 1).some((b) => Math.abs(a - b) < threshold));
}"""


class Recording:
    """A scripted model that also keeps each call's sampling settings (what the bench's paired draws key
    a request by)."""

    def __init__(self, answer: str, spec: str = BIG):
        self.spec = spec
        self.inner = scripted({"draft": [answer]}, spec=spec)
        self.calls: list[tuple[list, dict]] = []

    async def complete(self, messages, **kw):
        self.calls.append((list(messages), kw))
        return await self.inner.complete(messages, **kw)

    async def aclose(self) -> None:
        return None


def agent_zero(model, *, temperature: float = 0.2, max_tokens: int = 512) -> Team:
    """Agent 0 as a bench run made it (seed 0, the first temperature, the committed runs' token cap)."""
    config = AgentConfig(
        id="agent0", model=model.spec, temperature=temperature, seed=0, max_tokens=max_tokens
    )
    return Team([Agent(config, model)])


def request_key(model: Recording) -> str:
    """The paired-draw key of the model's only call (repeat 0), as bench/draws.py computes it."""
    [(msgs, kw)] = model.calls
    settings = {k: kw.get(k) for k in ("n", "temperature", "max_tokens", "logprobs", "seed")}
    return request_digest(model.spec, msgs, {**settings, "stop": None}) + ":0"


def committed_keys(run: str) -> set[str]:
    with (RESULTS / run / "calls.jsonl").open() as f:
        return {json.loads(line)["key"] for line in f}


@pytest.mark.parametrize(
    "suite, run", [("humaneval", "humaneval-ranked"), ("humaneval-js", "humaneval-js-strong-repair")]
)
async def test_the_default_row_asks_what_the_committed_runs_asked(sandbox, suite, run):
    """The pin of today's prompt is the committed runs' own record: the request key (model, rendered
    messages, temperature, seed, token cap) of the default row's call is one they stored, so the row
    replays its stored draws and resumes."""
    if suite == "humaneval-js" and not tool_for("javascript").usable:
        pytest.skip("node is missing")
    problem = load_problems(suite)[0].public_view()
    model = Recording(fenced(PY_GOOD))
    await Single().solve(problem, agent_zero(model), make_ctx(sandbox))
    assert request_key(model) in committed_keys(run)
    # the same row at another temperature asks the same messages, but is another request
    greedy = Recording(fenced(PY_GOOD))
    await Single(temperature=0).solve(problem, agent_zero(greedy), make_ctx(sandbox))
    assert greedy.calls[0][0] == model.calls[0][0] and greedy.calls[0][1]["temperature"] == 0.0
    assert request_key(greedy) not in committed_keys(run)


def test_the_default_rows_settings_are_the_committed_ones():
    """New options are recorded only when set, so the single rows of committed runs keep their settings
    (a run resumes only with the settings it was made with)."""
    stored = json.loads((RESULTS / "humaneval-ranked" / "run.json").read_text())["config"]
    row = next(r for r in stored["rows"] if r["name"] == f"single@{BIG}")
    [new] = parse_rows(f"single@{BIG}", [], [])
    assert solve_config(BenchConfig(suite="humaneval", rows=[new]), new).settings() == row["settings"]
    [published] = parse_rows(f"single[prompt=published,temperature=0]@{BIG}", [], [])
    assert published.name == f"single[prompt=published,temperature=0]@{BIG}"
    options = solve_config(BenchConfig(suite="humaneval", rows=[published]), published).settings()["options"]
    assert options == {**row["settings"]["options"], "prompt": "published", "temperature": 0.0}


async def test_published_prompt_for_python_is_the_evalplus_chat_prompt(sandbox):
    problem = load_problems("humaneval")[0].public_view()
    model = Recording("Sure! Here it is:\n" + fenced(PY_GOOD) + "It compares every pair.\n")
    sol = await Single(prompt="published").solve(problem, agent_zero(model), make_ctx(sandbox))
    [(msgs, kw)] = model.calls
    assert msgs == [
        {
            "role": "system",
            "content": "You are an intelligent programming assistant to produce Python algorithmic solutions",
        },
        {
            "role": "user",
            "content": "Can you complete the following Python function?\n```python\n"
            + problem.starter_code.strip()
            + "\n```\n",
        },
    ]
    assert problem.starter_code.strip().startswith("from typing import List")
    assert kw["temperature"] == 0.2  # the run's, when the row sets none
    assert sol.code == PY_GOOD and sol.public_verdict is not None and sol.public_verdict.passed


async def test_published_prompt_for_javascript_is_the_multipl_e_chat_prompt(sandbox):
    if not tool_for("javascript").usable:
        pytest.skip("node is missing")
    problem = load_problems("humaneval-js")[0].public_view()
    model = Recording("```js\n" + JS_GOOD + "\n```\n\nThis checks every pair.\n")
    sol = await Single(prompt="published", temperature=0).solve(problem, agent_zero(model), make_ctx(sandbox))
    [(msgs, kw)] = model.calls
    assert msgs == [
        {
            "role": "user",
            "content": "Please continue to complete the function and return all completed code in a "
            "codeblock. Here is the given code to do completion:\n```js\n"
            + problem.starter_code.strip()
            + "\n```",
        }
    ]
    assert problem.starter_code.strip().endswith("const hasCloseElements = (numbers, threshold) => {")
    assert kw["temperature"] == 0.0  # greedy: the row's temperature, not the run's 0.2
    assert sol.code == JS_GOOD and sol.public_verdict is not None and sol.public_verdict.passed


async def test_published_prompt_takes_a_humaneval_x_problem_without_an_example_test(sandbox):
    """JavaScript/38 has no example test, so the view a strategy gets has no test at all (its kind reads
    "functional"): it is still a function to complete, asked the published way, not refused."""
    [problem] = [p for p in load_problems("humaneval-js") if p.id == "JavaScript/38"]
    view = problem.public_view()
    assert not view.public_tests and view.kind != "check"
    model = Recording("```js\n" + problem.starter_code.strip() + "\n  return '';\n}\n```")
    await Single(prompt="published", temperature=0).solve(view, agent_zero(model), make_ctx(sandbox))
    [(msgs, _)] = model.calls
    assert msgs[0]["content"].endswith("```js\n" + problem.starter_code.strip() + "\n```")


async def test_published_prompt_for_rust_names_the_language(sandbox):
    if not tool_for("rust").usable:
        pytest.skip("the sandbox's Rust toolchain is missing")
    problem = load_problems("humaneval-rust")[0].public_view()
    model = Recording("```rust\nfn f() {}\n```")
    team = agent_zero(model)
    await Single(prompt="published").solve(problem, team, make_ctx(sandbox))
    [(msgs, _)] = model.calls
    assert [m["role"] for m in msgs] == ["user"]
    assert msgs[0]["content"].endswith("```rust\n" + problem.starter_code.strip() + "\n```")


async def test_published_prompt_refuses_a_problem_that_is_not_a_function_to_complete(sandbox):
    model = Recording(fenced(GOOD))
    with pytest.raises(UsageError, match=r"single\[prompt=published\] asks for a function to complete"):
        await Single(prompt="published").solve(
            add_problem().public_view(), agent_zero(model), make_ctx(sandbox)
        )
    assert model.calls == []  # refused before any call


@pytest.mark.parametrize(
    "entry, error",
    [
        ("single[prompt=greedy]", "prompt: Input should be 'livecodebench' or 'published'"),
        ("single[temperature=hot]", "temperature: Input should be a valid number"),
        ("single[temperature=true]", "temperature: Input should be a valid number"),
        ("single[temperature=-0.5]", "temperature: Input should be greater than or equal to 0"),
        ("single[temperature=9]", "temperature: Input should be less than or equal to 2"),
    ],
)
def test_bad_option_values_are_refused_like_other_row_options(entry, error):
    with pytest.raises(UsageError, match="bad options for strategy single") as e:
        parse_rows(f"{entry}@{BIG}", [], [])
    assert error in str(e.value) and "its options: " in str(e.value) and "prompt, temperature" in str(e.value)


def test_a_bad_option_value_is_one_line_on_the_command_line(tmp_path):
    entry = ["--strategies", f"single[prompt=published,temperature=hot]@{BIG}"]
    result = subprocess.run(
        [sys.executable, "-m", "memdoor", "bench", "humaneval", "--out", str(tmp_path / "out"), *entry],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("memdoor: ") and "bad options for strategy single" in lines[0]
    )
    assert not (tmp_path / "out").exists()
