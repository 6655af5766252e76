"""One embedded-model engine as a standalone loopback server, for several workers on one machine.

Each ``local:`` worker would load its own copy of the weights; instead, start one engine and point the
workers at it through the ``openai`` backend (the engine batches their requests)::

    python -m memdoor.distributed.engine_server --model qwen2.5-coder-0.5b --slots 4
    # prints: openai:qwen2.5-coder-0.5b@http://127.0.0.1:PORT/v1?request_timeout_s=1800
    memdoor worker --agent-id a1 --model 'openai:qwen2.5-coder-0.5b@http://127.0.0.1:PORT/v1?request_timeout_s=1800'

The first line on stdout is the model spec workers should use; the server runs until SIGTERM/SIGINT.
It listens on 127.0.0.1 only (to serve other machines, run vLLM/llama.cpp's own server instead).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from memdoor.core.errors import MemdoorError
    from memdoor.models.engine import Engine, EngineConfig, available_cores
    from memdoor.models.local import LocalModel

    p = argparse.ArgumentParser(
        prog="python -m memdoor.distributed.engine_server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default="qwen2.5-coder-0.5b", help="catalog name or .gguf path")
    p.add_argument("--slots", type=int, default=4, help="sequences decoded together (default 4)")
    p.add_argument("--ctx", type=int, default=4096, help="context tokens per slot (default 4096)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    args = p.parse_args(argv)
    try:
        path = LocalModel(args.model).model_path()  # assembled and verified on first use
        threads = args.threads or available_cores()  # one engine serves every client: all cores
        engine = Engine(path, EngineConfig(slots=args.slots, ctx=args.ctx, threads=threads))
        base_url = engine.start()
    except MemdoorError as e:
        print(f"memdoor: {e}", file=sys.stderr)
        return e.exit_code
    name = args.model if "/" not in args.model else "model"
    # CPU generation is slow, and a request may queue behind others: allow it as long as the engine does.
    print(f"openai:{name}@{base_url}/v1?request_timeout_s={engine.config.timeout:g}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    engine.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
