"""Mixed-language teams (issue 14 item 3): on a standard-input problem the agents of one team write in
different languages, every program runs in its own language on the same inputs, and the vote groups them
by behaviour across languages; the answer is graded in the language it is written in. Scripted agents
drive the control flow; every program runs in the real sandbox (python3, node, rustc)."""

from __future__ import annotations

import pytest
from strategy_helpers import make_ctx, role_of

from memdoor.agents.team import Agent, Team, team_configs
from memdoor.bench.config import parse_rows
from memdoor.core.candidates import Candidate
from memdoor.core.errors import UsageError
from memdoor.core.problem import Problem, TestCase
from memdoor.judging.judge import Judge
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.env import RunEnv
from memdoor.run.solve import solve_problem
from memdoor.sandbox.lang.run import tool_for
from memdoor.select.vote import VoteSelector
from memdoor.strategies.hybrid import Hybrid
from memdoor.strategies.parallel import Parallel
from memdoor.strategies.shared import Shared

pytestmark = pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)

PY_GOOD = "a, b = map(int, input().split())\nprint(a + b)"
PY_OVERFIT = "a, b = map(int, input().split())\nprint(3 if a == 1 else a * b)"  # passes the examples only
JS_GOOD = (
    "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
    "console.log(a + b);"
)
JS_BAD = "console.log(0);"
RS_GOOD = """use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    println!("{}", v[0] + v[1]);
}"""
FENCE = {"python": "python", "javascript": "javascript", "rust": "rust"}


def add_stdin(hidden: bool = True) -> Problem:
    tc = lambda i, o: TestCase(kind="stdin", input=i, output=o)  # noqa: E731
    return Problem(
        id="add-stdin",
        statement="Read two integers a and b and print a + b.",
        public_tests=[tc("1 2\n", "3\n"), tc("2 2\n", "4\n")],
        hidden_tests=[tc("5 7\n", "12\n"), tc("-3 1\n", "-2\n")] if hidden else [],
    )


class ByLanguage:
    """Answers a draft (or repair) in the language the prompt asks for; records the prompts seen."""

    def __init__(self, answers: dict[str, list[str]]):
        self.answers = {k: list(v) for k, v in answers.items()}
        self.prompts: list[tuple[str, str]] = []

    def __call__(self, messages) -> str:
        user = messages[-1]["content"]
        language = next(lang for lang in ("javascript", "rust", "python") if f"```{lang}" in user)
        self.prompts.append((role_of(messages), language))
        queue = self.answers[language]
        code = queue.pop(0) if len(queue) > 1 else queue[0]
        return f"Here it is.\n```{FENCE[language]}\n{code}\n```\n"


def mixed_team(model, languages) -> Team:
    configs = team_configs([model.spec], len(languages), languages=languages)
    return Team([Agent(c, model) for c in configs])


async def test_a_mixed_team_drafts_each_in_its_language_and_groups_across_languages(sandbox):
    """Three agents, three languages, three correct programs: each prompt asks for its agent's language,
    each program runs in its own, and the vote sees one behaviour (3 of 3 agree) across languages."""
    respond = ByLanguage({"python": [PY_GOOD], "javascript": [JS_GOOD], "rust": [RS_GOOD]})
    model = ScriptedModel(respond=respond, spec="scripted:m", logprob=-0.1)
    team = mixed_team(model, ["python", "javascript", "rust"])
    sol = await Parallel(Parallel.Config()).solve(add_stdin().public_view(), team, make_ctx(sandbox))
    assert sorted(respond.prompts) == [("draft", "javascript"), ("draft", "python"), ("draft", "rust")]
    langs = {c.agent: c.language for c in sol.candidates}
    assert langs == {"agent0": None, "agent1": "javascript", "agent2": "rust"}  # None: the problem's own
    assert all(c.public is not None and c.public.passed for c in sol.candidates)
    assert sol.selection.groups == [[0, 1, 2]] and sol.selection.rule == "majority"
    assert sol.agreement() == "3 of 3 agents agree"


async def test_inputs_split_a_mixed_team_by_behaviour_and_the_agreeing_languages_win(sandbox):
    """Python overfits the examples; JavaScript and Rust are right. An agent-written input (no output)
    tells them apart: the two that agree, in two languages, win 2 of 3."""
    cands = [
        Candidate(code=PY_OVERFIT, agent="agent0", mean_logprob=-0.01),  # the most confident, and wrong
        Candidate(code=JS_GOOD, agent="agent1", mean_logprob=-0.5, language="javascript"),
        Candidate(code=RS_GOOD, agent="agent2", mean_logprob=-0.5, language="rust"),
    ]
    extra = [TestCase(kind="stdin", input="5 7\n", output=None)]
    sel = await VoteSelector().select(add_stdin().public_view(), cands, Judge(sandbox), extra_inputs=extra)
    assert sel.rule == "majority" and sorted(map(sorted, sel.groups)) == [[0], [1, 2]]
    assert sel.index in (1, 2)


async def test_the_answer_is_graded_in_its_own_language(sandbox, tmp_path):
    """Through the runner: JavaScript's answer wins the vote (Python is wrong on the examples) and is
    graded on the hidden tests by node; the record says which language the answer is in."""
    respond = ByLanguage({"python": [JS_BAD.replace("console.log", "print")], "javascript": [JS_GOOD]})
    model = ScriptedModel(respond=respond, spec="scripted:m", logprob=-0.1)
    pool = ModelPool()
    pool.add(model.spec, model)
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path)
    config = SolveConfig(
        strategy=StrategySpec.parse("parallel:3"),
        models=["scripted:m"],
        languages=["python", "javascript"],
    )
    sol = await solve_problem(add_stdin(), config, env)
    assert sol.error is None, sol.error
    assert sol.language == "javascript" and sol.code == JS_GOOD and sol.agent == "agent1"
    assert sol.passed and sol.verdict.tests_total == 4 and sol.verdict.status == "passed"
    assert sol.record().language == "javascript"
    assert sorted(lang for _, lang in respond.prompts) == ["javascript", "python", "python"]


async def test_a_repair_keeps_the_language_of_the_code_it_repairs(sandbox):
    respond = ByLanguage({"python": [PY_GOOD], "javascript": [JS_BAD, JS_GOOD]})
    model = ScriptedModel(respond=respond, spec="scripted:m", logprob=-0.1)
    team = mixed_team(model, ["python", "javascript"])
    sol = await Hybrid(Hybrid.Config(inputs=0)).solve(add_stdin().public_view(), team, make_ctx(sandbox))
    repaired = [c for c in sol.candidates if c.agent == "agent1" and c.round == 1]
    assert len(repaired) == 1 and repaired[0].language == "javascript" and repaired[0].code == JS_GOOD
    assert repaired[0].public.passed
    assert ("repair", "javascript") in respond.prompts


async def test_a_function_problem_cannot_have_a_mixed_language_team(sandbox, tmp_path):
    tc = TestCase(kind="functional", input="1\n2", output="3")
    fn = Problem(id="f", statement="add", func_name="add", public_tests=[tc], hidden_tests=[tc])
    pool = ModelPool()
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path)
    config = SolveConfig(strategy=StrategySpec.parse("parallel:2"), languages=["python", "rust"])
    with pytest.raises(UsageError, match="only standard-input problems"):
        await solve_problem(fn, config, env)


def test_languages_are_checked_and_bench_rows_name_them():
    with pytest.raises(ValueError, match="unknown language 'cobol'"):
        SolveConfig(strategy=StrategySpec.parse("parallel:2"), languages=["python", "cobol"])
    rows = parse_rows("single,parallel:3#python+javascript+rust", ["local:qwen2.5-coder-0.5b"], [])
    assert [r.name for r in rows] == ["single", "parallel:3#python+javascript+rust"]
    assert rows[1].languages == ["python", "javascript", "rust"] and rows[0].languages == []
    assert rows[1].strategy == "parallel:3"
    with pytest.raises(UsageError, match="unknown language 'go'"):
        parse_rows("parallel:2#python+go", ["local:qwen2.5-coder-0.5b"], [])


async def test_shared_rounds_show_each_peer_in_its_own_language(sandbox):
    """In a shared round a Python agent reads its JavaScript teammate's draft fenced as JavaScript (and the
    other way round), while its own instructions stay in its own language."""
    seen: list[tuple[str, str, str]] = []
    py_bad = "print(0)"

    def respond(messages) -> str:
        reader = "javascript" if "Node.js" in messages[0]["content"] else "python"
        seen.append((role_of(messages), reader, messages[-1]["content"]))
        return f"```{reader}\n{JS_BAD if reader == 'javascript' else py_bad}\n```\n"

    model = ScriptedModel(respond=respond, spec="scripted:m", logprob=-0.1)
    team = mixed_team(model, ["python", "javascript"])
    await Shared(Shared.Config(rounds=1)).solve(add_stdin().public_view(), team, make_ctx(sandbox))
    refines = {reader: text for role, reader, text in seen if role == "refine"}
    assert set(refines) == {"python", "javascript"}
    assert f"```javascript\n{JS_BAD}\n```" in refines["python"]
    assert f"```python\n{py_bad}\n```" in refines["javascript"]
    assert "```javascript\n" + py_bad not in refines["javascript"]  # the peer's fence is not translated
    assert "\x00" not in refines["python"] + refines["javascript"]
