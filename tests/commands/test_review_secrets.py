"""A password in a model spec's URL never reaches a review's report, its trace or its record in memory."""

from __future__ import annotations

import json
import socket

from tests.commands.test_review_cli import make_home, memdoor


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_models_password_reaches_no_report_trace_or_record(tmp_path):
    home = make_home(tmp_path)
    port = closed_port()
    spec = f"openai:m@http://alice:s3cretpw@127.0.0.1:{port}/v1"
    args = ["--model", spec, "--agents", "1", "--stages", "reading", "--format", "json"]
    r = memdoor(home, str(home / "change.diff"), *args)
    assert r.returncode in (0, 3), r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["config"]["models"] == [f"openai:m@http://alice:***@127.0.0.1:{port}/v1"]
    stored = [p.read_text(errors="replace") for p in (home / "mdhome").rglob("*") if p.is_file()]
    assert stored, "the review recorded nothing"
    for text in (r.stdout, r.stderr, *stored):
        assert "s3cretpw" not in text
