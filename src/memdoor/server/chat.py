"""A conversation's coding request as a :class:`Problem` a team can solve.

- The statement is the last user message. Earlier turns, if any, come first as context (so "now
  make it faster" keeps the code it refers to). The client's system prompt is not used: each agent
  has its own role prompt.
- The function to write and the examples (tests) are read from the user messages, the last one
  first (see :mod:`memdoor.problems.prompt_examples`). A request that speaks of a function but names none
  gets the placeholder name ``solution`` (``found_by="default"``): the team then chooses a descriptive
  name before it starts, and the answer says so (``SolveConfig.name_function``,
  :mod:`memdoor.strategies.naming`). A request that names none and shows stdin samples (or speaks of
  no function) asks for a program reading standard input.
- When no example is found, the team writes its own test inputs later (:mod:`memdoor.server.service`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Literal

from memdoor.core.problem import Problem, TestCase
from memdoor.problems.languages import requested_language
from memdoor.problems.prompt_examples import (
    DEFAULT_FUNCTION,
    Target,
    find_target,
    functional_examples,
    stdin_examples,
    wants_function,
)
from memdoor.server.errors import InvalidRequest
from memdoor.server.schema import ChatMessage

MAX_TESTS = 20
"""Examples kept from a request (the first ones)."""

TestsSource = Literal["prompt", "team", "none"]


@dataclass(frozen=True)
class ChatProblem:
    """The problem a conversation asks to solve, and where its public tests came from."""

    problem: Problem
    target: Target
    tests_source: TestsSource


def request_text(messages: list[ChatMessage]) -> tuple[str, list[str]]:
    """(the statement the team reads, the user texts to look for examples in, last first)."""
    turns = [(m.role, m.text.strip()) for m in messages if m.role in ("user", "assistant")]
    last = max((i for i, (role, text) in enumerate(turns) if role == "user" and text), default=None)
    if last is None:
        raise InvalidRequest("the conversation has no user message with text", param="messages")
    users = [text for role, text in reversed(turns[: last + 1]) if role == "user" and text]
    earlier = [f"{role.capitalize()}: {text}" for role, text in turns[:last] if text]
    statement = turns[last][1]
    if earlier:
        statement = "Earlier in the conversation:\n\n" + "\n\n".join(earlier) + "\n\nRequest:\n\n" + statement
    return statement, users


def _target(texts: list[str]) -> tuple[Target, str]:
    """The first text (last message first) that names a function, and that text."""
    for text in texts:
        target = find_target(text)
        if target.func_name:
            return target, text
    return Target(None), texts[0]


def _tests(target: Target, texts: list[str]) -> list[TestCase]:
    for text in texts:
        found = functional_examples(text, target) if target.func_name else stdin_examples(text)
        if found:
            return found[:MAX_TESTS]
    return []


def chat_problem(messages: list[ChatMessage], *, problem_id: str | None = None) -> ChatProblem:
    """The problem of a conversation (InvalidRequest when it holds no user text)."""
    statement, users = request_text(messages)
    target, _ = _target(users)
    tests = _tests(target, users)
    if target.func_name is None and not tests and any(wants_function(t) for t in users[:1]):
        target = Target(DEFAULT_FUNCTION, found_by="default")
    language = requested_language(users[0])  # "in JavaScript", "a Rust function": the answer's language
    return ChatProblem(
        problem=Problem(
            id=problem_id or f"chat-{uuid.uuid4().hex[:12]}",
            title="chat request",
            statement=statement,
            starter_code=target.starter if language == "python" else "",  # the reader's stubs are Python
            func_name=target.func_name,
            public_tests=tests,
            prelude="livecodebench",
            platform="chat",
            language=language,
            source="memdoor serve",
        ),
        target=target,
        tests_source="prompt" if tests else "none",
    )
