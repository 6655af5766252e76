"""A request that asks for a function without naming it: the team chooses the name and the answer
says so (never a silent ``solution``). Real server, real sandbox, a scripted model."""

from __future__ import annotations

from serve_helpers import client, fenced, running, scripted, user

REQUEST = "Write a function that checks whether a string is a palindrome."
PALINDROME = "def is_palindrome(s):\n    return s == s[::-1]"


def respond_naming(name_answer: str, code: str):
    def respond(messages):
        text = messages[-1]["content"]
        if "does not say what to call it" in text:
            return name_answer
        if "write only calls of" in text:
            return '```input\n"abba"\n```\n```input\n"abc"\n```\n'
        return fenced(code)

    return respond


def test_the_team_names_the_function_and_the_answer_says_so(sandbox):
    answer_code = PALINDROME + '\n\nprint(is_palindrome("abba"))  # Output: True'
    model = scripted("scripted:s", respond=respond_naming("I would call it `is_palindrome`.", answer_code))
    with running({"scripted:s": model}, sandbox, teams=["memdoor/single"]) as srv:
        answer = client(srv).chat.completions.create(model="memdoor/single", messages=user(REQUEST))
    note = "No function name in the request; the team named it `is_palindrome`."
    assert answer.choices[0].message.content == f"{note}\n\n```python\n{PALINDROME}\n```"
    meta = answer.model_extra["memdoor"]
    assert meta["naming"] == note
    assert meta["calls"] == 3  # the name, the test inputs, the draft: all the team's, all in the usage
    assert meta["tests"]["source"] == "team" and meta["tests"]["status"] == "passed"
    drafts = [m for m in model.calls if "### Format" in m[-1]["content"]]
    assert drafts and "named `is_palindrome`" in drafts[0][-1]["content"]


def test_without_a_usable_name_the_answer_says_the_placeholder_stays(sandbox):
    code = "def solution(s):\n    return s == s[::-1]"
    model = scripted("scripted:s", respond=respond_naming("Sure! Here is how:", code))
    with running({"scripted:s": model}, sandbox, teams=["memdoor/single"]) as srv:
        answer = client(srv).chat.completions.create(model="memdoor/single", messages=user(REQUEST))
    content = answer.choices[0].message.content
    assert content.startswith("No function name in the request, and the team chose none (")
    assert "it is named `solution`." in content and content.endswith(f"```python\n{code}\n```")


def test_a_named_request_has_no_naming_step(sandbox):
    model = scripted("scripted:s", respond=respond_naming("`wrong_name`", PALINDROME))
    with running({"scripted:s": model}, sandbox, teams=["memdoor/single"]) as srv:
        answer = client(srv).chat.completions.create(
            model="memdoor/single", messages=user("Write a function is_palindrome(s) for strings.")
        )
    assert answer.choices[0].message.content == f"```python\n{PALINDROME}\n```"
    assert answer.model_extra["memdoor"]["naming"] is None
    assert not any("does not say what to call it" in m[-1]["content"] for m in model.calls)
