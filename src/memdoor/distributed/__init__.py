"""Distributed mode: agents as worker processes sharing one Redis.

- :mod:`.jobs` — what travels on the streams (a model call, its result) and the key layout;
- :mod:`.remote` — :class:`RemoteModel`, a ``Model`` whose calls are jobs answered by workers, so
  every strategy runs unchanged in the orchestrator (``memdoor solve --redis``);
- :mod:`.worker` — ``memdoor worker``: one agent taking jobs for its model;
- :mod:`.seed` — the seed client protocol (``task:<id>`` in, ``memory:<id>`` out), run by workers.
"""
