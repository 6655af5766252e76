"""The embedded inference engine: llama.cpp's server running inside this process (PyPI ``xllamacpp``).

One :class:`Engine` holds one loaded GGUF model and serves OpenAI-style chat completions on a
loopback port. It keeps ``slots`` sequences in flight and batches them (continuous batching). The
server applies the model's own chat template (from the GGUF metadata).

A :class:`~memdoor.models.local.LocalModel` runs ``replicas`` engines of one model side by side, each
decoding on its own ``threads`` (the weights are memory-mapped, so the copies share one set of pages).
The defaults come from ``benchmarks/roofline.py`` and ``benchmarks/engine_settings.py`` on 2-core
machines (docs/results-log.md, "Closer to the machine's limit"): there decoding is bound by neither memory
bandwidth nor compute but by per-step costs (thread barriers, small-batch kernels), so one
single-threaded engine per core decoding one sequence at a time gives more tokens a second than one
engine batching five sequences on two threads. Prompt-lookup speculative decoding is available
(``speculative``) but off: it changed some greedy answers (benchmarks/speculative_check.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memdoor.core.errors import ModelUnavailable, WeightsError


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class EngineConfig(BaseModel):
    """How the embedded engine runs. Every field can be set in a spec: ``local:NAME?slots=8&ctx=8192``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    slots: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Sequences each engine decodes together (llama.cpp n_parallel). More concurrent requests"
        " wait in a queue.",
    )
    replicas: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="Engines of the model run side by side (requests go to the least busy); None: one per"
        " ``threads`` of the cores this process may use.",
    )
    ctx: int = Field(
        default=4096,
        ge=256,
        description="Context tokens per slot: prompt plus generated tokens must fit (a prompt plus 1024 new tokens).",
    )
    threads: int = Field(default=1, ge=1, description="CPU threads each engine decodes with.")
    batch_threads: int | None = Field(
        default=None,
        ge=1,
        description="CPU threads for prompt processing (batched, so more threads pay); None: the cores this"
        " process may use.",
    )
    batch: int = Field(default=2048, ge=32, description="Logical batch size for prompt processing (n_batch).")
    ubatch: int = Field(default=512, ge=32, description="Physical micro-batch size (n_ubatch).")
    flash_attn: Literal["auto", "on", "off"] = Field(default="auto", description="Flash attention.")
    timeout: float = Field(
        default=1800.0,
        gt=0,
        description="Seconds one request may take, queueing included, before it fails with ModelTimeout.",
    )
    speculative: Literal["none", "ngram-simple", "ngram-mod"] = Field(
        default="none",
        description="Speculative decoding without a draft model: tokens proposed by matching the context's"
        " own n-grams (prompt lookup: answers repeat the signature, docstring and code of their prompt),"
        " verified by the model in one batch. Off by default: measured here it changed 2 of 10 greedy"
        " answers (a batched verification step's logits differ from one-token steps in the last bits) and 8"
        " of 10 seeded samples, for +5% greedy tokens/s (benchmarks/speculative_check.py, docs/results-log.md);"
        " a run that must reproduce stored draws keeps it off.",
    )
    verbose: bool = Field(default=False, description="Let llama.cpp log to stderr.")
    wait_policy: Literal["passive", "default"] = Field(
        default="passive",
        description=(
            "How idle engine threads wait (OpenMP OMP_WAIT_POLICY). 'passive' sleeps at once; 'default' keeps"
            " the OpenMP runtime's own (spin, then sleep): on cores shared with the sandbox or other engines,"
            " spinning made generation collapse (measured 5-10x slower). Takes effect at the first engine"
            " start in a process, and only when OMP_WAIT_POLICY is not already set."
        ),
    )

    def n_threads(self) -> int:
        return self.threads

    def n_batch_threads(self) -> int:
        return self.batch_threads or available_cores()

    def n_replicas(self) -> int:
        return self.replicas or max(1, available_cores() // self.threads)

    def http_threads(self) -> int:
        """Server threads: enough that every in-flight and keep-alive connection has one."""
        return 2 * self.slots + 4

    def max_connections(self) -> int:
        """Client connections to open at most (fewer than the server's threads, so none waits on idle ones)."""
        return 2 * self.slots


def _set_wait_policy(policy: str) -> None:
    """Set OMP_WAIT_POLICY before llama.cpp's OpenMP runtime loads (it reads it once, at load).

    A value the user exported wins; after the engine library is loaded this changes nothing.
    """
    if policy != "passive" or "xllamacpp" in sys.modules or "OMP_WAIT_POLICY" in os.environ:
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


def _params(model_path: Path, config: EngineConfig, api_key: str | None) -> Any:
    import xllamacpp as xlc

    p = xlc.CommonParams()
    p.model.path = str(model_path)
    p.n_parallel = config.slots
    p.n_ctx = config.ctx * config.slots
    p.kv_unified = False  # each slot owns ctx tokens: one long prompt cannot starve the others
    p.cont_batching = True
    p.n_batch = config.batch
    p.n_ubatch = min(config.ubatch, config.batch)
    p.cpuparams.n_threads = config.n_threads()
    p.cpuparams_batch.n_threads = config.n_batch_threads()
    p.flash_attn_type = {
        "auto": xlc.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_AUTO,
        "on": xlc.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED,
        "off": xlc.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED,
    }[config.flash_attn]
    if config.speculative != "none":
        kind = {
            "ngram-simple": xlc.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE,
            "ngram-mod": xlc.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_MOD,
        }[config.speculative]
        p.speculative.types = [kind]
    p.hostnames = ["127.0.0.1"]
    p.port = 0  # any free loopback port
    p.n_threads_http = config.http_threads()
    p.endpoint_metrics = True  # /metrics: token counters (Prometheus text)
    p.endpoint_slots = True
    p.ctx_shift = False  # never silently drop the start of a prompt
    p.verbosity = 3 if config.verbose else -1  # 3: llama.cpp's info level
    if api_key:
        p.api_keys = [api_key]
    return p


class Engine:
    """One loaded model served on loopback. ``start()`` loads it (seconds), ``stop()`` frees it.

    Not thread-safe to start/stop concurrently; :class:`memdoor.models.local.LocalModel` serializes that.
    Requests may be sent concurrently from any number of clients once started. With ``api_key`` the
    engine answers only requests bearing it (``/health`` stays public): other local users and
    browser pages cannot use it.
    """

    def __init__(self, model_path: Path, config: EngineConfig | None = None, *, api_key: str | None = None):
        self.model_path = Path(model_path)
        self.config = config or EngineConfig()
        self.api_key = api_key
        self._server: Any = None
        self.base_url: str | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> str:
        """Load the model and start serving; returns the base URL (``http://127.0.0.1:PORT``)."""
        if self._server is not None:
            return self.base_url or ""
        if not self.model_path.is_file():
            raise WeightsError(f"model file not found: {self.model_path}")
        _set_wait_policy(self.config.wait_policy)
        try:
            import xllamacpp as xlc
        except ImportError:
            raise WeightsError(
                "the embedded engine is not installed: pip install 'memdoor[local]' (it needs xllamacpp)"
            ) from None
        try:
            server = xlc.Server(_params(self.model_path, self.config, self.api_key))
        except (RuntimeError, ValueError) as e:
            raise ModelUnavailable(f"the embedded engine could not load {self.model_path}: {e}") from None
        self._server = server
        self.base_url = str(server.listening_address).rstrip("/")
        return self.base_url

    def headers(self) -> dict[str, str]:
        """HTTP headers a client needs (the bearer key, when the engine has one)."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def stop(self) -> None:
        """Stop serving and free the model (the server shuts down when its last reference goes)."""
        server, self._server, self.base_url = self._server, None, None
        del server
