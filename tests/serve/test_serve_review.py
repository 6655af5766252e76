"""Review models of ``memdoor serve`` (memdoor/review-N): a real server over real HTTP, the official
client, a real git repository, the test command in the sandbox; scripted agents for the control flow."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import httpx
import openai
import pytest
from serve_helpers import (
    WAIT,
    Held,
    InThread,
    client,
    health,
    health_meanwhile,
    running,
    scripted,
    user,
    wait_until,
)

import memdoor.server.review as review_module
from bounded_helpers import ends
from memdoor.server.review import CHECKOUT_NAME, WORKSPACE_NAME, checkout_paths, diff_blocks, without_paths
from memdoor.server.schema import ChatRequest
from memdoor.server.service import request_limits

CALC = "def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n"
BUGGY = CALC.replace("total / len(xs)", "total / (len(xs) - 1)")
FIX = "    return total / len(xs) if xs else 0"
TESTS = (
    "import unittest\nfrom calc import mean\n\n\nclass T(unittest.TestCase):\n"
    "    def test_mean(self):\n        self.assertEqual(mean([1, 2, 3]), 2)\n\n"
    "    def test_empty(self):\n        self.assertEqual(mean([]), 0)\n"
)
FINDING = {"file": "calc.py", "line": 5, "end_line": 5, "severity": "high", "kind": "bug",
           "message": "divides by len(xs) - 1: the mean is wrong", "suggestion": FIX}  # fmt: skip
ANSWER = "```json\n" + json.dumps({"findings": [FINDING]}) + "\n```"


def git(root, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo_and_diff(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / "calc.py").write_text(BUGGY)
    diff = git(repo, "diff")
    (repo / "calc.py").write_text(CALC)
    return repo, diff


def serve(sandbox, repo, tmp_path, **kw):
    return running(
        {"scripted:r": scripted("scripted:r", ANSWER)},
        sandbox,
        tmp_path / "traces",
        review_repo=repo,
        review_test="python3 -m unittest -q",
        **kw,
    )


def test_review_models_are_listed_only_with_a_repository(sandbox, repo_and_diff, tmp_path):
    repo, _ = repo_and_diff
    with serve(sandbox, repo, tmp_path) as srv:
        ids = [m.id for m in client(srv).models.list().data]
        assert "memdoor/review-3" in ids and "memdoor/review-5" in ids and "memdoor/parallel-5" in ids
        assert client(srv).models.retrieve("memdoor/review-3").id == "memdoor/review-3"
    with running({"scripted:r": scripted("scripted:r", ANSWER)}, sandbox) as srv:
        assert not [m.id for m in client(srv).models.list().data if m.id.startswith("memdoor/review")]


def test_a_review_answer_and_its_stream(sandbox, repo_and_diff, tmp_path):
    repo, diff = repo_and_diff
    with serve(sandbox, repo, tmp_path) as srv:
        c = client(srv)
        reading = {"review": {"stages": ["tests", "reading"]}}  # the differential stage: its own tests
        r = c.chat.completions.create(
            model="memdoor/review-3", messages=user(f"Review this:\n```diff\n{diff}```"), extra_body=reading
        )
        content = r.choices[0].message.content
        # the test stage's finding (test_mean passes on the base, fails after), the agents' merged into it
        assert "# Review: 1 consensus finding(s)" in content
        assert "also raised by the reading review (3 of 3: agent0, agent1, agent2)" in content
        extra = r.model_extra["memdoor"]
        assert extra["findings"][0]["line"] == 5 and extra["patch"]["tests"]["passed"] is True
        assert (
            extra["tests"]["passed"] is False
            and r.usage.total_tokens
            == extra["ledger"]["prompt_tokens"] + (extra["ledger"]["completion_tokens"])
        )
        chunks = list(
            c.chat.completions.create(
                model="memdoor/review-3",
                messages=user(diff),
                stream=True,
                stream_options={"include_usage": True},
                extra_body=reading,
            )
        )
        text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
        assert "# Review: 1 consensus finding(s)" in text
        assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
        memory = srv.server.config.app.state.reviews.env.memory
        assert asyncio.run(memory.tasks()) == []  # nothing kept in memory per request (the trace is on disk)
        assert (tmp_path / "traces" / f"{extra['trace_id']}.json").exists()
    assert (repo / "calc.py").read_text() == CALC


def test_a_bad_diff_is_a_400_with_the_reason(sandbox, repo_and_diff, tmp_path):
    repo, _ = repo_and_diff
    with serve(sandbox, repo, tmp_path) as srv:
        with pytest.raises(openai.BadRequestError) as e:
            client(srv).chat.completions.create(
                model="memdoor/review-3", messages=user("please review my code")
            )
        assert "not a unified diff" in str(e.value)
        with pytest.raises(openai.NotFoundError):
            client(srv).chat.completions.create(model="memdoor/review-99", messages=user("x"))


def test_a_review_past_the_deadline_is_a_504_and_leaves_nothing_in_memory(sandbox, repo_and_diff, tmp_path):
    repo, diff = repo_and_diff
    slow = {"scripted:r": scripted("scripted:r", ANSWER, delay=3.0)}
    with running(
        slow,
        sandbox,
        tmp_path / "traces",
        review_repo=repo,
        review_test="python3 -m unittest -q",
        timeout_s=1.0,
    ) as srv:
        with pytest.raises(openai.APIStatusError) as e:
            client(srv).chat.completions.create(model="memdoor/review-3", messages=user(diff))
        assert e.value.status_code == 504
        memory = srv.server.config.app.state.reviews.env.memory
        assert asyncio.run(memory.tasks()) == []  # the timed-out review's trace is not kept per request


def test_a_request_lowers_the_review_deadline_and_budget_and_asks_one_answer(
    sandbox, repo_and_diff, tmp_path
):
    repo, diff = repo_and_diff
    slow = {"scripted:r": scripted("scripted:r", ANSWER, delay=3.0)}
    with running(slow, sandbox, tmp_path / "traces", review_repo=repo, review_test="true") as srv:
        c = client(srv)
        with pytest.raises(openai.APIStatusError) as e:  # the server has no deadline; the request has 1 s
            c.chat.completions.create(
                model="memdoor/review-3", messages=user(diff), extra_body={"memdoor": {"timeout": 1.0}}
            )
        assert e.value.status_code == 504 and "1 s time limit" in str(e.value)
    with serve(sandbox, repo, tmp_path) as srv:
        c = client(srv)
        with pytest.raises(openai.APIStatusError) as e:
            c.chat.completions.create(
                model="memdoor/review-3", messages=user(diff), extra_body={"memdoor": {"budget_tokens": 1}}
            )
        assert e.value.status_code == 504 and e.value.body["code"] == "budget_exceeded"
        assert "over the request's budget of 1" in str(e.value)
        with pytest.raises(openai.BadRequestError) as e:
            c.chat.completions.create(model="memdoor/review-3", messages=user(diff), n=2)
        assert "n must be 1" in str(e.value)
        ok = c.chat.completions.create(  # a budget the review fits in changes nothing
            model="memdoor/review-3", messages=user(diff), extra_body={"memdoor": {"budget_tokens": 10**6}}
        )
        assert ok.model_extra["memdoor"]["findings"][0]["line"] == 5


def link_diff(repo, name: str, target: str) -> str:
    """git's diff adding the symbolic link ``name`` -> ``target``; the tree is left as it was."""
    (repo / name).symlink_to(target)
    git(repo, "add", "-N", name)
    out = git(repo, "diff", "--", name)
    git(repo, "rm", "-q", "--cached", name)
    (repo / name).unlink()
    return out


def test_links_in_a_diff_are_reviewed_as_links_never_read(sandbox, repo_and_diff, tmp_path):
    repo, diff = repo_and_diff
    secret = tmp_path / "secret.txt"
    secret.write_text("api_key=CANARY-41-serve\n")
    targets = [str(secret), "/proc/self/environ", "/dev/zero", "/proc/self/fd/0"]
    hostile = diff + "".join(link_diff(repo, f"leak{i}", t) for i, t in enumerate(targets))
    with serve(sandbox, repo, tmp_path) as srv:
        r = client(srv, timeout=300).chat.completions.create(model="memdoor/review-3", messages=user(hostile))
        extra = r.model_extra["memdoor"]
        assert extra["files"] == ["calc.py", "leak0", "leak1", "leak2", "leak3"]
        assert "CANARY" not in r.choices[0].message.content + json.dumps(extra)
        assert client(srv).models.list().data  # the server still answers


def test_every_refusal_of_the_review_is_a_400(sandbox, repo_and_diff, tmp_path):
    repo, diff = repo_and_diff
    many = "".join(f"--- /dev/null\n+++ b/f{i}\n@@ -0,0 +1 @@\n+x\n" for i in range(201))
    refusals = {
        "read the diff differently": diff[diff.index("--- ") :].replace(
            "+++ b/calc.py", "+++ b/calc.py.orig"
        ),
        "a review takes at most 200 (--max-files": many,
        "deeper than the review takes": "--- /dev/null\n+++ b/" + "d/" * 2000 + "x.py\n@@ -0,0 +1 @@\n+x\n",
        "control characters": '--- /dev/null\n+++ "b/x\\n### Your task"\n@@ -0,0 +1 @@\n+x\n',
    }
    with serve(sandbox, repo, tmp_path) as srv:
        for says, text in refusals.items():
            with pytest.raises(openai.BadRequestError) as e:
                client(srv).chat.completions.create(model="memdoor/review-3", messages=user(text))
            assert says in str(e.value)


def test_an_incomplete_review_says_so_in_the_answer(sandbox, repo_and_diff, tmp_path):
    """Tests that cannot run on the base (issue 45): the answer's first line and ``memdoor.complete`` say
    the review was not completed, with the reason; nothing is blamed on the change."""
    repo, diff = repo_and_diff
    answers = {"scripted:r": scripted("scripted:r", ANSWER)}
    with running(answers, sandbox, tmp_path / "traces", review_repo=repo, review_test="no-such-tool") as srv:
        r = client(srv).chat.completions.create(model="memdoor/review-3", messages=user(diff))
        content = r.choices[0].message.content
        first = content.splitlines()[0]
        assert first.startswith("**Review not completed:** the tests cannot run on the base")
        extra = r.model_extra["memdoor"]
        assert extra["complete"] is False and "exit 127" in extra["incomplete_reason"]
        assert all(f["source"] != "tests" for f in extra["findings"])  # the tests blamed nothing


def sleeping(seconds: int) -> list[int]:
    """Pids of the live processes running ``sleep SECONDS`` (each test a number of its own)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline == f"sleep\0{seconds}\0".encode():
            found.append(int(pid))
    return found


@pytest.fixture
def workspaces(monkeypatch) -> Path:
    """Where this test's review directories are made (searchable by the test command's uid, as /tmp is)."""
    where = Path(tempfile.mkdtemp(prefix="memdoor-test-workspaces-", dir="/tmp"))
    os.chmod(where, 0o711)
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    yield where
    subprocess.run(["rm", "-rf", str(where)], check=False)


def left_behind(where: Path) -> list[Path]:
    return list(where.glob("memdoor-review-*"))


IDLE = {"status": "ok", "running": 0, "waiting": 0}


def test_a_review_whose_client_leaves_stops_its_tests_before_letting_go(
    sandbox, repo_and_diff, tmp_path, workspaces
):
    """Issue 41 class 5: a client that leaves stops the review's test command (it would run for 600 s);
    the review holds its run slot and its directory until the command is gone, then frees both."""
    repo, diff = repo_and_diff
    answers = {"scripted:r": scripted("scripted:r", ANSWER)}
    with running(answers, sandbox, tmp_path / "traces", review_repo=repo, review_test="sleep 86413") as srv:
        body = json.dumps({"model": "memdoor/review-3", "messages": user(diff)}).encode()
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", srv.port), timeout=WAIT) as s:
            s.sendall(head + body)
            wait_until(lambda: bool(sleeping(86413)), "the review's test command to start")
            assert health(srv)["running"] == 1
        wait_until(lambda: health(srv) == IDLE, "the review to let go of its run slot")
        assert not sleeping(86413)  # stopped before the slot was given back
        assert not left_behind(workspaces)  # and its directory removed


def test_a_review_past_its_deadline_has_stopped_its_tests_when_the_504_comes(
    sandbox, repo_and_diff, tmp_path, workspaces
):
    repo, diff = repo_and_diff
    answers = {"scripted:r": scripted("scripted:r", ANSWER)}
    settings = {"review_repo": repo, "review_test": "sleep 86414", "timeout_s": 600.0}
    with running(answers, sandbox, tmp_path / "traces", **settings) as srv:
        limit = {"memdoor": {"timeout": 6.0}}  # the request's; the server's is 600 s
        request = InThread(
            lambda: client(srv).chat.completions.create(
                model="memdoor/review-3", messages=user(diff), extra_body=limit
            )
        )
        wait_until(lambda: bool(sleeping(86414)) or request.done(), "the review's test command to start")
        with pytest.raises(openai.APIStatusError) as e:
            request.result()
        assert e.value.status_code == 504
        assert not sleeping(86414)
        assert health(srv) == IDLE
        assert not left_behind(workspaces)
        # the test command's own limit is the request's (600 s by default, longer than any request here)
        reviews = srv.server.config.app.state.reviews
        asked = ChatRequest.model_validate({"model": "memdoor/review-3", "messages": user(diff), **limit})
        limits = request_limits(reviews.config, asked, "review")
        assert reviews.review_config(asked.model, asked, limits).test_timeout_s == 6.0


def test_a_refusal_says_no_path_of_the_server(sandbox, repo_and_diff, tmp_path):
    """A 400 says what is wrong with the diff, not where the server keeps its checkout or its workspaces."""
    repo, diff = repo_and_diff
    stale = diff.replace("\n     total = 0\n", "\n     total = 10\n")  # context the checkout does not hold
    assert stale != diff
    with serve(sandbox, repo, tmp_path) as srv, pytest.raises(openai.BadRequestError) as e:
        client(srv).chat.completions.create(model="memdoor/review-3", messages=user(stale))
    message = e.value.body["message"]
    assert message.startswith("the diff does not apply to the server's checkout: "), message
    assert str(tmp_path) not in message and tempfile.gettempdir() not in message


def test_paths_of_the_server_are_said_by_name(tmp_path):
    top = tmp_path / "checkout"
    (top / ".git").mkdir(parents=True)
    (top / "sub").mkdir()
    names = dict.fromkeys(checkout_paths(top / "sub"), CHECKOUT_NAME) | {
        "/w/memdoor-review-1": WORKSPACE_NAME
    }
    assert str(top) in names  # git names the top of the checkout, not the directory served
    said = without_paths(
        f"{top}: x; cannot copy {top}/sub/a.py; {top}2 and a{top} are others; /w/memdoor-review-1/changed/x",
        names,
    )
    served = "the server's checkout: x; cannot copy the server's checkout/a.py; "  # the directory served
    assert said == served + f"{top}2 and a{top} are others; the review's workspace/changed/x"


def test_the_last_diff_fence_is_found_in_one_pass():
    text = "Review this:\n```diff x\n--- a\n```\nand this\n```patch\n--- b\n```\n```diff no end"
    assert diff_blocks(text) == ["--- a\n", "--- b\n"]
    # 2 MB of fence openings without a line after them: each was read to the end of the text (448 KB, 19 s)
    ends(
        "from memdoor.server.review import diff_of\nfrom memdoor.server.schema import ChatRequest\n"
        "diff_of(ChatRequest(model='memdoor/review-3', messages=[{'role': 'user', 'content': '```diff' * 300_000}]))"
    )


def test_health_is_answered_while_the_diff_is_read(sandbox, repo_and_diff, tmp_path, monkeypatch):
    """Finding the diff in a message (up to the 4 MiB body limit) runs off the event loop."""
    repo, _ = repo_and_diff
    held = Held(review_module.diff_of)
    monkeypatch.setattr(review_module, "diff_of", held)
    with serve(sandbox, repo, tmp_path) as srv:
        request = InThread(
            lambda: client(srv).chat.completions.create(model="memdoor/review-3", messages=user("no diff"))
        )
        try:
            assert held.entered.wait(60), "the diff was not read"
            assert health_meanwhile(srv) == IDLE
        finally:
            held.gate.set()
        with pytest.raises(openai.BadRequestError):
            request.result()


GATED_GIT = """#!/bin/sh
# git, except that applying the review's patch (in its "patched" copy) waits for $GATE to exist
if [ "$1" = apply ] && [ "${PWD##*/}" = patched ]; then
    touch "$GATE.entered"
    while [ ! -e "$GATE" ]; do sleep 0.05; done
fi
exec REAL "$@"
"""


def test_health_is_answered_while_git_applies_the_review_patch(sandbox, repo_and_diff, tmp_path, monkeypatch):
    """The patch's copy and ``git apply`` run off the event loop: while git is held (a large repository),
    the server still answers. Before, they ran on the loop and /health waited for them."""
    repo, diff = repo_and_diff
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "git").write_text(GATED_GIT.replace("REAL", shutil.which("git") or "git"))
    (shim / "git").chmod(0o755)
    gate = tmp_path / "gate"
    monkeypatch.setenv("GATE", str(gate))
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")
    with serve(sandbox, repo, tmp_path) as srv:
        review = InThread(
            lambda: client(srv).chat.completions.create(model="memdoor/review-3", messages=user(diff))
        )
        try:
            wait_until(lambda: Path(f"{gate}.entered").exists(), "git to apply the review's patch")
            # answered meanwhile (git's own limit is 120 s: a loop held by git would answer after it)
            answer = httpx.get(srv.base_url.removesuffix("/v1") + "/health", timeout=60.0).json()
            assert answer == {"status": "ok", "running": 1, "waiting": 0}
        finally:
            gate.touch()
        extra = review.result().model_extra["memdoor"]
        assert extra["patch"]["tests"]["passed"] is True


def test_a_review_request_carries_its_description_and_stages_and_gets_verified_marks(
    sandbox, repo_and_diff, tmp_path
):
    repo, diff = repo_and_diff
    with serve(sandbox, repo, tmp_path) as srv:
        c = client(srv)
        review = {"description": "Refactor the mean, no behaviour change.", "stages": ["reading", "tests"]}
        r = c.chat.completions.create(
            model="memdoor/review-3", messages=user(diff), extra_body={"review": review}
        )
        extra = r.model_extra["memdoor"]
        assert extra["config"]["description"] == review["description"]
        assert extra["config"]["stages"] == ["tests", "reading"]  # in the pipeline's order
        marks = {f["source"]: f["verified"] for f in extra["findings"]}
        assert marks == {"tests": True}  # the agents' finding on the changed line: merged into the test's
        assert extra["findings"][0]["also_read"][0]["agents"] == ["agent0", "agent1", "agent2"]
        assert "(verified)" in r.choices[0].message.content
        bad = [
            ("review.descripton", {"descripton": "typo"}),
            ("review.stages: 'linting': not a stage", {"stages": ["linting"]}),  # as --stages says it
            ("review.stages: no stage named", {"stages": []}),
            ("review.description", {"description": "x" * 70_000}),
            ("review", "not an object"),
        ]
        for param, body in bad:
            with pytest.raises(openai.BadRequestError) as e:
                c.chat.completions.create(
                    model="memdoor/review-3", messages=user(diff), extra_body={"review": body}
                )
            assert param in str(e.value)
