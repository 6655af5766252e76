"""Distributed mode: agents as worker processes sharing one Redis.

- :mod:`.jobs` — what travels on the streams (a model call, its result) and the key layout;
- :mod:`.remote` — :class:`RemoteModel`, a ``Model`` whose calls are jobs answered by workers, so
  every strategy runs unchanged in the orchestrator (``memdoor solve --redis``);
- :mod:`.config` — a worker's settings: its role and the seed options it leads with;
- :mod:`.worker` — ``memdoor worker``: one agent taking jobs for its model (other roles run alongside);
- :mod:`.seed` — the seed client protocol (``task:<id>`` in, ``memory:<id>`` out): :class:`SeedLeader`
  needs only the worker's settings, its Redis client and its instance id.
"""
