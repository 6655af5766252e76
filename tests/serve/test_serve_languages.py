"""``memdoor serve`` answers in the language the request asks for: the team writes JavaScript or Rust, the
prompt's examples run in node, and the answer is fenced in that language (a real server, scripted models,
the real sandbox)."""

from __future__ import annotations

import pytest
from serve_helpers import client, running, scripted, user

from memdoor.problems.languages import requested_language
from memdoor.sandbox.lang.run import tool_for
from memdoor.server.chat import chat_problem
from memdoor.server.schema import ChatMessage
from memdoor.strategies import messages

JS_GOOD = "function add(a, b) {\n  return a + b;\n}"
JS_BAD = "function add(a, b) {\n  return a - b;\n}"
JS_PROMPT = (
    "Write a JavaScript function `add(a, b)` that returns the sum.\n\n>>> add(1, 2)\n3\n>>> add(2, 2)\n4\n"
)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Write `add(a, b)` returning a + b.", "python"),
        ("Write a JavaScript function `add(a, b)`.", "javascript"),
        ("Solve it in JS please: read n and print n * 2.", "javascript"),
        ("Here is my code:\n```js\nconst f = 1;\n```\nfix it", "javascript"),
        ("Implement this in Rust: read two numbers and print their sum.", "rust"),
        ("A Rust function `gcd(a, b)`.", "rust"),
        ("Remove the rust from this old bike's description.", "python"),
        ("Port this JavaScript function to Rust", "rust"),  # the target language
        ("Compare JavaScript and Rust closures in Python", "python"),  # several, none the target
    ],
)
def test_the_requested_language(text, language):
    assert requested_language(text) == language


def test_a_rust_function_request_keeps_its_examples():
    text = "Write a Rust function `add(a: i64, b: i64) -> i64`.\n>>> add(1, 2)\n3"
    problem = chat_problem([ChatMessage(role="user", content=text)]).problem
    assert problem.language == "rust" and problem.func_name == "add"
    assert problem.starter_code == ""  # no Python stub in a Rust prompt
    assert "def add" not in messages.draft(problem)[1]["content"]
    assert [(t.kind, t.input, t.output) for t in problem.public_tests] == [("functional", "1\n2", "3")]


RS_GOOD = "fn add(a: i64, b: i64) -> i64 {\n    a + b\n}"
RS_BAD = "fn add(a: i64, b: i64) -> i64 {\n    a - b\n}"
RS_PROMPT = "Write a Rust function `add(a: i64, b: i64) -> i64`.\n\n>>> add(1, 2)\n3\n>>> add(2, 2)\n4\n"


@pytest.mark.parametrize(
    ("language", "good", "bad", "prompt"),
    [("javascript", JS_GOOD, JS_BAD, JS_PROMPT), ("rust", RS_GOOD, RS_BAD, RS_PROMPT)],
)
def test_a_request_gets_an_answer_in_its_language(sandbox, tmp_path, language, good, bad, prompt):
    if not tool_for(language).usable:
        pytest.skip(f"{language} cannot run here")
    models = {
        "scripted:bad": scripted("scripted:bad", f"Here.\n```{language}\n{bad}\n```\n"),
        "scripted:good": scripted("scripted:good", f"Here.\n```{language}\n{good}\n```\n"),
    }
    settings = {"models": ["scripted:bad", "scripted:good", "scripted:bad"], "teams": ["memdoor/parallel-3"]}
    with running(models, sandbox, trace_dir=tmp_path, **settings) as srv:
        answer = client(srv).chat.completions.create(model="memdoor/parallel-3", messages=user(prompt))
    assert answer.choices[0].message.content == f"```{language}\n{good}\n```"
    meta = answer.model_extra["memdoor"]
    assert meta["agent"] == "agent1"
    assert meta["tests"]["status"] == "passed" and meta["tests"]["passed"] == 2  # the examples, called
