"""optillm beside Memdoor (issue 46, item 6): its inference approaches as ``memdoor bench`` rows, in front of the
same embedded model, on the same problems.

optillm (PyPI ``optillm``, pinned to :data:`OPTILLM_VERSION`) is an OpenAI-compatible proxy that runs an
inference approach chosen by a prefix of the model name (``bon-MODEL``: best of n; ``moa-MODEL``: mixture
of agents; ...). Here it is put in front of Memdoor's own engine (llama.cpp's server through ``xllamacpp``,
:class:`memdoor.models.engine.Engine`) serving the catalog's GGUF file that ``memdoor models`` assembled,
with a metering relay on both sides of it (benchmarks/optillm_meter.py), so that a row's compute is counted
from the tokens the model server handled, not from the proxy's own usage (which leaves out prompts and
some of its internal calls). Each approach is a row ``single@openai:APPROACH-MODEL@URL``: Memdoor's
``single`` prompt, one call, and optillm does the rest.

  .venv/bin/python benchmarks/optillm_rows.py install                 # /opt/optillm-venv, pinned, offline-capable
  .venv/bin/python benchmarks/optillm_rows.py rows --model qwen2.5-coder-1.5b
  .venv/bin/python benchmarks/optillm_rows.py rows --model qwen2.5-coder-1.5b \\
      --beside benchmarks/results/humaneval-matched   # its rows replayed, the optillm rows beside them
  .venv/bin/python benchmarks/optillm_rows.py serve --model qwen2.5-coder-1.5b &   # until SIGINT/SIGTERM
  .venv/bin/python benchmarks/optillm_rows.py smoke                   # one short request per approach
  .venv/bin/python benchmarks/optillm_rows.py tally ~/.cache/memdoor/optillm/meter.jsonl

``rows`` and ``serve`` print the rows and the ``memdoor bench`` command to run while ``serve`` is up; the
rows name the relay's port, so a resumed run must be served on the same ``--port``. docs/baselines.md,
"optillm", says what was measured and what a run needs.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optillm_approaches import APPROACHES, optillm_spec, parse_approaches, proxy_url

from memdoor.bench.config import split_entries
from memdoor.core.errors import MemdoorError, UsageError
from memdoor.models.catalog import CATALOG, get_entry

OPTILLM_VERSION = "0.4.0"
PACKAGES = (
    # what optillm's server module imports (the approaches below import nothing more), pinned as installed
    # and checked here; the full dependency set (253 packages, torch with CUDA libraries, spacy, gradio, ...)
    # serves only plugins these rows do not use
    "Flask==3.1.3",
    "cerebras_cloud_sdk==1.91.0",
    "openai==3.63.0",
    "numpy==2.4.6",
    "networkx==3.6.1",
    "z3-solver==4.15.4.0",
    "sympy==1.14.0",
    "math-verify==0.9.0",
    "aiohttp==3.14.5",
    "PyYAML==6.0.4",
)
DEFAULT_VENV = Path("/opt/optillm-venv")
DEFAULT_PORT = 8377
DEFAULT_MODEL = "qwen2.5-coder-0.5b"
DEFAULT_LOGS = Path.home() / ".cache" / "memdoor" / "optillm"


def parse_model(name: str) -> str:
    """A catalog model (its GGUF is what the engine serves); UsageError otherwise."""
    if name not in CATALOG:
        raise UsageError(f"unknown model {name!r}: choose one of {', '.join(sorted(CATALOG))}")
    return name


def optillm_rows(approaches: list[str], model: str, port: int) -> list[str]:
    return [f"single@{optillm_spec(a, model, port)}" for a in approaches]


def params_flags(approaches: list[str], model: str) -> list[str]:
    """``--params`` values giving each approach's model the catalog size (compute = 2 × size × tokens)."""
    size = get_entry(model).parameters
    return [f"{a}-{model}={number(size)}" for a in approaches]


DEFAULT_MEMDOOR_ROWS = (
    "parallel:3,hybrid:3[inputs=0,repair_when=none_pass,repairer=strong,repair_prompt=explain],adaptive:5"
)


@dataclass
class BenchPlan:
    """One ``memdoor bench`` command: suite, rows, flags."""

    suite: str
    strategies: list[str]
    baselines: list[str]
    flags: list[str] = field(default_factory=list)
    out: str = ""

    def argv(self) -> list[str]:
        argv = ["memdoor", "bench", self.suite, "--strategies", ",".join(self.strategies)]
        for baseline in self.baselines:
            argv += ["--baseline", baseline]
        return [*argv, *self.flags, "--out", self.out]


def plan_new(args: argparse.Namespace, approaches: list[str]) -> BenchPlan:
    """A new paired run: Memdoor's rows of the model, its ``single`` as baseline, the optillm rows."""
    local = f"local:{args.model}"
    mine = [f"{entry}@{local}" for entry in split_entries(args.memdoor_rows) if entry]
    flags = [f"--params={p}" for p in params_flags(approaches, args.model)]
    flags += [
        "--max-tokens",
        str(args.max_tokens),
        "--seed",
        str(args.seed),
        "--concurrency",
        str(args.concurrency),
    ]
    out = args.out or f"runs/optillm-{args.suite}-{args.model}"
    return BenchPlan(
        args.suite, [*mine, *optillm_rows(approaches, args.model, args.port)], [f"single@{local}"], flags, out
    )


def number(x: float) -> str:
    """``2.4e13`` → ``2.4e+13``: short, and read back as the same float."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def plan_beside(run_dir: Path, args: argparse.Namespace, approaches: list[str]) -> BenchPlan:
    """A stored run's rows and settings (its ``run.json``) with the optillm rows, in a new directory: the
    stored rows replay from its calls (``--calls-from``), only the optillm rows call a model. (The stored
    directory itself cannot take them: ``--params`` is part of what a resumed run must match.)"""
    try:
        config = json.loads((run_dir / "run.json").read_text())["config"]
        rows = config["rows"]
        suite = config["suite"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"--beside {run_dir}: not a bench run directory (run.json: {e})") from None
    stored = {r["name"] for r in rows}
    new = [r for r in optillm_rows(approaches, args.model, args.port) if r not in stored]
    # rows named without a team (``parallel:5``) ran with the run's --model specs: give them the same
    teamless = [r for r in rows if "@" not in r["name"]]
    if any(not r.get("models") for r in teamless):
        raise UsageError(f"--beside {run_dir}: a row named without a team lists no models")
    bare = {tuple(r["models"]) for r in teamless}
    if len(bare) > 1:
        raise UsageError(f"--beside {run_dir}: its rows named without a team ran with different models")
    flags: list[str] = [f"--model={m}" for m in (bare.pop() if bare else ())]
    if config.get("budget_compute") is not None:
        flags += ["--budget-compute", number(config["budget_compute"])]
    if config.get("budget_tokens") is not None:
        flags += ["--budget-tokens", str(config["budget_tokens"])]
    filters = config.get("filters") or {}
    for key in ("difficulty", "limit", "since", "until"):
        value = filters.get(key)
        if value is not None:
            flags += [f"--{key}", ",".join(value) if isinstance(value, list) else str(value)]
    params = [f"{spec}={number(n)}" for spec, n in (config.get("params") or {}).items()]
    params += [p for p in params_flags(approaches, args.model) if p not in params]
    flags += [f"--params={p}" for p in params]
    flags += [
        "--max-tokens",
        str(config.get("max_tokens", args.max_tokens)),
        "--seed",
        str(config.get("seed", 0)),
    ]
    flags += ["--concurrency", str(args.concurrency), "--no-pace", "--calls-from", str(run_dir)]
    return BenchPlan(
        suite,
        [r["name"] for r in rows if not r.get("baseline")] + new,
        [r["name"] for r in rows if r.get("baseline")],
        flags,
        args.out or f"{str(run_dir).rstrip('/')}-optillm",
    )


def plan(args: argparse.Namespace) -> BenchPlan:
    approaches = parse_approaches(args.approaches)
    parse_model(args.model)
    result = plan_beside(Path(args.beside), args, approaches) if args.beside else plan_new(args, approaches)
    result.flags += args.bench_arg
    return result


def rows_text(args: argparse.Namespace) -> str:
    """What ``rows`` and ``serve`` print: the rows, the command, the report."""
    p = plan(args)
    approaches = parse_approaches(args.approaches)
    lines = [
        f"# optillm {OPTILLM_VERSION} in front of {args.model} (Memdoor's engine), metered at {proxy_url(args.port)}",
        "# rows:",
        *optillm_rows(approaches, args.model, args.port),
        "# run while `optillm_rows.py serve` is up with the same --model and --port:",
        shlex.join(p.argv()),
        shlex.join(["memdoor", "report", p.out]),
        f"# whole compute of the optillm rows, failed calls included: optillm_rows.py tally {args.logs}/meter.jsonl",
    ]
    return "\n".join(lines)


def install(venv: Path, python: str) -> None:
    """The proxy's own virtualenv, outside the repository: optillm pinned, without its dependency set, and
    the packages its server imports."""
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--no-deps", f"optillm=={OPTILLM_VERSION}"], check=True)
    subprocess.run([*pip, *PACKAGES], check=True)
    subprocess.run([str(venv / "bin" / "optillm"), "--version"], check=True)


def base_model(name: str | None) -> str | None:
    """``bon-qwen2.5-coder-0.5b`` → ``qwen2.5-coder-0.5b`` when that is a catalog model."""
    if not name:
        return None
    _, _, rest = name.partition("-")
    return rest if rest in CATALOG else None


def tally(lines: list[str]) -> dict[str, dict[str, Any]]:
    """The meter's log → per model name: requests, failures, tokens counted and reported, compute."""
    out: dict[str, dict[str, Any]] = defaultdict(
        lambda: dict.fromkeys(
            (
                "requests",
                "failed",
                "backend_calls",
                "prompt_tokens",
                "completion_tokens",
                "proxy_completion_tokens",
            ),
            0,
        )
    )
    for line in lines:
        if not line.strip():
            continue
        r = json.loads(line)
        t = out[str(r.get("model"))]
        t["requests"] += 1
        t["failed"] += r.get("status") != 200
        t["backend_calls"] += r.get("backend_calls", 0)
        t["prompt_tokens"] += r.get("prompt_tokens", 0)
        t["completion_tokens"] += r.get("completion_tokens", 0)
        proxy = r.get("proxy_usage") or {}
        t["proxy_completion_tokens"] += (
            int(proxy.get("completion_tokens") or 0) if isinstance(proxy, dict) else 0
        )
    for name, t in out.items():
        model = base_model(name)
        size = CATALOG[model].parameters if model else None
        t["compute"] = None if size is None else 2 * size * (t["prompt_tokens"] + t["completion_tokens"])
    return dict(out)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="create the proxy's virtualenv (pinned)")
    inst.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    inst.add_argument("--python", default=sys.executable, help="interpreter of the new virtualenv")
    for name, what in (
        ("rows", "print the rows and the bench command"),
        ("serve", "start the model server, the relay and optillm; print the rows; run until stopped"),
        ("smoke", "start them, send one short request per approach, report, stop"),
    ):
        p = sub.add_parser(name, help=what)
        p.add_argument("--model", default=DEFAULT_MODEL, help=f"catalog model (default {DEFAULT_MODEL})")
        p.add_argument(
            "--approaches", default=",".join(APPROACHES), help="comma-separated (default: all that fit code)"
        )
        p.add_argument(
            "--port",
            type=int,
            default=DEFAULT_PORT,
            help=f"the relay's port, in the rows (default {DEFAULT_PORT})",
        )
        p.add_argument(
            "--logs",
            type=Path,
            default=DEFAULT_LOGS,
            help="the meter's log and optillm's (default %(default)s)",
        )
        p.add_argument("--suite", default="humaneval")
        p.add_argument(
            "--memdoor-rows", default=DEFAULT_MEMDOOR_ROWS, help="Memdoor's rows of the model beside them"
        )
        p.add_argument(
            "--beside", metavar="DIR", help="a stored bench run: its rows (replayed) and the optillm rows"
        )
        p.add_argument(
            "--out", help="the new run's directory (default runs/optillm-SUITE-MODEL, or DIR-optillm)"
        )
        p.add_argument("--max-tokens", type=int, default=512)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--concurrency", type=int, default=2, help="bench --concurrency (problems in flight)")
        p.add_argument(
            "--bench-arg", action="append", default=[], help="one more bench argument (repeatable)"
        )
        if name != "rows":
            p.add_argument("--venv", type=Path, default=DEFAULT_VENV)
            p.add_argument(
                "--slots", type=int, default=4, help="sequences the engine decodes together (n of a request)"
            )
            p.add_argument("--threads", type=int, default=2, help="engine threads")
            p.add_argument("--ctx", type=int, default=4096, help="context tokens per slot")
        if name == "smoke":
            p.add_argument("--smoke-tokens", type=int, default=64, help="max_tokens of each smoke request")
    t = sub.add_parser("tally", help="sum the meter's log per model: tokens the server handled, compute")
    t.add_argument("log", type=Path)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "install":
            install(args.venv, args.python)
        elif args.command == "rows":
            print(rows_text(args))
        elif args.command == "tally":
            try:
                lines = args.log.read_text().splitlines()
            except OSError as e:
                raise UsageError(f"cannot read {args.log}: {e.strerror}") from None
            print(json.dumps(tally(lines), indent=2, sort_keys=True))
        else:
            import optillm_stack  # the engine and the processes: only for serve and smoke

            text = rows_text(args)
            if args.command == "serve":
                optillm_stack.serve(args, text)
            else:
                optillm_stack.smoke(args)
    except (MemdoorError, subprocess.CalledProcessError) as e:
        print(f"optillm_rows: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
