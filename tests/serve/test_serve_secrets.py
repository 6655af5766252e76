"""A model spec whose URL holds a password: `memdoor serve` answers (200 and 502) without it, over real HTTP."""

from __future__ import annotations

import socket

import httpx
from serve_helpers import ADD_PROMPT, GOOD, WAIT, fenced, running, scripted, user

from memdoor.models.openai_model import OpenAIModel

SECRET = "s3cretpw-hush"


def post(srv, model: str) -> httpx.Response:
    body = {"model": model, "messages": user(ADD_PROMPT)}
    return httpx.post(f"{srv.base_url}/chat/completions", json=body, timeout=WAIT)


def test_answers_and_502_bodies_show_the_spec_without_its_password(sandbox):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    up = f"openai:m@http://alice:{SECRET}@127.0.0.1:9/v1"
    down = f"openai:m@http://alice:{SECRET}@127.0.0.1:{port}/v1?max_retries=0"
    with running({up: scripted(up, fenced(GOOD))}, sandbox, teams=["memdoor/single"]) as srv:
        answered = post(srv, "memdoor/single")
    with running(
        {down: OpenAIModel.from_spec(down.removeprefix("openai:"))}, sandbox, teams=["memdoor/single"]
    ) as srv:
        failed = post(srv, "memdoor/single")
    assert answered.status_code == 200 and "alice:***@127.0.0.1:9" in answered.text
    assert failed.status_code == 502 and "alice:***@127.0.0.1" in failed.text
    assert SECRET not in answered.text and SECRET not in failed.text
