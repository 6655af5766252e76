"""The portable form of a results directory: small, stable text files a run can be committed as and
continued from on another machine.

- ``run.json``: the run record (configuration, problem digest, versions);
- ``results.jsonl``: one line per (problem, row) result — every field but the full trace, solution,
  ledger and verdict blobs (those stay in ``results.sqlite`` and ``traces/``);
- ``calls.jsonl``: one line per model call the run computed (request key, model spec, response), so
  a continued run replays them. Log-probabilities are kept as their mean, the only thing any
  selector reads (``Completion.mean_logprob`` of ``[mean]`` is that mean, exactly).

Lines are appended (and flushed to disk) the moment a result or call is stored, and each file is
rewritten sorted (results by problem then row, calls by key) and deduplicated when the writer closes,
so committed files diff line by line. ``memdoor bench`` with the same command on a directory holding
only these files rebuilds ``results.sqlite`` from them and resumes: nothing computed is lost, nothing
is counted twice (a pair or call key appears once; for a pair stored twice the last line wins).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from memdoor.bench.records import ResultRecord, RunRecord
from memdoor.core.messages import ModelResponse

RUN_JSON = "run.json"
RESULTS_JSONL = "results.jsonl"
CALLS_JSONL = "calls.jsonl"
GITIGNORE = ".gitignore"
IGNORED = (
    "results.sqlite*",
    ".results.sqlite*",
    ".bench.lock",
    "traces/",
    "report.md",
    "report.html",
    "*.png",
)
"""What a results directory's .gitignore leaves out: everything but the portable files."""
BLOBS = {"trace_json", "solution_json", "ledger_json", "verdict_json"}
"""Result fields left out of results.jsonl."""


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def result_line(result: ResultRecord) -> str:
    return _dumps(result.model_dump(mode="json", exclude=BLOBS))


def compact(response: ModelResponse) -> dict:
    """The response with each completion's log-probabilities reduced to their mean."""
    data = response.model_dump(mode="json")
    for doc, completion in zip(data["completions"], response.completions, strict=True):
        mean = completion.mean_logprob
        doc["logprobs"] = None if mean is None else [mean]
    return data


def call_line(key: str, model: str, response: ModelResponse) -> str:
    return _dumps({"key": key, "model": model, "response": compact(response)})


def append(directory: Path, name: str, line: str) -> None:
    """Append one line (a killed process loses at most the line being written: the write is in the kernel's
    hands once it returns). No fsync: the database beside it is the durable record (its own commit is
    synced) and the writer rewrites these files from it on close, so only a machine crash could cost a
    line here, and the database still has it — an fsync per result doubled the store's cost."""
    with open(directory / name, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _lines(path: Path) -> Iterator[dict]:
    """Parsed lines of a JSONL file; a line torn by a kill (not valid JSON) is skipped."""
    if not path.is_file():
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                continue


def read_run(directory: Path) -> RunRecord | None:
    path = directory / RUN_JSON
    return RunRecord.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def read_results(directory: Path) -> dict[tuple[str, str], ResultRecord]:
    """(problem, row) → result; the last line of a pair wins (a retried error is written again)."""
    out = {}
    for doc in _lines(directory / RESULTS_JSONL):
        r = ResultRecord.model_validate(doc)
        out[(r.problem_id, r.row)] = r
    return out


def read_calls(directory: Path) -> dict[str, tuple[str, ModelResponse]]:
    """key → (model spec, response)."""
    return {
        d["key"]: (d["model"], ModelResponse.model_validate(d["response"]))
        for d in _lines(directory / CALLS_JSONL)
    }


def _replace(path: Path, lines: Iterable[str]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_all(
    directory: Path,
    run: RunRecord,
    results: Iterable[ResultRecord],
    calls: Iterable[tuple[str, str, ModelResponse]],
) -> None:
    """Rewrite the portable files sorted and deduplicated (atomically, file by file)."""
    _replace(directory / RUN_JSON, [json.dumps(run.model_dump(mode="json"), sort_keys=True, indent=1)])
    _replace(
        directory / RESULTS_JSONL,
        [result_line(r) for r in sorted(results, key=lambda r: (r.problem_id, r.row))],
    )
    _replace(directory / CALLS_JSONL, [call_line(k, m, r) for k, m, r in sorted(calls, key=lambda c: c[0])])
    ignore = directory / GITIGNORE
    if not ignore.exists():
        _replace(ignore, IGNORED)
