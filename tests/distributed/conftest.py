"""Fixtures of the distributed tests: a Redis server of the test's own and a client of it."""

from __future__ import annotations

import pytest
import redis
from dist_helpers import RedisServer


@pytest.fixture
def server(tmp_path):
    srv = RedisServer(tmp_path).start()
    yield srv
    srv.stop()


@pytest.fixture
def r(server):
    return redis.Redis(host="127.0.0.1", port=server.port)
