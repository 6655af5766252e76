"""Slow tier: the server with a team of the real 0.5B model (embedded engine), one short streamed request.

It checks that a real team answers through the endpoint — progress, code, usage, trace — not that the
answer is right: quality is measured by the benchmarks, never claimed by a test.
"""

from __future__ import annotations

import pytest
from serve_helpers import ADD_PROMPT, WAIT, user

from memdoor.run.tracestore import load_trace
from memdoor.server.config import ServeConfig
from memdoor.server.launch import BackgroundServer

pytestmark = pytest.mark.slow


def test_a_real_team_answers_a_streamed_request(small_model, sandbox, tmp_path):
    import openai

    config = ServeConfig(
        port=0, models=[small_model], teams=["memdoor/parallel-2"], trace_dir=tmp_path, timeout_s=900
    )
    with BackgroundServer(config, sandbox=sandbox) as srv:  # the server loads the model itself
        c = openai.OpenAI(base_url=srv.base_url, api_key="unused", max_retries=0, timeout=WAIT * 8)
        with c.chat.completions.with_streaming_response.create(
            model="memdoor/parallel-2",
            messages=user(ADD_PROMPT),
            stream=True,
            max_tokens=200,
            stream_options={"include_usage": True},
        ) as response:
            trace_id = response.headers["x-memdoor-trace-id"]
            chunks = list(response.parse())
    assert chunks[0].choices[0].delta.role == "assistant"
    progress = "".join(
        ch.choices[0].delta.model_extra.get("reasoning_content") or "" for ch in chunks if ch.choices
    )
    assert "agent0 draft" in progress and "agent1 draft" in progress
    content = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert content.startswith("```python\n") and content.endswith("\n```") and "def add" in content
    usage = chunks[-1].usage
    record = load_trace(tmp_path, trace_id)
    ledger = record.final["ledger"]
    assert ledger["calls"] == 2 and ledger["failed_calls"] == 0
    assert usage.prompt_tokens == ledger["prompt_tokens"] > 0
    assert usage.completion_tokens == ledger["completion_tokens"] > 0
    meta = next(ch for ch in chunks if ch.choices and ch.choices[0].finish_reason).model_extra["memdoor"]
    assert meta["tests"]["source"] == "prompt" and meta["tests"]["total"] == 2
