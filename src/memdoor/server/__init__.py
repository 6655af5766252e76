"""A team as a model: ``memdoor serve``, an OpenAI-compatible chat endpoint backed by Memdoor teams.

- :mod:`.teams` — the model ids clients see (``memdoor/parallel-5``) and the strategies they name;
- :mod:`.config` — :class:`~.config.ServeConfig`, every setting of a server;
- :mod:`.schema` — the OpenAI request and response shapes;
- :mod:`.errors` — HTTP errors as types, rendered in OpenAI's error shape;
- :mod:`.examples` and :mod:`.chat` — a conversation's coding request as a :class:`~memdoor.core.problem.Problem`
  (tests taken from the examples it shows);
- :mod:`.admission` — the run slots and the waiting queue (429 when full);
- :mod:`.service` — one request's team run (deadline, token budget, events, usage);
- :mod:`.stream` — server-sent events in OpenAI's chunk format;
- :mod:`.app` — the FastAPI application; :mod:`.launch` — binding it (loopback unless a token is set).
- :mod:`.connections`, :mod:`.guarded`, :mod:`.logsummary` — connection timeouts and cap, the uvicorn server
  that fits them to the open-file limit, repeated log lines summarized.

Nothing here is imported by ``import memdoor``; FastAPI and uvicorn are the ``serve`` extra.
"""
