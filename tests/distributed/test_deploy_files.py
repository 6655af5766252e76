"""The compose file and the worker CLI agree: every worker gets the variables `memdoor worker` reads."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from memdoor.commands import worker as worker_cmd

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_compose_workers_are_configured_through_the_cli_environment(monkeypatch):
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert "redis" in services
    agents = {name: s for name, s in services.items() if name.startswith("agent-")}
    assert len(agents) == 5
    ids = set()
    leads = 0
    for svc in agents.values():
        env = svc["environment"]
        assert {"REDIS_URL", "AGENT_ID", "MODEL_NAME", "MEMDOOR_ROLE"} <= set(env)
        assert env["REDIS_URL"].startswith("redis://redis:")
        ids.add(env["AGENT_ID"])
        leads += env["MEMDOOR_ROLE"] in ("all", "lead")
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy"
        # The worker reads exactly these variables (no flags in the compose file).
        for name in ("REDIS_URL", "AGENT_ID", "MODEL_NAME", "MEMDOOR_ROLE"):
            monkeypatch.setenv(name, str(env[name]).replace("${MODEL_NAME:-", "").rstrip("}"))
        parser = argparse.ArgumentParser()
        worker_cmd.configure(parser)
        args = parser.parse_args([])
        config = worker_cmd.worker_config(args)
        assert config.agent_id == env["AGENT_ID"] and config.role == env["MEMDOOR_ROLE"]
        assert config.redis == env["REDIS_URL"] and config.model == "local:qwen2.5-coder-0.5b"
    assert len(ids) == 5 and leads >= 1
    assert 'ENTRYPOINT ["memdoor", "worker"]' in (DEPLOY / "Dockerfile").read_text()
